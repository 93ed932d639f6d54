//! Softplus: `ln(e^x + 1)`.

use crate::layer::activation::Activation;

/// Softplus.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Softplus;

impl Activation for Softplus {
    fn apply(self, x: f32) -> f32 {
        x.exp().ln_1p()
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (15, [0.0; 3])
    }
}
