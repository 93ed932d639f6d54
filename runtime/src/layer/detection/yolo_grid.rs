//! What the YOLO heads share: reading one input's `num_box` groups of `4 + 1 + num_class`
//! channels (box offsets, objectness, class scores) cell by cell, with typed errors where the
//! channels do not divide so or an anchor is missing.

use multiversion::multiversion;

use crate::error::{Error, InputError, Result};
use crate::layer::params::ParamDict;
use crate::tensor::Mat;

/// The parameters both YOLO heads start with: `0=num_class 1=num_box 2=confidence_threshold
/// 3=nms_threshold 4=biases`.
#[derive(Default)]
pub(crate) struct YoloParams {
    pub num_class: usize,
    pub num_box: usize,
    pub confidence_threshold: f32,
    pub nms_threshold: f32,
    pub biases: Vec<f32>,
}

impl YoloParams {
    /// ncnn's defaults: 20 classes, 5 anchors, thresholds 0.01 and 0.45.
    pub(crate) fn load(pd: &ParamDict) -> YoloParams {
        YoloParams {
            num_class: pd.int(0, 20).max(0) as usize,
            num_box: pd.int(1, 5).max(0) as usize,
            confidence_threshold: pd.float(2, 0.01),
            nms_threshold: pd.float(3, 0.45),
            biases: pd.floats(4),
        }
    }
}

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

    /// The box of the anchor group whose channels start at `first`, at cell `i`: center
    /// `((x + σ(tx)) / w, (y + σ(ty)) / h)`, size `e^tw · anchor_w / net_w` by `e^th · anchor_h /
    /// net_h` (`[cx, cy, bw, bh]`).
    pub(crate) fn cell_box(
        &self,
        first: usize,
        i: usize,
        anchor: (f32, f32),
        net: (f32, f32),
    ) -> [f32; 4] {
        let (x, y) = ((i % self.w) as f32, (i / self.w) as f32);
        [
            (x + sigmoid(self.at(first, i))) / self.w as f32,
            (y + sigmoid(self.at(first + 1, i))) / self.h as f32,
            self.at(first + 2, i).exp() * anchor.0 / net.0,
            self.at(first + 3, i).exp() * anchor.1 / net.1,
        ]
    }

    /// Channel `q`'s plane of cells.
    pub(crate) fn plane(&self, q: usize) -> &[f32] {
        let plane = self.w * self.h;
        &self.values[q * plane..(q + 1) * plane]
    }

    /// The best class of anchor group `g` at every cell, as labels and scores: ncnn's first
    /// maximum above `floor`. A class plane after another over all the cells (the compiler
    /// vectorizes the compare and select), not a cell's classes strided a plane apart.
    pub(crate) fn best_classes(&self, g: usize, num_class: usize, floor: f32) -> Best {
        let cells = self.w * self.h;
        let first = g * (5 + num_class) + 5;
        let mut best = Best {
            labels: vec![0.0; cells],
            scores: vec![floor; cells],
        };
        for q in 0..num_class {
            keep_better(&mut best, self.plane(first + q), q as f32);
        }
        best
    }
}

/// Each cell's best class: its label (a float, so that the select vectorizes with the
/// scores') and score.
pub(crate) struct Best {
    pub labels: Vec<f32>,
    pub scores: Vec<f32>,
}

/// Where `scores` beats the best so far, `label` and its score become the best.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn keep_better(best: &mut Best, scores: &[f32], label: f32) {
    let cells = best.scores.iter_mut().zip(&mut best.labels).zip(scores);
    for ((s, l), &v) in cells {
        let better = v > *s;
        *s = if better { v } else { *s };
        *l = if better { label } else { *l };
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
