//! HardSigmoid: `0=alpha 1=beta` (defaults 0.2, 0.5): `clamp(x * alpha + beta, 0, 1)`.

use crate::error::Result;
use crate::layer::activation::Activation;
use crate::layer::activation::params::HardGate;
use crate::layer::params::ParamDict;

/// HardSigmoid: the gate itself.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HardSigmoid(pub HardGate);

impl Activation for HardSigmoid {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        Ok(HardSigmoid(HardGate::from_params(pd)))
    }

    fn apply(self, x: f32) -> f32 {
        self.0.at(x)
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (7, [self.0.alpha, self.0.beta, 0.0])
    }
}
