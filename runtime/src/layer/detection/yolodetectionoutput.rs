//! YoloDetectionOutput: `0=num_class 1=num_box 2=confidence_threshold 3=nms_threshold
//! 4=biases`. YOLOv2's region head over any number of inputs, each `num_box` groups of
//! `4 + 1 + num_class` channels: per cell and anchor, the box `((x + σ(tx)) / w, (y + σ(ty)) /
//! h, e^tw · anchor_w / w, e^th · anchor_h / h)`, the objectness σ(to) times the best class
//! score of a softmax over the classes; those at or above the threshold, sorted, suppressed
//! across classes. Rows of `[label + 1, score, xmin, ymin, xmax, ymax]` (1 for a background
//! class). ncnn runs in place: its softmax rewrites the class channels of its inputs, and with
//! no detection the first input, so rewritten, is the output; so here. On the CPU, as ncnn's.

use crate::error::{InputError, Result};
use crate::layer::contract::{Layer, Support};
use crate::layer::detection::boxes::{Overlap, Scored, detections, sort_descending, suppress};
use crate::layer::detection::yolo_grid::{Grid, YoloParams, anchor, sigmoid};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::kernels;
use crate::tensor::Mat;

/// YOLOv2's region head.
#[derive(Default)]
pub struct YoloDetectionOutput {
    p: YoloParams,
}

impl YoloDetectionOutput {
    /// The class channels of each anchor group turned into a softmax over the classes, cell by
    /// cell (ncnn's Softmax along axis 0 of the group's class channels): plane by plane over
    /// all cells, so that the compiler vectorizes each step, `exp` included.
    fn softmax_classes(&self, grid: &mut Grid) {
        let plane = grid.w * grid.h;
        let n = self.p.num_class;
        if plane == 0 || n == 0 {
            return;
        }
        for g in 0..self.p.num_box {
            let first = (g * (5 + n) + 5) * plane;
            let classes = &mut grid.values[first..first + n * plane];
            let mut max = classes[..plane].to_vec();
            for q in classes.chunks_exact(plane).skip(1) {
                kernels::zip_with(&mut max, q, f32::max);
            }
            let mut sum = vec![0.0; plane];
            for q in classes.chunks_exact_mut(plane) {
                kernels::zip_with(q, &max, |x, m| kernels::exp(x - m));
                kernels::zip_with(&mut sum, q, |s, e| s + e);
            }
            for q in classes.chunks_exact_mut(plane) {
                kernels::zip_with(q, &sum, |e, s| e / s);
            }
        }
    }

    /// The boxes of one input at or above the threshold: the score of every cell first, the
    /// box only of those that pass.
    fn boxes(&self, grid: &Grid, out: &mut Vec<Scored>) -> Result<()> {
        let net = (grid.w as f32, grid.h as f32);
        for g in 0..self.p.num_box {
            let anchor = anchor(&self.p.biases, g)?;
            let first = g * (5 + self.p.num_class);
            let best = grid.best_classes(g, self.p.num_class, 0.0);
            let objectness = grid.plane(first + 4);
            for (i, (&o, &class_score)) in objectness.iter().zip(&best.scores).enumerate() {
                let score = sigmoid(o) * class_score;
                if score >= self.p.confidence_threshold {
                    let [cx, cy, bw, bh] = grid.cell_box(first, i, anchor, net);
                    // ncnn's corners, the area suppression takes from them
                    let corners = [cx - bw * 0.5, cy - bh * 0.5, cx + bw * 0.5, cy + bh * 0.5];
                    out.push(Scored::new(corners, best.labels[i] as usize, score));
                }
            }
        }
        Ok(())
    }
}

impl Layer for YoloDetectionOutput {
    fn support(&self) -> Support {
        Support::MANY
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.p = YoloParams::load(pd);
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        if bottoms.is_empty() {
            return Err(InputError::Count {
                got: 0,
                expected: "at least one grid",
            }
            .into());
        }
        let mut all = Vec::new();
        let mut first = None;
        for m in bottoms {
            let mut grid = Grid::of(m, self.p.num_box, self.p.num_class, "YoloDetectionOutput")?;
            self.softmax_classes(&mut grid);
            self.boxes(&grid, &mut all)?;
            first.get_or_insert_with(|| (m.shape(), grid.values));
        }
        sort_descending(&mut all);
        let kept: Vec<Scored> = suppress(&all, self.p.nms_threshold, Overlap::Ratio)
            .into_iter()
            .map(|k| all[k])
            .collect();
        if kept.is_empty() {
            // ncnn's in-place output: the first input with its classes as probabilities
            let ([w, h, _, c], values) = first.expect("one input at least");
            return Ok(vec![Mat::from_numpy(&[c, h, w], &values)?]);
        }
        Ok(vec![detections(&kept, 1.0)?])
    }
}
