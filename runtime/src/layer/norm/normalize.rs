//! Normalize: `0=across_spatial 4=across_channel 1=channel_shared 2=eps 9=eps_mode
//! 3=scale_data_size`; weights the scales. Values divided by the root of their sum of squares
//! over the whole blob, each channel, or each position across channels (eps as Caffe, PyTorch
//! or TensorFlow place it: modes 0, 1, 2), times a scale per channel or one shared.

use crate::error::{Error, Result};
use crate::layer::norm::norm_rule::{NormPlan, NormRule, channels};
use crate::layer::params::ParamDict;
use crate::layer::shared::groups::{AffineIndex, Groups, Norm};

/// L2 normalization.
#[derive(Default)]
pub struct Normalize {
    across_spatial: bool,
    across_channel: bool,
    channel_shared: bool,
    eps: f32,
    eps_mode: i32,
    scales: usize,
}

impl NormRule for Normalize {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        let eps_mode = pd.int_in(9, 0, 0..=2, "eps mode 0, 1 or 2")?;
        let scales = pd.int(3, 0);
        if scales < 1 {
            return Err(Error::BadParam {
                id: 3,
                value: scales.to_string(),
                allowed: "at least one scale",
            });
        }
        Ok(Normalize {
            across_spatial: pd.int(0, 0) != 0,
            across_channel: pd.int(4, 1) != 0,
            channel_shared: pd.int(1, 0) != 0,
            eps: pd.float(2, 0.0001),
            eps_mode,
            scales: scales as usize,
        })
    }

    fn weights(&self) -> (usize, bool) {
        (self.scales, false)
    }

    fn eps(&self) -> f32 {
        self.eps
    }

    fn norm(&self) -> Norm {
        match self.eps_mode {
            0 => Norm::L2,
            1 => Norm::L2Max,
            _ => Norm::L2MaxSquared,
        }
    }

    fn plan(&self, np: &[usize]) -> Result<NormPlan> {
        let (c, size) = channels(np);
        let total = c * size;
        let shared = self.channel_shared;
        let (groups, index) = match (self.across_spatial, self.across_channel) {
            (true, true) => (
                Groups::runs(total, total),
                AffineIndex {
                    div: size,
                    modulo: if shared { 1 } else { c },
                    mul: 0,
                },
            ),
            (true, false) => (
                Groups::runs(total, size),
                if shared {
                    AffineIndex::SHARED
                } else {
                    AffineIndex::PER_GROUP
                },
            ),
            (false, true) => (
                Groups::over(&[c, size], &[true, false]),
                if shared {
                    AffineIndex::SHARED
                } else {
                    AffineIndex::PER_VALUE
                },
            ),
            // ncnn leaves the blob as it is
            (false, false) => (Groups::runs(0, 1), AffineIndex::SHARED),
        };
        Ok(NormPlan {
            groups,
            index,
            out: np.to_vec(),
        })
    }
}
