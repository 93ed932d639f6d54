//! InstanceNorm: `0=channels 1=eps 2=affine`; weights gamma and beta (`channels` each). Each
//! channel (ncnn's: a 1-D or 2-D blob is one) normalized, then scaled and shifted.

use crate::error::{InputError, Result};
use crate::layer::norm::norm_rule::{NormPlan, NormRule, affine_len, channels};
use crate::layer::params::ParamDict;
use crate::layer::shared::groups::{AffineIndex, Groups, Norm};

/// Instance normalization.
#[derive(Default)]
pub struct InstanceNorm {
    channels: usize,
    eps: f32,
    affine: bool,
}

impl NormRule for InstanceNorm {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        let affine = pd.int(2, 1) != 0;
        Ok(InstanceNorm {
            channels: affine_len(0, pd.int(0, 0), affine)?,
            eps: pd.float(1, 0.001),
            affine,
        })
    }

    fn weights(&self) -> (usize, bool) {
        (if self.affine { self.channels } else { 0 }, true)
    }

    fn eps(&self) -> f32 {
        self.eps
    }

    fn norm(&self) -> Norm {
        Norm::MeanVar
    }

    fn plan(&self, np: &[usize]) -> Result<NormPlan> {
        let (c, size) = channels(np);
        if self.affine && c != self.channels {
            return Err(InputError::Values {
                what: "channels",
                got: c,
                expected: self.channels,
            }
            .into());
        }
        Ok(NormPlan {
            groups: Groups::runs(c * size, size),
            index: AffineIndex::PER_GROUP,
            out: np.to_vec(),
        })
    }
}
