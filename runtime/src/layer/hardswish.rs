//! HardSwish: `0=alpha 1=beta` (defaults 0.2, 0.5): `x * clamp(x * alpha + beta, 0, 1)`.

use crate::layer::activation::Activation;
use crate::layer::params::ParamDict;

/// HardSwish with its slope and offset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HardSwish {
    /// Slope.
    pub alpha: f32,
    /// Offset.
    pub beta: f32,
}

impl Default for HardSwish {
    fn default() -> Self {
        HardSwish {
            alpha: 0.2,
            beta: 0.5,
        }
    }
}

impl Activation for HardSwish {
    fn from_params(pd: &ParamDict) -> Self {
        HardSwish {
            alpha: pd.float(0, 0.2),
            beta: pd.float(1, 0.5),
        }
    }

    fn apply(self, x: f32) -> f32 {
        x * (x * self.alpha + self.beta).clamp(0.0, 1.0)
    }

    fn shader_op(self) -> (i32, f32, f32) {
        (6, self.alpha, self.beta)
    }
}
