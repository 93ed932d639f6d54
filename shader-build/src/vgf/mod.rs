//! VGF: Arm's container for ML models made of compute shaders and data graphs, and the
//! conversion of TOSA models with `com.arm.VulkanCustomShader` operations into it.
//!
//! Only the stages that compile shaders ([`materialize`], [`convert`]) need the `compiler`
//! feature; the rest is shared with the runtime, which executes what the [`reader`](file::reader) returns
//! (graph segments through [`tosa::spirv`] and [`lower`]). The conversion runs in stages, one
//! module each: [`tosa`] parses the model, [`custom_op`] validates the shader operations'
//! attributes (and writes them for a compiled shader), [`partition`] splits the graph,
//! [`materialize`] compiles the shaders ahead of time, [`lower`] turns ML operations into
//! compute shaders for `--compute-only`, [`convert`] assembles the [`Vgf`], and [`scenario`]
//! writes a scenario file for Arm's scenario runner.

#[cfg(feature = "compiler")]
pub mod convert;
pub mod custom_op;
mod error;
pub mod file;
mod flatbuf;
pub mod lower;
#[cfg(feature = "compiler")]
pub mod materialize;
pub mod partition;
pub mod scenario;
pub mod sets;
pub mod tensors;
pub mod tosa;

pub use error::VgfError;
pub use file::format::*;
pub use file::reader::{ReadError, read};
pub use file::writer::write;
