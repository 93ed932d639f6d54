//! Faults of the device stages: opening a device, creating a pipeline, recording a dispatch.

use crate::gpu::specialize::SpecializeError;

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
    RequestDevice(String),
    /// A malformed `FPSHADER_PATH` or similar setting.
    #[error("{0}")]
    Config(String),
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
    #[error("wgpu reported: {0}")]
    Uncaptured(String),
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
    #[error("push constants: {0}")]
    PushConstants(String),
    /// A dispatch beyond the device's limits.
    #[error("dispatch of {groups:?} workgroups exceeds the device limit of {limit} per dimension")]
    TooLarge {
        /// Workgroups asked for.
        groups: [u32; 3],
        /// The limit.
        limit: u32,
    },
}
