//! HardSwish: `0=alpha 1=beta` (defaults 0.2, 0.5): `x * clamp(x * alpha + beta, 0, 1)`, the
//! input times the gate HardSigmoid is.

use crate::error::Result;
use crate::layer::activation::Activation;
use crate::layer::activation::params::HardGate;
use crate::layer::epilogue::FusedActivation;
use crate::layer::params::ParamDict;

/// HardSwish: `x` times its gate.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HardSwish(pub HardGate);

impl Activation for HardSwish {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        Ok(HardSwish(HardGate::from_params(pd)))
    }

    fn apply(self, x: f32) -> f32 {
        x * self.0.at(x)
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (6, [self.0.alpha, self.0.beta, 0.0])
    }

    fn fused(self) -> Option<FusedActivation> {
        Some(FusedActivation::new(6, [self.0.alpha, self.0.beta]))
    }
}
