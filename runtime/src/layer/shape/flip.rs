//! Flip: `0=axes` (numpy axes, negative from the end; 1-D blobs flip whatever is named), each
//! read backwards.

use crate::error::{Error, InputError, Result};
use crate::layer::params::ParamDict;
use crate::layer::shape::view_rule::ViewRule;
use crate::tensor::Strided;

/// Axes reversed.
#[derive(Default)]
pub struct Flip {
    axes: Vec<i32>,
}

impl ViewRule for Flip {
    fn from_params(pd: &ParamDict) -> Result<Self> {
        let axes = pd.ints(0);
        if axes.len() > 4 || axes.iter().any(|a| !(-4..4).contains(a)) {
            return Err(Error::BadParam {
                id: 0,
                value: format!("{axes:?}"),
                allowed: "up to 4 axes in -4..4",
            });
        }
        Ok(Flip { axes })
    }

    fn view(&self, np: &[usize]) -> Result<(Strided, Vec<usize>)> {
        let mut view = Strided::contiguous(np);
        let n = np.len();
        let mut flipped = vec![n == 1 && !self.axes.is_empty(); n];
        for &axis in &self.axes {
            let a = if axis < 0 { axis + n as i32 } else { axis };
            match usize::try_from(a).ok().filter(|a| *a < n) {
                Some(a) => flipped[a] = true,
                None if n == 1 => {}
                None => {
                    return Err(InputError::Axis { axis, dims: n }.into());
                }
            }
        }
        for (a, f) in flipped.iter().enumerate() {
            if *f {
                view = view.flip(a);
            }
        }
        Ok((view, np.to_vec()))
    }
}
