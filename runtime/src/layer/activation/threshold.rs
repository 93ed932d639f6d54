//! Threshold: `0=threshold` (0): `x > threshold ? 1 : 0`.

use crate::error::Result;
use crate::layer::activation::Activation;
use crate::layer::params::ParamDict;

/// A step at `threshold`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Threshold {
    /// Values above it become 1, the others 0.
    pub threshold: f32,
}

impl Activation for Threshold {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        Ok(Threshold {
            threshold: pd.float(0, 0.0),
        })
    }

    fn apply(self, x: f32) -> f32 {
        if x > self.threshold { 1.0 } else { 0.0 }
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (22, [self.threshold, 0.0, 0.0])
    }
}
