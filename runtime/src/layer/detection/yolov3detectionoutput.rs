//! Yolov3DetectionOutput: `0=num_class 1=num_box 2=confidence_threshold 3=nms_threshold
//! 4=biases 5=mask 6=anchors_scale`. YOLOv3/v4's head over its scales (one input each, `num_box`
//! groups of `4 + 1 + num_class` channels): input `b`'s anchor group `g` takes anchor
//! `mask[b · num_box + g]` of `biases`, boxes `((x + σ(tx)) / w, (y + σ(ty)) / h, e^tw · anchor_w /
//! net_w, e^th · anchor_h / net_h)` with `net = ⌊anchors_scale[b] · (w, h)⌋`, and the score
//! `1 / (1 + e^-to · (1 + e^-tc))` of the best raw class score `tc` (ncnn's expression as it is
//! written, not the product of the two sigmoids its comment names); those at or above the
//! threshold, sorted, suppressed across classes. Rows of `[label + 1, score, xmin, ymin, xmax,
//! ymax]`; no detection leaves an empty output, as in ncnn. On the CPU, as ncnn's.

use crate::error::{Error, InputError, Result};
use crate::layer::contract::{Layer, Support};
use crate::layer::detection::boxes::{Overlap, Scored, detections, sort_descending, suppress};
use crate::layer::detection::yolo_grid::{Grid, YoloParams, anchor};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::tensor::Mat;

/// YOLOv3's multi-scale head.
#[derive(Default)]
pub struct Yolov3DetectionOutput {
    p: YoloParams,
    mask: Vec<f32>,
    anchors_scale: Vec<f32>,
}

impl Yolov3DetectionOutput {
    /// The boxes of input `b` at or above the threshold.
    fn boxes(&self, b: usize, grid: &Grid, out: &mut Vec<Scored>) -> Result<()> {
        let scale = *self.anchors_scale.get(b).ok_or_else(|| Error::BadParam {
            id: 6,
            value: format!("{} anchor scales", self.anchors_scale.len()),
            allowed: "one anchor scale per input",
        })?;
        let net_w = (scale * grid.w as f32) as i32 as f32;
        let net_h = (scale * grid.h as f32) as i32 as f32;
        for g in 0..self.p.num_box {
            let index = self
                .mask
                .get(b * self.p.num_box + g)
                .ok_or_else(|| Error::BadParam {
                    id: 5,
                    value: format!("{} mask entries", self.mask.len()),
                    allowed: "num_box anchor indices per input",
                })?;
            let anchor = anchor(&self.p.biases, *index as usize)?;
            let first = g * (5 + self.p.num_class);
            let best = grid.best_classes(g, self.p.num_class, -f32::MAX);
            let objectness = grid.plane(first + 4);
            for (i, (&o, &class_score)) in objectness.iter().zip(&best.scores).enumerate() {
                let score = 1.0 / (1.0 + (-o).exp() * (1.0 + (-class_score).exp()));
                if score < self.p.confidence_threshold {
                    continue;
                }
                let cell = grid.cell_box(first, i, anchor, (net_w, net_h));
                out.push(Scored::centered(cell, best.labels[i] as usize, score));
            }
        }
        Ok(())
    }
}

impl Layer for Yolov3DetectionOutput {
    fn support(&self) -> Support {
        Support::MANY
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.p = YoloParams::load(pd);
        self.mask = pd.floats(5);
        self.anchors_scale = pd.floats(6);
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        if bottoms.is_empty() {
            return Err(InputError::Count {
                got: 0,
                expected: "at least one scale's grid",
            }
            .into());
        }
        let mut all = Vec::new();
        for (b, m) in bottoms.iter().enumerate() {
            let grid = Grid::of(m, self.p.num_box, self.p.num_class, "Yolov3DetectionOutput")?;
            self.boxes(b, &grid, &mut all)?;
        }
        sort_descending(&mut all);
        let kept: Vec<Scored> = suppress(&all, self.p.nms_threshold, Overlap::Scaled)
            .into_iter()
            .map(|k| all[k])
            .collect();
        if kept.is_empty() {
            return Ok(vec![Mat::from_numpy(&[0], &[])?]);
        }
        Ok(vec![detections(&kept, 1.0)?])
    }
}
