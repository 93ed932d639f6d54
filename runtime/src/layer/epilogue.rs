//! What the net may fold into a layer's epilogue on the device: the activation layer after
//! it, where the blob between them has no other reader ([`Layer::gpu_activation`],
//! [`Layer::forward_gpu_activated`]); the residual sum after a convolution, and the activation
//! after that ([`Layer::gpu_residual_sum`], [`Layer::forward_gpu_residual`]).
//!
//! [`Layer::gpu_activation`]: crate::layer::Layer::gpu_activation
//! [`Layer::forward_gpu_activated`]: crate::layer::Layer::forward_gpu_activated
//! [`Layer::gpu_residual_sum`]: crate::layer::Layer::gpu_residual_sum
//! [`Layer::forward_gpu_residual`]: crate::layer::Layer::forward_gpu_residual

use crate::tensor::GpuMat;

/// An activation in a layer's epilogue on the device: ncnn's `activation_type` (0–6, or
/// [`FusedActivation::SWISH`], which only the net fuses: no ncnn layer has it) and its two
/// parameters, as the shaders' specialization constants 1–3 take them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FusedActivation {
    /// The type.
    pub kind: i32,
    /// Its parameters (leaky ReLU's slope; clip's bounds; hard swish's alpha and beta).
    pub params: [f32; 2],
}

impl FusedActivation {
    /// Swish, `x · sigmoid(x)`: vulkan_activation.comp's type 7.
    pub const SWISH: i32 = 7;

    /// Type `kind` with `params`.
    pub fn new(kind: i32, params: [f32; 2]) -> FusedActivation {
        FusedActivation { kind, params }
    }
}

/// What a layer's epilogue applies beyond its own bias and activation, as the net fused it: a
/// residual added to each output value, then an activation in place of the layer's own.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Epilogue<'a> {
    /// The activation after (the residual sum, where there is one).
    pub act: Option<FusedActivation>,
    /// The blob added, of the output's shape and layout.
    pub residual: Option<&'a GpuMat>,
}

impl Epilogue<'_> {
    /// The activation alone.
    pub(crate) fn activation(act: Option<FusedActivation>) -> Epilogue<'static> {
        Epilogue {
            act,
            residual: None,
        }
    }
}
