//! HardSwish: `0=alpha 1=beta` (defaults 0.2, 0.5): `x * clamp(x * alpha + beta, 0, 1)`, the
//! input times HardSigmoid's gate with the same parameters.

use crate::error::Result;
use crate::layer::activation::Activation;
use crate::layer::activation::hardsigmoid::HardSigmoid;
use crate::layer::params::ParamDict;

/// HardSwish: `x` gated by the [`HardSigmoid`] it holds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HardSwish(pub HardSigmoid);

impl Activation for HardSwish {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        HardSigmoid::from_params(pd).map(HardSwish)
    }

    fn apply(self, x: f32) -> f32 {
        x * self.0.apply(x)
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (6, self.0.shader_op().1)
    }
}
