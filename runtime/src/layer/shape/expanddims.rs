//! ExpandDims: `3=axes` (numpy axes of the output, negative from its end): an axis of size 1
//! inserted at each. As in ncnn, axes outside the output are ignored (the input's axes fill
//! the other places from the innermost, ones before them), and a blob stays as it is when
//! none is inside or it would pass 4 dims.

use crate::error::Result;
use crate::layer::params::ParamDict;
use crate::layer::shape::reshape_rule::{ShapeRule, in_range};
use crate::layer::shared::view::numpy_shape;

/// Inserts axes of size 1.
#[derive(Default)]
pub struct ExpandDims {
    axes: Vec<i32>,
}

impl ShapeRule for ExpandDims {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        Ok(ExpandDims { axes: pd.ints(3) })
    }

    fn shape(&self, dims: u8, shape: [usize; 4]) -> Vec<usize> {
        let np = numpy_shape(dims, shape);
        let out = np.len() + self.axes.len();
        if out > 4 {
            return np;
        }
        let mut new = vec![false; out];
        for a in self.axes.iter().filter_map(|&a| in_range(a, out)) {
            new[a] = true;
        }
        // as in ncnn, no axis inside the output leaves the blob as it is
        if !new.contains(&true) {
            return np;
        }
        let slots = new.iter().filter(|n| !**n).count();
        let mut rest = std::iter::repeat_n(1, slots.saturating_sub(np.len())).chain(np);
        new.iter()
            .map(|n| if *n { 1 } else { rest.next().unwrap_or(1) })
            .collect()
    }
}
