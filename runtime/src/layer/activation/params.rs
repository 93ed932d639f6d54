//! Parameters several activations read alike: Exp's, Log's and Power's `base, scale, shift`,
//! and the hard sigmoid gate HardSigmoid is and HardSwish multiplies by.

use crate::layer::params::ParamDict;

/// `0=base 1=scale 2=shift` (defaults `base`, 1, 0): Exp's and Log's base (-1: e), Power's
/// exponent.
pub(crate) fn base_scale_shift(pd: &ParamDict, base: f32) -> [f32; 3] {
    [pd.float(0, base), pd.float(1, 1.0), pd.float(2, 0.0)]
}

/// `clamp(x * alpha + beta, 0, 1)` with `0=alpha 1=beta` (defaults 0.2, 0.5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HardGate {
    /// Slope.
    pub alpha: f32,
    /// Offset.
    pub beta: f32,
}

impl Default for HardGate {
    fn default() -> Self {
        HardGate {
            alpha: 0.2,
            beta: 0.5,
        }
    }
}

impl HardGate {
    /// The gate the params give.
    pub fn from_params(pd: &ParamDict) -> HardGate {
        HardGate {
            alpha: pd.float(0, 0.2),
            beta: pd.float(1, 0.5),
        }
    }

    /// The gate at `x`.
    pub fn at(self, x: f32) -> f32 {
        (x * self.alpha + self.beta).clamp(0.0, 1.0)
    }
}
