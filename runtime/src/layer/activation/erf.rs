//! Erf: the error function.

use crate::layer::activation::Activation;

/// The error function.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Erf;

impl Activation for Erf {
    fn apply(self, x: f32) -> f32 {
        libm::erff(x)
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (16, [0.0; 3])
    }
}
