//! PSROIPooling: `0=pooled_width 1=pooled_height 2=spatial_scale 3=output_dim`. R-FCN's
//! position-sensitive average pooling of one box: output channel `q`'s bin `(px, py)` averages
//! its own input channel, `(q · pooled_height + py) · pooled_width + px`, over the bin. The box's
//! corners are rounded to whole positions (the far corner one past) before scaling, the bins
//! run from the floor of their start to the ceiling of their end, clamped to the map; a bin
//! with nothing in it is 0. On the CPU, as ncnn's.

use rayon::prelude::*;

use crate::error::{InputError, Result};
use crate::layer::contract::{Layer, Support};
use crate::layer::detection::roi::Roi;
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::tensor::Mat;

/// Position-sensitive average pooling of a region of interest.
#[derive(Default)]
pub struct PSROIPooling {
    pooled: [usize; 2],
    spatial_scale: f32,
    output_dim: usize,
}

impl Layer for PSROIPooling {
    fn support(&self) -> Support {
        Support::MANY
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.pooled = [pd.int(0, 7).max(0) as usize, pd.int(1, 7).max(0) as usize];
        self.spatial_scale = pd.float(2, 0.0625);
        self.output_dim = pd.int(3, 0).max(0) as usize;
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let roi = Roi::of(bottoms, "PSROIPooling")?;
        let [pooled_w, pooled_h] = self.pooled;
        let bins = self.output_dim * pooled_w * pooled_h;
        if roi.c != bins {
            return Err(InputError::Values {
                what: "PSROIPooling's feature map channels (output_dim × pooled_w × pooled_h)",
                got: roi.c,
                expected: bins,
            }
            .into());
        }
        let s = self.spatial_scale;
        let [x1, y1, x2, y2] = roi.bbox;
        let (x1, y1) = (x1.round() * s, y1.round() * s);
        let (x2, y2) = ((x2 + 1.0).round() * s, (y2 + 1.0).round() * s);
        let bin_w = (x2 - x1).max(0.1) / pooled_w as f32;
        let bin_h = (y2 - y1).max(0.1) / pooled_h as f32;
        let (w, h) = (roi.w as i64, roi.h as i64);
        let span = |origin: f32, i: usize, bin: f32, n: i64| {
            let start = (origin + i as f32 * bin).floor() as i64;
            let end = (origin + (i + 1) as f32 * bin).ceil() as i64;
            (start.clamp(0, n), end.clamp(0, n))
        };
        let plane = roi.w * roi.h;
        let out: Vec<f32> = (0..bins)
            .into_par_iter()
            .map(|bin| {
                let (px, py) = (bin % pooled_w, bin / pooled_w % pooled_h);
                let src = &roi.planes[bin * plane..(bin + 1) * plane];
                let (hs, he) = span(y1, py, bin_h, h);
                let (ws, we) = span(x1, px, bin_w, w);
                if he <= hs || we <= ws {
                    return 0.0;
                }
                let mut sum = 0.0f32;
                for y in hs..he {
                    for x in ws..we {
                        sum += src[(y * w + x) as usize];
                    }
                }
                sum / ((he - hs) * (we - ws)) as f32
            })
            .collect();
        Ok(vec![Mat::from_numpy(
            &[self.output_dim, pooled_h, pooled_w],
            &out,
        )?])
    }
}
