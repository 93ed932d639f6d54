//! Log: `0=base` (-1: e) `1=scale` (1) `2=shift` (0): `log_base(shift + x * scale)`.

use crate::error::Result;
use crate::layer::activation::Activation;
use crate::layer::activation::params::base_scale_shift;
use crate::layer::params::ParamDict;

/// The logarithm of an affine function of `x`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Log {
    /// The base; -1 means e.
    pub base: f32,
    /// Scale of `x`.
    pub scale: f32,
    /// Added after scaling.
    pub shift: f32,
}

impl Default for Log {
    fn default() -> Self {
        Log {
            base: -1.0,
            scale: 1.0,
            shift: 0.0,
        }
    }
}

impl Activation for Log {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        let [base, scale, shift] = base_scale_shift(pd, -1.0);
        Ok(Log { base, scale, shift })
    }

    fn apply(self, x: f32) -> f32 {
        let y = (self.shift + x * self.scale).ln();
        if self.base == -1.0 {
            y
        } else {
            y * (1.0 / self.base.ln())
        }
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (18, [self.base, self.scale, self.shift])
    }
}
