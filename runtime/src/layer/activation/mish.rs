//! Mish: `x * tanh(ln(1 + e^x))`.

use crate::layer::activation::Activation;
use crate::layer::epilogue::FusedActivation;

/// Mish.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Mish;

impl Activation for Mish {
    fn apply(self, x: f32) -> f32 {
        x * x.exp().ln_1p().tanh()
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (14, [0.0; 3])
    }

    fn fused(self) -> Option<FusedActivation> {
        Some(FusedActivation::new(5, [0.0; 2]))
    }
}
