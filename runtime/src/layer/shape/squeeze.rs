//! Squeeze: `0=squeeze_w 1=squeeze_h 11=squeeze_d 2=squeeze_c` (flags), or `3=axes` (numpy
//! axes, negative from the end; as in ncnn, axes the blob does not have are ignored): those
//! axes of size 1 go; squeezing every axis leaves `[1]`.

use crate::error::Result;
use crate::layer::params::ParamDict;
use crate::layer::shape::reshape_rule::{ShapeRule, in_range};
use crate::layer::shared::view::numpy_shape;

/// Drops axes of size 1.
#[derive(Default)]
pub struct Squeeze {
    /// w, h, d, c flags (used when `axes` is empty).
    flags: [bool; 4],
    axes: Vec<i32>,
}

impl ShapeRule for Squeeze {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        Ok(Squeeze {
            flags: [0, 1, 11, 2].map(|id| pd.int(id, 0) != 0),
            axes: pd.ints(3),
        })
    }

    fn shape(&self, dims: u8, shape: [usize; 4]) -> Vec<usize> {
        let np = numpy_shape(dims, shape);
        let n = np.len();
        let mut drop = vec![false; n];
        if self.axes.is_empty() {
            // the flags name w, h, d, c: numpy axes from the end
            let [w, h, d, c] = self.flags;
            let named: &[bool] = match dims {
                1 => &[w],
                2 => &[h, w],
                3 => &[c, h, w],
                _ => &[c, d, h, w],
            };
            drop.copy_from_slice(named);
        } else {
            for a in self.axes.iter().filter_map(|&a| in_range(a, n)) {
                drop[a] = true;
            }
        }
        let kept: Vec<usize> = np
            .iter()
            .zip(&drop)
            .filter(|(size, d)| !(**d && **size == 1))
            .map(|(size, _)| *size)
            .collect();
        if kept.is_empty() { vec![1] } else { kept }
    }
}
