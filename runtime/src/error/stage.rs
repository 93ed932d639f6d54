//! Faults of the device stages: opening a device, creating a pipeline, recording a dispatch.

/// Opening a device.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
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
    /// Every matching adapter is a CPU emulation of a GPU (lavapipe, llvmpipe, SwiftShader),
    /// which is never picked unless asked for: fpshader's own CPU path runs models many times
    /// faster (`Net` without a context).
    #[error(
        "no GPU: the only adapters are CPU emulations ({available}); run on the CPU without a \
         context, or ask for one by name (FPSHADER_ADAPTER, ContextOptions::adapter_name) or with \
         ContextOptions::allow_cpu_adapter"
    )]
    OnlyCpuAdapters {
        /// The emulations found.
        available: String,
    },
    /// `request_device` failed.
    #[error("cannot open device: {0}")]
    RequestDevice(#[from] wgpu::RequestDeviceError),
    /// A malformed setting (`FPSHADER_PATH`, `FPSHADER_WAIT_TIMEOUT`, …).
    #[error("{setting}={value}: expected {expected}")]
    Config {
        /// The environment variable or option.
        setting: &'static str,
        /// What it was set to.
        value: String,
        /// What it takes.
        expected: &'static str,
    },
    /// The passthrough path asked for where the adapter cannot take it.
    #[error("the passthrough path needs Vulkan with PASSTHROUGH_SHADERS; {adapter} is {backend:?}")]
    NoPassthrough {
        /// The adapter.
        adapter: String,
        /// Its backend.
        backend: wgpu::Backend,
    },
    /// The device was lost (driver reset, removal, [`wgpu::Device::destroy`]): the context
    /// runs nothing more.
    #[error("the device was lost ({reason})")]
    Lost {
        /// What wgpu said.
        reason: String,
    },
    /// The device did not finish within the context's wait timeout.
    #[error("the device did not finish {what} within {waited:?}")]
    Timeout {
        /// What was waited for.
        what: &'static str,
        /// How long.
        waited: std::time::Duration,
    },
    /// An error wgpu raised outside any error scope (on any thread), reported at the next
    /// wait instead of wgpu's default handler, which panics.
    #[error("wgpu reported: {}", errors.join("; "))]
    Uncaptured {
        /// What wgpu said, error by error (the first 16).
        errors: Vec<String>,
    },
    /// The context's submission thread is gone (it panicked or the context is being dropped).
    #[error("the submission thread ended")]
    SubmitterGone,
    /// A submission or wait that wgpu refused, on a device that is not lost.
    #[error("{what} failed: {message}")]
    Failed {
        /// What was asked of the device.
        what: &'static str,
        /// What wgpu said.
        message: String,
    },
}

/// Creating a pipeline from a shader's variants.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
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
    Create {
        /// The shader.
        shader: String,
        /// The variant tried.
        variant: String,
        /// wgpu's message.
        message: String,
    },
}

/// Recording one dispatch.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    /// A binding the shader declares was not given, or has the wrong kind.
    #[error("binding {binding}: {problem}")]
    Binding {
        /// The binding number.
        binding: u32,
        /// What is wrong.
        problem: String,
    },
    /// A buffer larger than one binding of the device may be.
    #[error(
        "binding {binding}: the buffer has {bytes} bytes; the device binds at most {limit} (max_storage_buffer_binding_size)"
    )]
    BindingTooLarge {
        /// The binding number.
        binding: u32,
        /// The buffer's size.
        bytes: u64,
        /// The device's limit.
        limit: u64,
    },
    /// Push-constant data that does not match the shader's block.
    #[error("push constants: `{shader}` has a {expected}-byte block, {words} words were given")]
    PushConstants {
        /// The shader.
        shader: String,
        /// Its block's size in bytes.
        expected: u32,
        /// Words given.
        words: usize,
    },
    /// A dispatch beyond the device's limits.
    #[error("dispatch of {groups:?} workgroups exceeds the device limit of {limit} per dimension")]
    TooLarge {
        /// Workgroups asked for.
        groups: [u32; 3],
        /// The limit.
        limit: u32,
    },
}

/// Why a module could not be specialized.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecializeError {
    /// A value for a `constant_id` the shader does not have.
    #[error("the shader has no specialization constant with id {0}")]
    UnknownId(u32),
    /// The module fixes its workgroup size itself.
    #[error("the shader fixes its local size ({0:?}); it cannot be set to {1:?}")]
    FixedLocalSize(crate::meta::LocalSize, [u32; 3]),
    /// A zero-sized workgroup.
    #[error("local size {0:?} has a zero dimension")]
    ZeroLocalSize([u32; 3]),
    /// What the host-side rewriting (specialization, the sampler split) does not take.
    #[error("cannot rewrite {op} on the host: {problem}")]
    Unsupported {
        /// The operation (its opcode's name, or the id of what it reads).
        op: String,
        /// What of it this evaluator does not take.
        problem: &'static str,
    },
    /// The module is not what its reflection says.
    #[error("malformed SPIR-V: {what} (at {at})")]
    Malformed {
        /// What is wrong.
        what: &'static str,
        /// Where: a word offset, an operand index or an id, as `what` says.
        at: usize,
    },
    /// The words are not a module that can be walked.
    #[error("malformed SPIR-V: {0}")]
    Spirv(#[from] fpshader_build::spv::SpvError),
}
