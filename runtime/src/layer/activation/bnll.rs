//! BNLL: `x > 0 ? x + ln(1 + e^-x) : ln(1 + e^x)` (softplus without overflow).

use crate::layer::activation::Activation;

/// The binomial normal log likelihood.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BNLL;

impl Activation for BNLL {
    fn apply(self, x: f32) -> f32 {
        if x > 0.0 {
            x + (-x).exp().ln_1p()
        } else {
            x.exp().ln_1p()
        }
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (21, [0.0; 3])
    }
}
