//! ArgMax: `0=out_max_val 1=topk`. The indices of the `topk` largest values of the whole blob
//! (flattened; ties go to the larger index, as ncnn's sort of (value, index) pairs does), as
//! a 2-D blob of one row, or of two (values, then indices) with `out_max_val`. CPU only, as in
//! ncnn, which has no GPU ArgMax either.

use crate::error::{InputError, Result};
use crate::layer::contract::{Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::tensor::Mat;

/// The largest values' indices.
#[derive(Default)]
pub struct ArgMax {
    out_max_val: bool,
    topk: usize,
}

impl Layer for ArgMax {
    fn support(&self) -> Support {
        Support::ONE_BLOB
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.out_max_val = pd.int(0, 0) != 0;
        self.topk = pd.int_in(1, 1, 1..=i32::MAX, "at least one")? as usize;
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let values = bottom.to_values();
        if self.topk > values.len() {
            return Err(InputError::Values {
                what: "values for topk",
                got: values.len(),
                expected: self.topk,
            }
            .into());
        }
        let mut order: Vec<usize> = (0..values.len()).collect();
        let cmp = |a: &usize, b: &usize| values[*b].total_cmp(&values[*a]).then_with(|| b.cmp(a));
        order.select_nth_unstable_by(self.topk - 1, cmp);
        let top = &mut order[..self.topk];
        top.sort_by(cmp);
        let indices = top.iter().map(|i| *i as f32);
        let rows: Vec<f32> = if self.out_max_val {
            top.iter().map(|i| values[*i]).chain(indices).collect()
        } else {
            indices.collect()
        };
        let h = if self.out_max_val { 2 } else { 1 };
        Mat::from_numpy(&[h, self.topk], &rows)
    }
}
