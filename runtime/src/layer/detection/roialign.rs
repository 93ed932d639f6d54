//! ROIAlign: `0=pooled_width 1=pooled_height 2=spatial_scale 3=sampling_ratio 4=aligned
//! 5=version`. Mask R-CNN's average of bilinear samples over the bins of one box of a feature
//! map: `sampling_ratio` samples per bin side (or as many as the bin is wide, rounded up), the
//! box shifted by half a position with `aligned`. Version 0 is ncnn's own (bins clamped to the
//! map, an empty bin 0), version 1 detectron2's (samples outside the map skipped, the count
//! fixed per box). On the CPU, as ncnn's.

use crate::error::{Error, Result};
use crate::layer::contract::{Layer, Support};
use crate::layer::detection::roi::{Roi, bilinear};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::tensor::Mat;

/// Bilinear average pooling of a region of interest.
#[derive(Default)]
pub struct ROIAlign {
    pooled: [usize; 2],
    spatial_scale: f32,
    sampling_ratio: i32,
    aligned: bool,
    detectron2: bool,
}

impl Layer for ROIAlign {
    fn support(&self) -> Support {
        Support::MANY
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.pooled = [pd.int(0, 0).max(0) as usize, pd.int(1, 0).max(0) as usize];
        self.spatial_scale = pd.float(2, 1.0);
        self.sampling_ratio = pd.int(3, 0);
        self.aligned = pd.int(4, 0) != 0;
        self.detectron2 = match pd.int(5, 0) {
            0 => false,
            1 => true,
            v => {
                return Err(Error::BadParam {
                    id: 5,
                    value: v.to_string(),
                    allowed: "version 0 (ncnn's) or 1 (detectron2's)",
                });
            }
        };
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let roi = Roi::of(bottoms, "ROIAlign")?;
        let shift = if self.aligned { 0.5 } else { 0.0 };
        let [x1, y1, x2, y2] = roi.bbox.map(|v| v * self.spatial_scale - shift);
        let (mut roi_w, mut roi_h) = (x2 - x1, y2 - y1);
        if !self.aligned {
            (roi_w, roi_h) = (roi_w.max(1.0), roi_h.max(1.0));
        }
        let bin_w = roi_w / self.pooled[0] as f32;
        let bin_h = roi_h / self.pooled[1] as f32;
        let (w, h) = (roi.w, roi.h);
        let (wf, hf) = (w as f32, h as f32);
        let samples = |extent: f32| match self.sampling_ratio {
            r if r > 0 => r as usize,
            _ => extent.ceil().max(0.0) as usize,
        };
        let top = if self.detectron2 {
            let (grid_h, grid_w) = (
                samples(roi_h / self.pooled[1] as f32),
                samples(roi_w / self.pooled[0] as f32),
            );
            let count = (grid_h * grid_w).max(1) as f32;
            roi.pool(self.pooled, |plane, px, py| {
                let mut sum = 0.0;
                for by in 0..grid_h {
                    let y = y1 + py as f32 * bin_h + (by as f32 + 0.5) * bin_h / grid_h as f32;
                    for bx in 0..grid_w {
                        let x = x1 + px as f32 * bin_w + (bx as f32 + 0.5) * bin_w / grid_w as f32;
                        if y < -1.0 || y > hf || x < -1.0 || x > wf {
                            continue;
                        }
                        sum += bilinear(plane, w, h, x.max(0.0), y.max(0.0));
                    }
                }
                sum / count
            })?
        } else {
            roi.pool(self.pooled, |plane, px, py| {
                let hs = (y1 + py as f32 * bin_h).clamp(0.0, hf);
                let ws = (x1 + px as f32 * bin_w).clamp(0.0, wf);
                let he = (y1 + (py + 1) as f32 * bin_h).clamp(0.0, hf);
                let we = (x1 + (px + 1) as f32 * bin_w).clamp(0.0, wf);
                if he <= hs || we <= ws {
                    return 0.0;
                }
                let (grid_h, grid_w) = (samples(he - hs), samples(we - ws));
                let mut sum = 0.0;
                for by in 0..grid_h {
                    let y = hs + (by as f32 + 0.5) * bin_h / grid_h as f32;
                    for bx in 0..grid_w {
                        let x = ws + (bx as f32 + 0.5) * bin_w / grid_w as f32;
                        sum += bilinear(plane, w, h, x, y);
                    }
                }
                sum / (grid_h * grid_w) as f32
            })?
        };
        Ok(vec![top])
    }
}
