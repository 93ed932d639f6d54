//! The error of the VGF module tree: one variant per stage, each carrying that stage's error.

use super::file::reader::ReadError;

/// Everything that can go wrong between a TOSA model and a VGF file, or in reading one.
#[derive(Debug, thiserror::Error)]
pub enum VgfError {
    /// A VGF file that cannot be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// TOSA MLIR text that cannot be parsed.
    #[error(transparent)]
    Mlir(#[from] super::tosa::mlir::ParseError),
    /// A compiled shader whose `implementation_attrs` reflection cannot write.
    #[error(transparent)]
    FromShader(#[from] super::custom_op::FromShaderError),
    /// A TOSA flatbuffer that cannot be read.
    #[error(transparent)]
    Flatbuffer(#[from] super::tosa::flatbuffer::FlatbufferError),
    /// A shader operation's attributes are malformed.
    #[error(transparent)]
    Attr(#[from] super::custom_op::AttrError),
    /// A shader that does not compile or contradicts its attributes, or an ML op with no
    /// lowering.
    #[cfg(feature = "compiler")]
    #[error(transparent)]
    Convert(#[from] super::convert::ConvertError),
}
