//! VGF: Arm's container for ML models made of compute shaders and data graphs, and the
//! conversion of TOSA models with `com.arm.VulkanCustomShader` operations into it.
//!
//! The data types ([`format`]), the [`writer`] and the [`reader`] need no compiler and are shared
//! with the runtime, which executes what the reader returns. The conversion (behind the
//! `compiler` feature) runs in stages, one module each: [`tosa`] parses the model,
//! [`custom_op`] validates the shader operations' attributes, [`partition`] splits the graph,
//! [`materialize`] compiles the shaders ahead of time (and lowers ML partitions to compute
//! shaders for `--compute-only`), [`convert`] assembles the [`Vgf`], and [`scenario`] writes a
//! scenario file for Arm's scenario runner.

#[cfg(feature = "compiler")]
pub mod convert;
#[cfg(feature = "compiler")]
pub mod custom_op;
#[cfg(feature = "compiler")]
pub mod dump;
mod error;
mod fb;
pub mod format;
pub mod lower;
#[cfg(feature = "compiler")]
pub mod materialize;
#[cfg(feature = "compiler")]
pub mod partition;
pub mod reader;
#[cfg(feature = "compiler")]
pub mod scenario;
pub mod tosa;
pub mod writer;

pub use error::VgfError;
pub use format::*;
pub use reader::{ReadError, read};
pub use writer::write;
