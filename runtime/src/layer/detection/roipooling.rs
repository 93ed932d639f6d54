//! ROIPooling: `0=pooled_width 1=pooled_height 2=spatial_scale`. Fast R-CNN's max pooling of
//! one box of a feature map: the box scaled and rounded to whole positions, split into
//! `pooled_width × pooled_height` bins (each from the floor of its start to the ceiling of its
//! end), each bin's maximum (0 for a bin outside the map). On the CPU, as ncnn's.

use crate::error::Result;
use crate::layer::contract::{Layer, Support};
use crate::layer::detection::roi::Roi;
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::tensor::Mat;

/// Max pooling of a region of interest.
#[derive(Default)]
pub struct ROIPooling {
    pooled: [usize; 2],
    spatial_scale: f32,
}

impl Layer for ROIPooling {
    fn support(&self) -> Support {
        Support::MANY
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.pooled = [pd.int(0, 0).max(0) as usize, pd.int(1, 0).max(0) as usize];
        self.spatial_scale = pd.float(2, 1.0);
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let roi = Roi::of(bottoms, "ROIPooling")?;
        let [x1, y1, x2, y2] = roi.bbox.map(|v| (v * self.spatial_scale).round() as i64);
        let (roi_w, roi_h) = ((x2 - x1 + 1).max(1), (y2 - y1 + 1).max(1));
        let bin_w = roi_w as f32 / self.pooled[0] as f32;
        let bin_h = roi_h as f32 / self.pooled[1] as f32;
        let (w, h) = (roi.w as i64, roi.h as i64);
        let top = roi.pool(self.pooled, |plane, px, py| {
            let start = |origin: i64, i: usize, bin: f32, n: i64| {
                (origin + (i as f32 * bin).floor() as i64).clamp(0, n)
            };
            let end = |origin: i64, i: usize, bin: f32, n: i64| {
                (origin + ((i + 1) as f32 * bin).ceil() as i64).clamp(0, n)
            };
            let (hs, he) = (start(y1, py, bin_h, h), end(y1, py, bin_h, h));
            let (ws, we) = (start(x1, px, bin_w, w), end(x1, px, bin_w, w));
            if he <= hs || we <= ws {
                return 0.0;
            }
            let at = |x: i64, y: i64| plane[(y * w + x) as usize];
            let mut max = at(ws, hs);
            for y in hs..he {
                for x in ws..we {
                    max = max.max(at(x, y));
                }
            }
            max
        })?;
        Ok(vec![top])
    }
}
