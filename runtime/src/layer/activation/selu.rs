//! SELU: `0=alpha` (1.67326324) `1=lambda` (1.050700987):
//! `x < 0 ? (e^x - 1) * alpha * lambda : x * lambda`.

use crate::error::Result;
use crate::layer::activation::Activation;
use crate::layer::params::ParamDict;

/// The scaled exponential linear unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SELU {
    /// Scale of the negative side before `lambda`.
    pub alpha: f32,
    /// Scale of both sides.
    pub lambda: f32,
}

impl Default for SELU {
    fn default() -> Self {
        SELU {
            alpha: 1.673_263_2,
            lambda: 1.050_701,
        }
    }
}

impl Activation for SELU {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        let d = SELU::default();
        Ok(SELU {
            alpha: pd.float(0, d.alpha),
            lambda: pd.float(1, d.lambda),
        })
    }

    fn apply(self, x: f32) -> f32 {
        if x < 0.0 {
            x.exp_m1() * (self.alpha * self.lambda)
        } else {
            x * self.lambda
        }
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (13, [self.alpha, self.lambda, 0.0])
    }
}
