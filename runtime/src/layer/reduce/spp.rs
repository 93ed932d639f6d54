//! SPP: `0=pooling_type (0 max, 1 average) 1=pyramid_height`. Spatial pyramid pooling (SPPnet,
//! Caffe's `SPP`): level `p` of the pyramid pools each channel into `2^p × 2^p` bins of equal
//! windows (the window's side the ceiling of the side over the bins, the map padded with zeros
//! by half the remainder on each side, the odd one on both), and the levels follow each other
//! in one 1-D blob: level by level, channel by channel, bins row by row. Averages count the
//! padding, and maxima take its zeros, as ncnn's. ncnn's own layer allocates a `bins × 1 × 2`
//! blob and writes the `channels × bins` values past its end for more than one channel; this
//! layer gives the blob its writes mean (Caffe's output, flattened). On the CPU.

use rayon::prelude::*;

use crate::error::{InputError, Result};
use crate::layer::contract::{Layer, Support};
use crate::layer::params::{ParamDict, bad_param};
use crate::layer::run_options::RunOptions;
use crate::tensor::Mat;

/// Spatial pyramid pooling.
#[derive(Default)]
pub struct SPP {
    average: bool,
    levels: u32,
}

impl SPP {
    /// One level's `bins × bins` outputs of a `w × h` plane.
    fn level(&self, plane: &[f32], [w, h]: [usize; 2], bins: usize) -> Vec<f32> {
        let (kw, kh) = (w.div_ceil(bins), h.div_ceil(bins));
        let (pad_w, pad_h) = ((kw * bins - w).div_ceil(2), (kh * bins - h).div_ceil(2));
        // the padded map's value at (x, y)
        let at = |x: usize, y: usize| match (x.checked_sub(pad_w), y.checked_sub(pad_h)) {
            (Some(x), Some(y)) if x < w && y < h => plane[y * w + x],
            _ => 0.0,
        };
        let mut out = Vec::with_capacity(bins * bins);
        for i in 0..bins {
            for j in 0..bins {
                let window = (0..kh).flat_map(|y| (0..kw).map(move |x| (j * kw + x, i * kh + y)));
                out.push(if self.average {
                    window.map(|(x, y)| at(x, y)).sum::<f32>() / (kw * kh) as f32
                } else {
                    window.fold(at(j * kw, i * kh), |m, (x, y)| m.max(at(x, y)))
                });
            }
        }
        out
    }
}

impl Layer for SPP {
    fn support(&self) -> Support {
        Support::ONE_BLOB
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.average = match pd.int(0, 0) {
            0 => false,
            1 => true,
            other => return Err(bad_param(0, other, "0 (max) or 1 (average)")),
        };
        self.levels = match pd.int(1, 1) {
            // 2^(2·levels) bins at the top: 16 levels are 4^15 bins a channel already
            h @ 1..=16 => h as u32,
            other => return Err(bad_param(1, other, "a pyramid height of 1 to 16")),
        };
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let [w, h, d, c] = bottom.shape();
        if bottom.dims != 3 || d != 1 || w == 0 || h == 0 {
            let (what, expected) = ("SPP", "a 3-D feature map");
            let shape = bottom.shape().to_vec();
            return Err(InputError::Shape {
                what,
                shape,
                expected,
            }
            .into());
        }
        let values = bottom.to_values();
        let out: Vec<f32> = (0..self.levels)
            .flat_map(|p| {
                let bins = 1usize << p;
                let values = &values;
                (0..c)
                    .into_par_iter()
                    .flat_map_iter(move |q| self.level(&values[q * w * h..][..w * h], [w, h], bins))
                    .collect::<Vec<_>>()
            })
            .collect();
        Mat::from_numpy(&[out.len()], &out)
    }
}
