//! Reorg: `0=stride 1=mode`, space to channels (YOLOv2's passthrough). Output channel
//! `q·s² + sh·s + sw` (mode 0) or `(sh·s + sw)·c + q` (mode 1) holds input channel `q`'s
//! pixels `(y·s + sh, x·s + sw)`; rows and columns past a whole multiple of `s` are dropped.

use crate::error::Result;
use crate::layer::params::ParamDict;
use crate::layer::shape::depth_space::{factor_and_mode, planes};
use crate::layer::shape::view_rule::ViewRule;
use crate::tensor::Strided;

/// Space to channels.
#[derive(Default)]
pub struct Reorg {
    stride: usize,
    /// Mode 1: the stride's digits outermost in the channel index.
    digits_outer: bool,
}

impl ViewRule for Reorg {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        let (stride, digits_outer) = factor_and_mode(pd)?;
        Ok(Reorg {
            stride,
            digits_outer,
        })
    }

    fn view(&self, np: &[usize]) -> Result<(Strided, Vec<usize>)> {
        let [c, h, w] = planes(np)?;
        let s = self.stride;
        let (oh, ow) = (h / s, w / s);
        // (q, y, sh, x, sw) over the rows and columns kept
        let all = Strided::contiguous(&[c, h, w])
            .narrow(1, 0, oh * s)
            .narrow(2, 0, ow * s)
            .split(1, oh)
            .split(3, ow);
        let view = if self.digits_outer {
            all.permute(&[2, 4, 0, 1, 3])
        } else {
            all.permute(&[0, 2, 4, 1, 3])
        };
        Ok((view, vec![c * s * s, oh, ow]))
    }
}
