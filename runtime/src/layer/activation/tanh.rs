//! TanH: `tanh(x)`.

use crate::layer::activation::Activation;

/// The hyperbolic tangent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TanH;

impl Activation for TanH {
    fn apply(self, x: f32) -> f32 {
        x.tanh()
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (3, [0.0; 3])
    }
}
