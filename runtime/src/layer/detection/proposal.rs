//! Proposal: `0=feat_stride 1=base_size 2=pre_nms_topN 3=after_nms_topN 4=nms_thresh
//! 5=min_size`. Faster R-CNN's region proposals from three inputs: the objectness scores
//! (`2·A` channels, the second `A` the foreground's), the box deltas (`4·A` channels: dx, dy,
//! dw, dh per anchor) and the image's `[height, width, scale]`. The `A = 9` anchors are
//! ncnn's fixed ones (ratios 0.5, 1, 2 by scales 8, 16, 32 of a `base_size` box), shifted by
//! `feat_stride` per position; each decoded box is clipped to the image, dropped when a side is
//! under `min_size · scale`, sorted, cut to `pre_nms_topN`, suppressed at `nms_thresh` and cut
//! to `after_nms_topN`. Outputs: the boxes (`4 × 1 × n`, one per channel) and, given a second
//! top, their scores (`1 × 1 × n`); none left makes both empty, as in ncnn. On the CPU, as
//! ncnn's: the count depends on the values.

use crate::error::{InputError, Result};
use crate::layer::contract::{Layer, Support};
use crate::layer::detection::boxes::{Overlap, Scored, sort_descending, suppress};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::tensor::Mat;

const RATIOS: [f32; 3] = [0.5, 1.0, 2.0];
const SCALES: [f32; 3] = [8.0, 16.0, 32.0];

/// Region proposals from an RPN's scores and deltas.
#[derive(Default)]
pub struct Proposal {
    feat_stride: i32,
    pre_nms_top_n: i32,
    after_nms_top_n: i32,
    nms_thresh: f32,
    min_size: i32,
    /// `[x1, y1, x2, y2]` of each anchor at the first position.
    anchors: Vec<[f32; 4]>,
    tops: usize,
}

/// ncnn's anchors: per ratio a box of `base_size²` area reshaped (sides rounded), per scale
/// that box scaled, all centred on the base box's centre.
fn anchors(base_size: i32) -> Vec<[f32; 4]> {
    let c = base_size as f32 * 0.5;
    RATIOS
        .iter()
        .flat_map(|&ratio| {
            let rw = (base_size as f32 / ratio.sqrt()).round();
            let rh = (rw * ratio).round();
            SCALES.iter().map(move |&s| {
                let (w, h) = (rw * s, rh * s);
                [c - w * 0.5, c - h * 0.5, c + w * 0.5, c + h * 0.5]
            })
        })
        .collect()
}

impl Layer for Proposal {
    fn support(&self) -> Support {
        Support::MANY
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.feat_stride = pd.int(0, 16);
        self.anchors = anchors(pd.int(1, 16));
        self.pre_nms_top_n = pd.int(2, 6000);
        self.after_nms_top_n = pd.int(3, 300);
        self.nms_thresh = pd.float(4, 0.7);
        self.min_size = pd.int(5, 16);
        Ok(())
    }

    fn set_top_count(&mut self, count: usize) {
        self.tops = count;
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let [score, deltas, info] = bottoms else {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "3: the scores, the box deltas and the image's height, width, scale",
            }
            .into());
        };
        let a = self.anchors.len();
        let [w, h, _, sc] = score.shape();
        let [dw, dh, _, dc] = deltas.shape();
        if score.dims != 3 || sc < 2 * a {
            let expected = "3-D scores of 2 × 9 anchors' channels";
            let shape = score.shape().to_vec();
            let what = "Proposal's scores";
            return Err(InputError::Shape {
                what,
                shape,
                expected,
            }
            .into());
        }
        if deltas.dims != 3 || (dw, dh) != (w, h) || dc < 4 * a {
            let expected = "3-D deltas of 4 × 9 anchors' channels, the scores' width and height";
            let shape = deltas.shape().to_vec();
            let what = "Proposal's box deltas";
            return Err(InputError::Shape {
                what,
                shape,
                expected,
            }
            .into());
        }
        let info = info.to_values();
        let [im_h, im_w, im_scale] = match info[..] {
            [ih, iw, s, ..] => [ih, iw, s],
            _ => {
                let what = "Proposal's image info (height, width, scale)";
                let (got, expected) = (info.len(), 3);
                return Err(InputError::Values {
                    what,
                    got,
                    expected,
                }
                .into());
            }
        };
        let (scores, deltas) = (score.to_values(), deltas.to_values());
        let plane = w * h;
        let stride = self.feat_stride as f32;
        let min_box = self.min_size as f32 * im_scale;
        let mut boxes = Vec::new();
        for (q, anchor) in self.anchors.iter().enumerate() {
            let delta = |k: usize, i: usize| deltas[(q * 4 + k) * plane + i];
            let (aw, ah) = (anchor[2] - anchor[0], anchor[3] - anchor[1]);
            let mut ay = anchor[1];
            for i in 0..h {
                let mut ax = anchor[0];
                for j in 0..w {
                    let at = i * w + j;
                    let cx = ax + aw * 0.5 + aw * delta(0, at);
                    let cy = ay + ah * 0.5 + ah * delta(1, at);
                    let (bw, bh) = (aw * delta(2, at).exp(), ah * delta(3, at).exp());
                    let clip = |v: f32, side: f32| v.min(side - 1.0).max(0.0);
                    let corners = [
                        clip(cx - bw * 0.5, im_w),
                        clip(cy - bh * 0.5, im_h),
                        clip(cx + bw * 0.5, im_w),
                        clip(cy + bh * 0.5, im_h),
                    ];
                    let wide = corners[2] - corners[0] + 1.0 >= min_box;
                    if wide && corners[3] - corners[1] + 1.0 >= min_box {
                        let s = scores[(q + a) * plane + at];
                        boxes.push(Scored::new(corners, 0, s));
                    }
                    ax += stride;
                }
                ay += stride;
            }
        }
        sort_descending(&mut boxes);
        if self.pre_nms_top_n > 0 {
            boxes.truncate(self.pre_nms_top_n as usize);
        }
        let mut kept = suppress(&boxes, self.nms_thresh, Overlap::Ratio);
        kept.truncate(self.after_nms_top_n.max(0) as usize);
        let n = kept.len();
        if n == 0 {
            let empty = Mat::from_numpy(&[0], &[])?;
            return Ok(vec![empty; self.tops.max(1)]);
        }
        let corners: Vec<f32> = (kept.iter())
            .flat_map(|&k| [boxes[k].xmin, boxes[k].ymin, boxes[k].xmax, boxes[k].ymax])
            .collect();
        let mut tops = vec![Mat::from_numpy(&[n, 1, 4], &corners)?];
        if self.tops > 1 {
            let s: Vec<f32> = kept.iter().map(|&k| boxes[k].score).collect();
            tops.push(Mat::from_numpy(&[n, 1, 1], &s)?);
        }
        Ok(tops)
    }
}
