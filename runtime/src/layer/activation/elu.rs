//! ELU: `0=alpha` (0.1): `x < 0 ? alpha * (e^x - 1) : x`.

use crate::error::Result;
use crate::layer::activation::Activation;
use crate::layer::params::ParamDict;

/// The exponential linear unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ELU {
    /// Scale of the negative side.
    pub alpha: f32,
}

impl Default for ELU {
    fn default() -> Self {
        ELU { alpha: 0.1 }
    }
}

impl Activation for ELU {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        Ok(ELU {
            alpha: pd.float(0, 0.1),
        })
    }

    fn apply(self, x: f32) -> f32 {
        if x < 0.0 { self.alpha * x.exp_m1() } else { x }
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (12, [self.alpha, 0.0, 0.0])
    }
}
