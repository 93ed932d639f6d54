//! Power: `0=power` (1) `1=scale` (1) `2=shift` (0): `(shift + x * scale) ^ power`.

use crate::error::Result;
use crate::layer::activation::Activation;
use crate::layer::activation::params::base_scale_shift;
use crate::layer::params::ParamDict;

/// A power of an affine function of `x`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Power {
    /// The exponent.
    pub power: f32,
    /// Scale of `x`.
    pub scale: f32,
    /// Added after scaling.
    pub shift: f32,
}

impl Default for Power {
    fn default() -> Self {
        Power {
            power: 1.0,
            scale: 1.0,
            shift: 0.0,
        }
    }
}

impl Activation for Power {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        let [power, scale, shift] = base_scale_shift(pd, 1.0);
        Ok(Power {
            power,
            scale,
            shift,
        })
    }

    fn apply(self, x: f32) -> f32 {
        (self.shift + x * self.scale).powf(self.power)
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (19, [self.power, self.scale, self.shift])
    }
}
