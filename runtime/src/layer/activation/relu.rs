//! ReLU: `0=slope` (leaky when non-zero): `x < 0 ? x * slope : x`.

use crate::error::Result;
use crate::layer::activation::Activation;
use crate::layer::epilogue::FusedActivation;
use crate::layer::params::ParamDict;

use crate::layer::activation::fused::leaky;
use crate::layer::activation::map_inplace;
use crate::tensor::Mat;

/// ReLU with its negative slope.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReLU {
    /// Negative slope.
    pub slope: f32,
}

impl Activation for ReLU {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        Ok(ReLU {
            slope: pd.float(0, 0.0),
        })
    }

    fn apply(self, x: f32) -> f32 {
        leaky(x, self.slope)
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (1, [self.slope, 0.0, 0.0])
    }

    fn fused(self) -> Option<FusedActivation> {
        Some(match self.slope {
            0.0 => FusedActivation::new(1, [0.0; 2]),
            s => FusedActivation::new(2, [s, 0.0]),
        })
    }

    fn forward_cpu(self, blob: &mut Mat) {
        let slope = self.slope;
        map_inplace(blob, move |x| leaky(x, slope));
    }
}
