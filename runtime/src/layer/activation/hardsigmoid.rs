//! HardSigmoid: `0=alpha 1=beta` (defaults 0.2, 0.5): `clamp(x * alpha + beta, 0, 1)`.

use crate::error::Result;
use crate::layer::activation::Activation;
use crate::layer::params::ParamDict;

/// HardSigmoid with its slope and offset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HardSigmoid {
    /// Slope.
    pub alpha: f32,
    /// Offset.
    pub beta: f32,
}

impl Default for HardSigmoid {
    fn default() -> Self {
        HardSigmoid {
            alpha: 0.2,
            beta: 0.5,
        }
    }
}

impl Activation for HardSigmoid {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        Ok(HardSigmoid {
            alpha: pd.float(0, 0.2),
            beta: pd.float(1, 0.5),
        })
    }

    fn apply(self, x: f32) -> f32 {
        (x * self.alpha + self.beta).clamp(0.0, 1.0)
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (7, [self.alpha, self.beta, 0.0])
    }
}
