//! LayerNorm: `0=affine_size 1=eps 2=affine`; weights gamma and beta (`affine_size` each).
//! Each row (the last axis, or the trailing axes that make `affine_size`) becomes
//! `(x - mean) / sqrt(var + eps) · gamma + beta`.

use crate::error::Result;
use crate::layer::norm::norm_rule::{NormPlan, NormRule, affine_len, trailing_rows};
use crate::layer::params::ParamDict;
use crate::layer::shared::groups::{AffineIndex, Norm};

/// Layer normalization.
#[derive(Default)]
pub struct LayerNorm {
    affine_size: usize,
    eps: f32,
    affine: bool,
}

impl NormRule for LayerNorm {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        let affine = pd.int(2, 1) != 0;
        Ok(LayerNorm {
            affine_size: affine_len(0, pd.int(0, 0), affine)?,
            eps: pd.float(1, 0.001),
            affine,
        })
    }

    fn weights(&self) -> (usize, bool) {
        (if self.affine { self.affine_size } else { 0 }, true)
    }

    fn eps(&self) -> f32 {
        self.eps
    }

    fn norm(&self) -> Norm {
        Norm::MeanVar
    }

    fn plan(&self, np: &[usize]) -> Result<NormPlan> {
        Ok(NormPlan {
            groups: trailing_rows(np, self.affine_size),
            index: AffineIndex::PER_VALUE,
            out: np.to_vec(),
        })
    }
}
