//! Noop: the identity.

use crate::layer::activation::Activation;

use crate::tensor::Mat;

/// The identity.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Noop;

impl Activation for Noop {
    fn apply(self, x: f32) -> f32 {
        x
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (0, [1.0, 0.0, 0.0])
    }

    fn forward_cpu(self, _blob: &mut Mat) {}
}
