//! The runtime's error type.

use crate::gpu::specialize::SpecializeError;

/// Everything that can go wrong between a compiled variant and its results.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No adapter matched the backends and name filter.
    #[error(
        "no GPU adapter found (backends {backends}, name filter {filter:?}); available: {available}"
    )]
    NoAdapter {
        /// The backends searched.
        backends: String,
        /// The adapter-name filter, if any.
        filter: Option<String>,
        /// Adapters that exist but did not match.
        available: String,
    },
    /// `request_device` failed.
    #[error("cannot open device: {0}")]
    RequestDevice(String),
    /// A malformed `FPSHADER_PATH` or similar setting.
    #[error("{0}")]
    Config(String),
    /// No compiled variant fits the device and the options.
    #[error(
        "no variant of `{shader}` fits: compiled {compiled}; device and options allow {allowed}, device features {features}"
    )]
    NoVariant {
        /// The shader.
        shader: String,
        /// The variants it has.
        compiled: String,
        /// The options allowed.
        allowed: String,
        /// What the device offers.
        features: String,
    },
    /// A shader compiled at run time did not compile.
    #[error(transparent)]
    Compile(#[from] fpshader_build::Error),
    /// Specialization failed.
    #[error(transparent)]
    Specialize(#[from] SpecializeError),
    /// wgpu refused the shader module or pipeline.
    #[error("cannot create pipeline for `{shader}` ({variant}): {message}")]
    Pipeline {
        /// The shader.
        shader: String,
        /// The variant tried.
        variant: String,
        /// wgpu's message.
        message: String,
    },
    /// A binding the shader declares was not given, or has the wrong kind.
    #[error("binding {binding}: {problem}")]
    Binding {
        /// The binding number.
        binding: u32,
        /// What is wrong.
        problem: String,
    },
    /// Push-constant data that does not match the shader's block.
    #[error("push constants: {0}")]
    PushConstants(String),
    /// A dispatch beyond the device's limits.
    #[error("dispatch of {groups:?} workgroups exceeds the device limit of {limit} per dimension")]
    DispatchTooLarge {
        /// Workgroups asked for.
        groups: [u32; 3],
        /// The limit.
        limit: u32,
    },
    /// Tensor shapes or sizes that do not fit together.
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// A malformed `.param` model (text: `line` is 1-based; binary: the byte offset).
    #[error("{file}: {location}: {message}")]
    Param {
        /// The file (or `<bytes>`).
        file: String,
        /// `line N` or `byte N`.
        location: String,
        /// What is wrong.
        message: String,
    },
    /// Weights (`.bin`) that do not fit what a layer needs.
    #[error("weights of layer `{layer}` at byte {offset}: {message}")]
    Weights {
        /// The layer reading them.
        layer: String,
        /// Where in the weight data.
        offset: usize,
        /// What is wrong.
        message: String,
    },
    /// An error of one layer of a net, with the layer it came from (the net wraps what a
    /// layer's methods return).
    #[error("layer `{layer}` ({kind}): {source}")]
    Layer {
        /// The layer's name.
        layer: String,
        /// Its type.
        kind: String,
        /// What went wrong there.
        source: Box<Error>,
    },
    /// A layer parameter out of its range (ncnn's param id, the value, what is allowed).
    #[error("param {id} = {value}: {allowed}")]
    BadParam {
        /// ncnn's parameter id.
        id: u32,
        /// The value given.
        value: String,
        /// What the layer takes.
        allowed: &'static str,
    },
    /// A layer given another number of inputs than it takes.
    #[error("{got} inputs, {expected}")]
    Inputs {
        /// How many came.
        got: usize,
        /// How many it takes.
        expected: &'static str,
    },
    /// An axis a blob does not have.
    #[error("axis {axis} of a {dims}-D blob")]
    Axis {
        /// The axis asked for (negative counts from the end).
        axis: i32,
        /// The blob's dims.
        dims: usize,
    },
    /// A GPU mat of an elempack the layer's shader family has no shader for (the net gives
    /// only what `Support::vulkan_packs` allows: a layer asking for another is a bug).
    #[error("no shader for elempack {elempack}")]
    NoShader {
        /// The mat's elempack.
        elempack: usize,
    },
    /// A GPU forward of a layer whose `create_pipeline` had no device.
    #[error("the GPU forward ran, but create_pipeline had no device")]
    NoDevice,
    /// A forward method the layer does not implement (the trait's default).
    #[error("{method} is not implemented")]
    NotImplemented {
        /// The method.
        method: &'static str,
    },
    /// A VGF file that cannot be read.
    #[error(transparent)]
    VgfRead(#[from] fpshader_build::vgf::ReadError),
    /// A VGF model this runtime cannot run, or inputs that do not fit it.
    #[error("VGF {what}: {problem}")]
    Vgf {
        /// The segment, module or input concerned.
        what: String,
        /// Why.
        problem: String,
    },
    /// A layer claims a support flag whose forward method it does not implement (checked
    /// when the model loads).
    #[error("layer `{layer}` ({kind}) claims `{flag}` but does not implement {method}")]
    Unimplemented {
        /// The layer's name.
        layer: String,
        /// Its type.
        kind: String,
        /// The support flag.
        flag: &'static str,
        /// The missing method.
        method: &'static str,
    },
    /// A blob name the net does not have, or an input that was not given.
    #[error("blob: {0}")]
    Blob(String),
    /// Something wgpu reported while running or reading back.
    #[error("GPU: {0}")]
    Gpu(String),
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
