//! The device: adapter and context, the options it allows, variant choice and specialization,
//! pipelines, and recording dispatches. Knows nothing of tensors or layers.

mod buffers;
#[cfg(feature = "runtime-compile")]
mod compile;
pub(crate) mod context;
pub(crate) mod dump;
mod faults;
pub(crate) mod health;
pub(crate) mod matrix2;
pub(crate) mod options;
pub(crate) mod pipeline;
pub(crate) mod pool;
pub(crate) mod recorder;
pub mod samplers;
pub(crate) mod smod;
pub mod specialize;
pub(crate) mod stats;
pub(crate) mod submitter;
pub(crate) mod tickets;
pub(crate) mod timing;
pub(crate) mod variant;
mod vulkan_caps;

pub use context::{Context, ContextOptions, ShaderPath, required_wgpu_features};
pub use health::{DEFAULT_SPIN_WAIT, DEFAULT_WAIT_TIMEOUT};
pub use options::Options;
pub use pipeline::Pipeline;
pub use pool::{DeviceBuffer, MemoryStats};
pub use recorder::{Recorder, Resource};
pub use stats::SubmissionStats;
pub use timing::DispatchTime;
