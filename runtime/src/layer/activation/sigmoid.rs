//! Sigmoid: `1 / (1 + e^-x)`.

use crate::layer::activation::Activation;
use crate::layer::epilogue::FusedActivation;

use crate::layer::activation::map_inplace;
use crate::layer::shared::kernels;
use crate::tensor::Mat;

/// The logistic function.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sigmoid;

impl Activation for Sigmoid {
    fn apply(self, x: f32) -> f32 {
        1.0 / (1.0 + (-x).exp())
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (2, [0.0; 3])
    }

    fn fused(self) -> Option<FusedActivation> {
        Some(FusedActivation::new(4, [0.0; 2]))
    }

    fn forward_cpu(self, blob: &mut Mat) {
        map_inplace(blob, kernels::sigmoid);
    }
}
