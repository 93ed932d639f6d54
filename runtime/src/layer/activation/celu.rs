//! CELU: `0=alpha` (1): `x < 0 ? alpha * (e^(x / alpha) - 1) : x`.

use crate::error::Result;
use crate::layer::activation::Activation;
use crate::layer::params::ParamDict;

/// The continuously differentiable exponential linear unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CELU {
    /// Scale of the negative side, and of its input.
    pub alpha: f32,
}

impl Default for CELU {
    fn default() -> Self {
        CELU { alpha: 1.0 }
    }
}

impl Activation for CELU {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        Ok(CELU {
            alpha: pd.float(0, 1.0),
        })
    }

    fn apply(self, x: f32) -> f32 {
        // as ncnn: e^(x / alpha) - 1, not exp_m1 (the two differ in the last bits near 0)
        if x < 0.0 {
            ((x / self.alpha).exp() - 1.0) * self.alpha
        } else {
            x
        }
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (24, [self.alpha, 0.0, 0.0])
    }
}
