//! MVN: `0=normalize_variance 1=across_channels 2=eps`. Each channel (or the whole blob
//! across channels) minus its mean, divided by `sqrt(var) + eps` with `normalize_variance`.
//! As in ncnn, 1-D and 2-D blobs come out 3-D (one channel).

use crate::error::Result;
use crate::layer::norm::norm_rule::{NormPlan, NormRule, channels};
use crate::layer::params::ParamDict;
use crate::layer::shared::groups::{AffineIndex, Groups, Norm};

/// Mean (and variance) normalization.
#[derive(Default)]
pub struct MVN {
    variance: bool,
    across_channels: bool,
    eps: f32,
}

impl NormRule for MVN {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        Ok(MVN {
            variance: pd.int(0, 0) != 0,
            across_channels: pd.int(1, 0) != 0,
            eps: pd.float(2, 0.0001),
        })
    }

    fn weights(&self) -> (usize, bool) {
        (0, false)
    }

    fn eps(&self) -> f32 {
        self.eps
    }

    fn norm(&self) -> Norm {
        if self.variance {
            Norm::MeanStd
        } else {
            Norm::Center
        }
    }

    fn plan(&self, np: &[usize]) -> Result<NormPlan> {
        let (c, size) = channels(np);
        let total = c * size;
        let out = match *np {
            [w] => vec![1, 1, w],
            [h, w] => vec![1, h, w],
            _ => np.to_vec(),
        };
        Ok(NormPlan {
            groups: Groups::runs(total, if self.across_channels { total } else { size }),
            index: AffineIndex::SHARED,
            out,
        })
    }
}
