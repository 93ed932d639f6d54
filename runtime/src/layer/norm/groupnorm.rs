//! GroupNorm: `0=group 1=channels 2=eps 3=affine`; weights gamma and beta (`channels` each).
//! The channels (axis 0: a 1-D blob's values, a 2-D blob's rows) in `group` runs, each run
//! normalized as one, then scaled and shifted per channel.

use crate::error::{Error, InputError, Result};
use crate::layer::norm::norm_rule::{NormPlan, NormRule, affine_len};
use crate::layer::params::ParamDict;
use crate::layer::shared::groups::{AffineIndex, Groups, Norm};

/// Group normalization.
#[derive(Default)]
pub struct GroupNorm {
    group: usize,
    channels: usize,
    eps: f32,
    affine: bool,
}

impl NormRule for GroupNorm {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        let group = pd.int(0, 1);
        let channels = pd.int(1, 0);
        if group < 1 || channels < 0 || channels % group != 0 {
            return Err(Error::BadParam {
                id: 0,
                value: format!("group {group}, channels {channels}"),
                allowed: "a group count of at least 1 that divides the channels",
            });
        }
        let affine = pd.int(3, 1) != 0;
        Ok(GroupNorm {
            group: group as usize,
            channels: affine_len(1, channels, affine)?,
            eps: pd.float(2, 0.001),
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
        if np[0] != self.channels {
            return Err(InputError::Values {
                what: "channels (axis 0)",
                got: np[0],
                expected: self.channels,
            }
            .into());
        }
        let total: usize = np.iter().product();
        let plane = total / np[0].max(1);
        let per_group = self.channels / self.group;
        Ok(NormPlan {
            groups: Groups::runs(total, per_group * plane),
            index: AffineIndex {
                div: plane,
                modulo: per_group,
                mul: per_group,
            },
            out: np.to_vec(),
        })
    }
}
