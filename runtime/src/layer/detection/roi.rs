//! What the ROI layers share: their two inputs (a 3-D feature map and a box of four values,
//! `[x1, y1, x2, y2]` in the image's coordinates), checked, and their `pooled_w × pooled_h × c`
//! output filled channel by channel over the threads.

use rayon::prelude::*;

use crate::error::{InputError, Result};
use crate::tensor::Mat;

/// A feature map's channels as planes of `w × h` values, and the box.
pub(crate) struct Roi {
    pub w: usize,
    pub h: usize,
    pub c: usize,
    pub planes: Vec<f32>,
    pub bbox: [f32; 4],
}

impl Roi {
    /// The inputs of `layer`, or the error naming what does not fit.
    pub(crate) fn of(bottoms: &[Mat], layer: &'static str) -> Result<Roi> {
        let [map, roi] = bottoms else {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "2: the feature map and the box",
            }
            .into());
        };
        let [w, h, _, c] = map.shape();
        if map.dims != 3 || w == 0 || h == 0 {
            return Err(InputError::Shape {
                what: layer,
                shape: map.shape().to_vec(),
                expected: "a 3-D feature map",
            }
            .into());
        }
        let values = roi.to_values();
        let bbox = match values[..] {
            [x1, y1, x2, y2, ..] => [x1, y1, x2, y2],
            _ => {
                return Err(InputError::Values {
                    what: "box values (x1, y1, x2, y2)",
                    got: values.len(),
                    expected: 4,
                }
                .into());
            }
        };
        Ok(Roi {
            w,
            h,
            c,
            planes: map.to_values(),
            bbox,
        })
    }

    /// The `pooled_w × pooled_h × c` output, `value(plane, px, py)` at each position.
    pub(crate) fn pool(
        &self,
        [pooled_w, pooled_h]: [usize; 2],
        value: impl Fn(&[f32], usize, usize) -> f32 + Sync,
    ) -> Result<Mat> {
        let plane = self.w * self.h;
        let out: Vec<f32> = (0..self.c)
            .into_par_iter()
            .flat_map_iter(|q| {
                let src = &self.planes[q * plane..(q + 1) * plane];
                let value = &value;
                (0..pooled_h).flat_map(move |py| (0..pooled_w).map(move |px| value(src, px, py)))
            })
            .collect();
        Mat::from_numpy(&[self.c, pooled_h, pooled_w], &out)
    }
}

/// ncnn's bilinear sample of a `w × h` plane at `(x, y)` (x, y ≥ 0): the right or lower
/// neighbour clamped to the last column or row with all the weight on the near one. A point
/// past the plane, which ncnn reads out of bounds, samples its last column or row.
pub(crate) fn bilinear(plane: &[f32], w: usize, h: usize, x: f32, y: f32) -> f32 {
    let (x0, y0) = (x as usize, y as usize);
    let (mut x1, mut y1) = (x0 + 1, y0 + 1);
    let (mut a0, mut a1) = (x1 as f32 - x, x - x0 as f32);
    let (mut b0, mut b1) = (y1 as f32 - y, y - y0 as f32);
    if x1 >= w {
        x1 = w - 1;
        (a0, a1) = (1.0, 0.0);
    }
    if y1 >= h {
        y1 = h - 1;
        (b0, b1) = (1.0, 0.0);
    }
    let (x0, y0) = (x0.min(w - 1), y0.min(h - 1));
    let at = |x: usize, y: usize| plane[y * w + x];
    let r0 = at(x0, y0) * a0 + at(x1, y0) * a1;
    let r1 = at(x0, y1) * a0 + at(x1, y1) * a1;
    r0 * b0 + r1 * b1
}
