//! Dropout: `0=scale` (default 1): at inference a scale, `x * scale`.

use crate::error::Result;
use crate::layer::activation::Activation;
use crate::layer::params::ParamDict;

use crate::layer::activation::map_inplace;
use crate::tensor::Mat;

/// Dropout at inference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dropout {
    /// The factor.
    pub scale: f32,
}

impl Default for Dropout {
    fn default() -> Self {
        Dropout { scale: 1.0 }
    }
}

impl Activation for Dropout {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        Ok(Dropout {
            scale: pd.float(0, 1.0),
        })
    }

    fn apply(self, x: f32) -> f32 {
        x * self.scale
    }

    fn shader_op(self) -> (i32, [f32; 3]) {
        (0, [self.scale, 0.0, 0.0])
    }

    fn forward_cpu(self, blob: &mut Mat) {
        let scale = self.scale;
        map_inplace(blob, move |x| x * scale);
    }
}
