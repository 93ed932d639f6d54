//! `fpshader`: run ncnn models, and GLSL compute shaders written with the ncnn GLSL extension,
//! on any GPU wgpu reaches (Vulkan, Metal, DX12, GL), with a CPU path for machines without one.
//!
//! - [`net::Net`] loads an ncnn model (`.param` text or `.param.bin`, and `.bin` weights) and
//!   runs it as ncnn does: each layer on the GPU where it has a shader for the options, on the
//!   CPU otherwise, layouts and precision converted between them by the net.
//! - [`Context`] is a wgpu device plus what fpshader knows of it: the precision variants it can
//!   run, the shader path (SPIR-V passed through on Vulkan, translated by naga elsewhere).
//! - [`shaders`] holds the built-in layer shaders, compiled ahead in every precision variant and
//!   shipped in this crate as SPIR-V: building it needs no shader compiler and no C++.
//! - `shader!` (feature `shader-macro`) compiles a shader of yours in all its variants at build
//!   time into a [`meta::ShaderModule`]; `fpshader-build` does the same from a build script.
//! - [`vgf`] loads and runs Arm's VGF model files (TOSA graphs with Vulkan compute shaders).
//!
//! # Running a model
//!
//! A net with no [`Context`] runs on the CPU; this one is complete and runs as a doc test:
//!
//! ```
//! use fpshader::Mat;
//! use fpshader::net::Net;
//!
//! let mut net = Net::new();
//! let param = "7767517\n2 2\nInput data 0 1 data\nReLU relu 1 1 data out\n";
//! net.load_param_str("relu.param", param)?;
//! net.load_model_zeros()?; // or load_model("model.bin")
//! let mut ex = net.create_extractor()?;
//! ex.input("data", Mat::from_values(4, 1, 1, &[-1.0, 2.0, -3.0, 4.0])?)?;
//! assert_eq!(ex.extract("out")?.to_values(), [0.0, 2.0, 0.0, 4.0]);
//! # Ok::<(), fpshader::Error>(())
//! ```
//!
//! On a GPU, give the net a context before loading. [`Context::new`] picks a real GPU; an
//! adapter that emulates one on the CPU (lavapipe, llvmpipe, SwiftShader) is taken only when
//! asked for by name or with [`ContextOptions::allow_cpu_adapter`], since the CPU path is
//! faster than an emulated GPU:
//!
//! ```no_run
//! use std::sync::Arc;
//! use fpshader::{Context, ContextOptions, Mat};
//! use fpshader::net::Net;
//!
//! let mut net = Net::new();
//! match Context::new(ContextOptions::default()) {
//!     Ok(ctx) => net.set_context(Arc::new(ctx)),
//!     Err(e) => eprintln!("no GPU ({e}); running on the CPU"),
//! }
//! net.load_param("squeezenet.param")?;
//! net.load_model("squeezenet.bin")?;
//! let mut ex = net.create_extractor()?;
//! ex.input("data", Mat::from_values(227, 227, 3, &vec![0.5; 227 * 227 * 3])?)?;
//! let prob = ex.extract("prob")?;
//! # Ok::<(), fpshader::Error>(())
//! ```
//!
//! [`net::Net::opt`] holds ncnn's options (fp16 storage and arithmetic, packing, images,
//! threads); by default everything the device allows, as in ncnn.
//!
//! On the device the net runs an activation layer in the dispatch of the layer before it, and
//! a residual sum (Eltwise's plain sum, BinaryOp's add) with the activation after it in the
//! convolution before it, where nothing else reads the blobs between and none of them is the
//! one extracted ([`net::Placed::Fused`] in the extractor's record); extracting such a blob
//! runs its layer unfused. An int8 model's requantized blobs between int8 convolutions stay int8 on the
//! device ([`StorageFormat::Int8`]); extracted, any blob comes back as its values.
//!
//! # Feature flags
//!
//! - `cli` (default): the `fpshader` command-line tool (`run`, `bench`, `upscale`).
//! - `shader-macro`: `fpshader::shader!`, which compiles your shaders at build time. It brings
//!   in shaderc, whose glslang C++ is built with cmake and a C++ compiler.
//! - `runtime-compile`: compile GLSL with the extension at run time (ncnn's
//!   `compile_spirv_module` from a string); also brings in shaderc.
//!
//! Without `shader-macro` and `runtime-compile` the crate and all its dependencies are Rust.

// generated code names this crate `::fpshader`, also from inside it
extern crate self as fpshader;

pub use fpshader_build::meta;
pub use fpshader_build::{Opt, OptionSet};
#[cfg(feature = "shader-macro")]
pub use fpshader_macro::shader;

mod error;
pub mod gpu;
pub mod host;
pub mod layer;
pub mod net;
pub mod tensor;
pub mod vgf;

pub use error::{
    DeviceError, DispatchError, Error, InputError, Memory, ModelError, PipelineError, Result,
    TensorError, report,
};
pub use gpu::{
    Context, ContextOptions, DispatchTime, MemoryStats, Options, Pipeline, Recorder, Resource,
    ShaderPath, required_wgpu_features, samplers, specialize,
};
pub use tensor::{ElemType, GpuData, GpuMat, Mat, MatData, PendingDownload, StorageFormat};
pub use wgpu;

/// The built-in layer shaders (`shaders/` of the repository), compiled ahead in every variant and
/// shipped as SPIR-V with their reflection (`builtin/`, made by `cargo xtask shaders`): one
/// `static` per shader, [`shaders::SHADERS`] and the index enum [`shaders::Shader`].
pub mod shaders {
    include!("../builtin/shaders.rs");
}
