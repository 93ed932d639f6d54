//! What the YOLO heads share: reading one input's `num_box` groups of `4 + 1 + num_class`
//! channels (box offsets, objectness, class scores) cell by cell, with typed errors where the
//! channels do not divide so or an anchor is missing.

use crate::error::{Error, InputError, Result};
use crate::tensor::Mat;

/// One input as its anchors' channel groups: `w × h` cells, channel `q`'s plane at `q · plane`.
pub(crate) struct Grid {
    pub w: usize,
    pub h: usize,
    pub values: Vec<f32>,
}

impl Grid {
    /// `m` as `num_box` groups of `5 + num_class` channels, or the error naming the layer's
    /// parameters the channels do not match.
    pub(crate) fn of(
        m: &Mat,
        num_box: usize,
        num_class: usize,
        layer: &'static str,
    ) -> Result<Grid> {
        let [w, h, _, c] = m.shape();
        if m.dims != 3 || num_box == 0 || c != num_box * (5 + num_class) {
            return Err(InputError::Shape {
                what: layer,
                shape: m.shape().to_vec(),
                expected: "3-D, num_box × (4 + 1 + num_class) channels",
            }
            .into());
        }
        Ok(Grid {
            w,
            h,
            values: m.to_values(),
        })
    }

    /// Channel `q` at cell `i` (row-major over the `w × h` cells).
    pub(crate) fn at(&self, q: usize, i: usize) -> f32 {
        self.values[q * self.w * self.h + i]
    }

    /// The best class of anchor group `g` at cell `i`: ncnn's first maximum above `floor`.
    pub(crate) fn best_class(
        &self,
        g: usize,
        num_class: usize,
        i: usize,
        floor: f32,
    ) -> (usize, f32) {
        let first = g * (5 + num_class) + 5;
        let mut best = (0, floor);
        for q in 0..num_class {
            let s = self.at(first + q, i);
            if s > best.1 {
                best = (q, s);
            }
        }
        best
    }
}

/// The anchor `(w, h)` at `index` of `biases` (pairs), or the error naming the parameter.
pub(crate) fn anchor(biases: &[f32], index: usize) -> Result<(f32, f32)> {
    match biases.get(index * 2..index * 2 + 2) {
        Some(&[w, h]) => Ok((w, h)),
        _ => Err(Error::BadParam {
            id: 4,
            value: format!("{} biases", biases.len()),
            allowed: "a (w, h) pair per anchor the boxes use",
        }),
    }
}

/// The logistic function, as ncnn's heads compute it.
pub(crate) fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}
