//! The runtime's errors: [`Error`] and the per-stage enums it nests with `#[from]`.

mod blob;
mod expression;
mod input;
mod model;
mod stage;
mod tensor;

pub use blob::BlobError;
pub use expression::ExpressionError;
pub use input::InputError;
pub use model::ModelError;
pub use stage::{DeviceError, DispatchError, PipelineError, SpecializeError};
pub use tensor::TensorError;

/// Everything that can go wrong between a compiled variant and its results: one variant per
/// stage, each an enum of its own carrying the offending values.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Opening a device.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// Creating a pipeline.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// Recording a dispatch.
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    /// A mat, GPU mat or texture that cannot be made, converted or read as asked.
    #[error(transparent)]
    Tensor(#[from] TensorError),
    /// Inputs a layer cannot take.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A model that cannot be loaded.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A shape expression that does not evaluate.
    #[error(transparent)]
    Expression(#[from] ExpressionError),
    /// An error of one layer of a net, with the layer it came from (the net wraps what a
    /// layer's methods return).
    #[error("layer `{layer}` ({kind})")]
    Layer {
        /// The layer's name.
        layer: String,
        /// Its type.
        kind: String,
        /// What went wrong there.
        #[source]
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
    /// A GPU mat of an elempack the layer's shader family has no shader for (the net gives
    /// only what `Support::vulkan_packs` allows: a layer asking for another is a bug).
    #[error("no shader for elempack {elempack}")]
    NoShader {
        /// The mat's elempack.
        elempack: usize,
    },
    /// A GPU step without a device: a layer's GPU forward whose `create_pipeline` had none, or
    /// a net's device work on a net without one.
    #[error("{what} needs a device, and there is none")]
    NoDevice {
        /// What needed it.
        what: &'static str,
    },
    /// A forward that needs data its layer never got (`load_model` or `upload_model` did not
    /// run or had nothing for it).
    #[error("{what} not loaded")]
    NotLoaded {
        /// The data.
        what: &'static str,
    },
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
    /// A graph segment of a VGF file whose SPIR-V graph does not read.
    #[error("VGF {what}: {source}")]
    VgfGraph {
        /// The segment.
        what: String,
        /// What the reader found.
        source: fpshader_build::vgf::tosa::spirv::SpirvGraphError,
    },
    /// A graph segment's operation that has no compute lowering.
    #[error("VGF {what}: {source}")]
    VgfLower {
        /// The segment.
        what: String,
        /// The lowering's error (the op, where, and why).
        source: fpshader_build::vgf::lower::LowerError,
    },
    /// A blob name the net does not have, an input that was not given, a net without a model.
    #[error(transparent)]
    Blob(#[from] BlobError),
    /// A CPU thread pool of the asked size that could not be made.
    #[error("cannot start {threads} CPU threads: {problem}")]
    Threads {
        /// `num_threads`.
        threads: usize,
        /// What the system said.
        problem: String,
    },
    /// Memory that cannot be had: the host's available memory, or the device's budget or
    /// what its driver refused.
    #[error("out of {memory} memory: {needed} bytes needed, {available} available")]
    OutOfMemory {
        /// Which memory.
        memory: Memory,
        /// Bytes asked for.
        needed: u64,
        /// Bytes left (the host's available memory; the device budget less what this
        /// context holds, or 0 where the driver refused without a budget known).
        available: u64,
    },
    /// A buffer or binding larger than a device limit allows.
    #[error("{what} of {bytes} bytes exceeds the device's {limit_name} of {limit}")]
    BeyondLimit {
        /// What was asked for.
        what: &'static str,
        /// Its size.
        bytes: u64,
        /// The limit.
        limit: u64,
        /// wgpu's name of the limit.
        limit_name: &'static str,
    },
    /// A read-back wgpu could not map.
    #[error("cannot read back {what}: {source}")]
    ReadBack {
        /// What was read back.
        what: &'static str,
        /// What wgpu said.
        source: wgpu::BufferAsyncError,
    },
    /// A texture wgpu refused to create (in an error scope).
    #[error("cannot create {what}: a {format:?} texture with {usage:?}: {message}")]
    Texture {
        /// What it was for.
        what: String,
        /// Its format.
        format: wgpu::TextureFormat,
        /// Its usages.
        usage: wgpu::TextureUsages,
        /// What wgpu said.
        message: String,
    },
}

/// Which memory ran out ([`Error::OutOfMemory`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    /// The host's.
    Host,
    /// The device's.
    Device,
}

impl std::fmt::Display for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Memory::Host => "host",
            Memory::Device => "device",
        })
    }
}

impl Error {
    /// Whether this is a limit of the device that the same work on the CPU would not meet: a
    /// buffer past the largest it allocates or binds, its memory, a grid past its workgroups
    /// (the net then runs the layer on the CPU).
    pub fn is_device_limit(&self) -> bool {
        match self {
            Error::BeyondLimit { .. }
            | Error::Dispatch(
                DispatchError::TooLarge { .. } | DispatchError::BindingTooLarge { .. },
            ) => true,
            Error::OutOfMemory { memory, .. } => *memory == Memory::Device,
            Error::Layer { source, .. } => source.is_device_limit(),
            _ => false,
        }
    }

    /// The message with every cause under it (see [`report`]).
    pub fn report(&self) -> String {
        report(self)
    }
}

/// An error's message with every cause under it, joined by `: ` (what the CLI prints): a
/// layer's error names the layer, its cause says what went wrong there.
pub fn report(error: &(dyn std::error::Error + 'static)) -> String {
    let mut out = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        out.push_str(": ");
        out.push_str(&e.to_string());
        cause = e.source();
    }
    out
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<fpshader_build::Error> for Error {
    fn from(e: fpshader_build::Error) -> Self {
        Error::Pipeline(PipelineError::Compile(e))
    }
}

impl From<SpecializeError> for Error {
    fn from(e: SpecializeError) -> Self {
        Error::Pipeline(PipelineError::Specialize(e))
    }
}
