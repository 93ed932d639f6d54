//! `fpshader`: GLSL compute shaders written with the ncnn GLSL extension, compiled at build time
//! into every precision variant, for wgpu.
//!
//! - [`shader!`] compiles a shader of yours in all its variants into a [`meta::ShaderModule`].
//! - [`shaders`] holds the built-in layer shaders, by name and by registry index.

// generated code names this crate `::fpshader`, also from inside it
extern crate self as fpshader;

pub use fpshader_build::meta;
pub use fpshader_build::{Opt, OptionSet};
pub use fpshader_macro::shader;

mod error;
pub mod gpu;
pub mod layer;
pub mod net;
pub mod tensor;
pub mod vgf;

pub use error::{
    DeviceError, DispatchError, Error, InputError, ModelError, PipelineError, Result, TensorError,
    report,
};
pub use gpu::{
    Context, ContextOptions, DispatchTime, MemoryStats, Options, Pipeline, Recorder, Resource,
    ShaderPath, required_wgpu_features, samplers, specialize,
};
pub use tensor::{ElemType, GpuData, GpuMat, Mat, MatData, PendingDownload, StorageFormat};
pub use wgpu;

/// The built-in layer shaders (`shaders/` of the repository), compiled by this crate's build
/// script: one `static` per shader, [`shaders::SHADERS`] and the index enum [`shaders::Shader`].
pub mod shaders {
    include!(concat!(env!("OUT_DIR"), "/fpshader_shaders.rs"));
}
