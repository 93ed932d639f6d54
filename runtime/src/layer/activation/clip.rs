//! Clip: `0=min 1=max`: `clamp(x, min, max)`.

use crate::error::Result;
use crate::layer::activation::Activation;
use crate::layer::epilogue::FusedActivation;
use crate::layer::params::ParamDict;

use crate::layer::activation::map_inplace;
use crate::tensor::Mat;

/// Clamping to `[min, max]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clip {
    /// Lower bound.
    pub min: f32,
    /// Upper bound.
    pub max: f32,
}

impl Default for Clip {
    fn default() -> Self {
        Clip {
            min: -f32::MAX,
            max: f32::MAX,
        }
    }
}

impl Activation for Clip {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        Ok(Clip {
            min: pd.float(0, -f32::MAX),
            max: pd.float(1, f32::MAX),
        })
    }

    fn apply(self, x: f32) -> f32 {
        x.max(self.min).min(self.max)
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (4, [self.min, self.max, 0.0])
    }

    fn fused(self) -> Option<FusedActivation> {
        Some(FusedActivation::new(3, [self.min, self.max]))
    }

    fn forward_cpu(self, blob: &mut Mat) {
        let Clip { min, max } = self;
        map_inplace(blob, move |x| x.max(min).min(max));
    }
}
