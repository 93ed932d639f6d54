//! Swish: `x * sigmoid(x)`.

use crate::layer::activation::Activation;
use crate::layer::epilogue::FusedActivation;

use crate::layer::activation::map_inplace;
use crate::layer::shared::kernels;
use crate::tensor::Mat;

/// `x` times its logistic function.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Swish;

impl Activation for Swish {
    fn apply(self, x: f32) -> f32 {
        x / (1.0 + (-x).exp())
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (5, [0.0; 3])
    }

    fn fused(self) -> Option<FusedActivation> {
        Some(FusedActivation::new(FusedActivation::SWISH, [0.0; 2]))
    }

    fn forward_cpu(self, blob: &mut Mat) {
        map_inplace(blob, |x| x * kernels::sigmoid(x));
    }
}
