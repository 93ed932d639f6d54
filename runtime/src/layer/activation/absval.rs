//! AbsVal: `|x|`.

use crate::layer::activation::Activation;

/// The absolute value.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AbsVal;

impl Activation for AbsVal {
    fn apply(self, x: f32) -> f32 {
        x.abs()
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        // UnaryOp's abs
        (32, [0.0; 3])
    }
}
