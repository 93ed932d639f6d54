//! The error of the VGF module tree: one variant per stage, each carrying that stage's error.

use super::reader::ReadError;

/// Everything that can go wrong between a TOSA model and a VGF file, or in reading one.
#[derive(Debug, thiserror::Error)]
pub enum VgfError {
    /// A VGF file that cannot be read.
    #[error(transparent)]
    Read(#[from] ReadError),
}
