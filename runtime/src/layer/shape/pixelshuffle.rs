//! PixelShuffle: `0=upscale_factor 1=mode`. A 3-D blob of `c·r²` channels becomes `c` channels
//! of `r·h × r·w`; output pixel `(y·r + sh, x·r + sw)` of channel `p` comes from input channel
//! `p·r² + sh·r + sw` (mode 0, PyTorch's) or `(sh·r + sw)·c + p` (mode 1).

use crate::error::{InputError, Result};
use crate::layer::params::ParamDict;
use crate::layer::shape::depth_space::{factor_and_mode, planes};
use crate::layer::shape::view_rule::ViewRule;
use crate::tensor::Strided;

/// Channels to space.
#[derive(Default)]
pub struct PixelShuffle {
    factor: usize,
    /// Mode 1: the factor's digits outermost in the channel index.
    digits_outer: bool,
}

impl ViewRule for PixelShuffle {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        let (factor, digits_outer) = factor_and_mode(pd)?;
        Ok(PixelShuffle {
            factor,
            digits_outer,
        })
    }

    fn view(&self, np: &[usize]) -> Result<(Strided, Vec<usize>)> {
        let [c, h, w] = planes(np)?;
        let r = self.factor;
        if c % (r * r) != 0 {
            return Err(InputError::Values {
                what: "channels for the upscale factor squared",
                got: c,
                expected: c / (r * r) * r * r,
            }
            .into());
        }
        let outc = c / (r * r);
        let all = Strided::contiguous(&[c, h, w]);
        // the channel axis as its three digits, then (p, y, sh, x, sw) in output order
        let view = if self.digits_outer {
            all.split(0, r).split(1, r).permute(&[2, 3, 0, 4, 1])
        } else {
            all.split(0, outc).split(1, r).permute(&[0, 3, 1, 4, 2])
        };
        Ok((view, vec![outc, h * r, w * r]))
    }
}
