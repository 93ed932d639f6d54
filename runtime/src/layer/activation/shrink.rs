//! Shrink: `0=bias` (0) `1=lambd` (0.5): `x < -lambd ? x + bias : x > lambd ? x - bias : 0`.

use crate::error::Result;
use crate::layer::activation::Activation;
use crate::layer::params::ParamDict;

/// Soft (with a bias) or hard shrinkage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shrink {
    /// Moved towards 0 outside the band.
    pub bias: f32,
    /// Half the width of the band that becomes 0.
    pub lambd: f32,
}

impl Default for Shrink {
    fn default() -> Self {
        Shrink {
            bias: 0.0,
            lambd: 0.5,
        }
    }
}

impl Activation for Shrink {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        Ok(Shrink {
            bias: pd.float(0, 0.0),
            lambd: pd.float(1, 0.5),
        })
    }

    fn apply(self, x: f32) -> f32 {
        if x < -self.lambd {
            x + self.bias
        } else if x > self.lambd {
            x - self.bias
        } else {
            0.0
        }
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (23, [self.bias, self.lambd, 0.0])
    }
}
