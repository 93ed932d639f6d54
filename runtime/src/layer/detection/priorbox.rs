//! PriorBox: `0=min_sizes 1=max_sizes 2=aspect_ratios 3-6=variances 7=flip 8=clip
//! 9=image_width 10=image_height 11=step_width 12=step_height 13=offset 14=step_mmdetection
//! 15=center_mmdetection`. SSD's anchor boxes over a feature map (the first input: only its
//! `w × h` count) for an image (the second input's `w × h`, or the params'): per position, a
//! box of each min size, of `sqrt(min · max)`, and of each aspect ratio (and its flip), as
//! corners relative to the image, then a row of the four variances per box (`2 × 4n`). With
//! one input, no image size and no max sizes, MXNet's `MultiBoxPrior`: boxes relative to the
//! feature map, one per size at ratio 1 and one per further ratio at the first size (`4n`).
//!
//! The boxes depend on the inputs' sizes alone: on the GPU they are computed on the host from
//! the device blobs' shapes and uploaded once per shapes, so that no feature map comes down
//! for them and later runs upload nothing (ncnn's Vulkan PriorBox computes them in a shader
//! each run). The kept mat is shared: a reader that writes in place gets a copy (the net's
//! rule for shared buffers).

use std::sync::{Mutex, PoisonError};

use crate::OptionSet;
use crate::error::{Error, InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::tensor::{GpuMat, Mat};

/// ncnn's "not given" for the image size and steps.
const UNSET: f32 = -233.0;

/// SSD's (or MXNet's) prior boxes.
#[derive(Default)]
pub struct PriorBox {
    min_sizes: Vec<f32>,
    max_sizes: Vec<f32>,
    aspect_ratios: Vec<f32>,
    variances: [f32; 4],
    flip: bool,
    clip: bool,
    image: [f32; 2],
    step: [f32; 2],
    offset: f32,
    step_mmdetection: bool,
    center_mmdetection: bool,
    /// The variant the boxes go up for, in a GPU net.
    gpu: Option<OptionSet>,
    /// The boxes on the device, with the input shapes they were made for.
    uploaded: Mutex<Option<(Vec<[usize; 4]>, GpuMat)>>,
}

impl PriorBox {
    /// MXNet's form: one input, no image size, no max sizes.
    fn mxnet(&self, inputs: usize) -> bool {
        inputs == 1 && self.image == [UNSET; 2] && self.max_sizes.is_empty()
    }

    /// MXNet's `MultiBoxPrior` boxes over a `w × h` map.
    fn mxnet_boxes(&self, w: usize, h: usize) -> Vec<f32> {
        let step = |s: f32, n: usize| if s == UNSET { 1.0 / n as f32 } else { s };
        let (step_w, step_h) = (step(self.step[0], w), step(self.step[1], h));
        let mut out = Vec::new();
        for i in 0..h {
            let cy = self.offset * step_h + i as f32 * step_h;
            let mut cx = self.offset * step_w;
            for _ in 0..w {
                // (size · h / w) in ncnn's order: the float times an int, then over an int
                let aspect = |size: f32| size * h as f32 / w as f32;
                let mut push = |cw: f32, ch: f32| out.extend([cx - cw, cy - ch, cx + cw, cy + ch]);
                for &size in &self.min_sizes {
                    push(aspect(size) / 2.0, size / 2.0);
                }
                let size = self.min_sizes.first().copied().unwrap_or(0.0);
                for &ratio in self.aspect_ratios.iter().skip(1) {
                    let r = ratio.sqrt();
                    push(aspect(size) * r / 2.0, size / r / 2.0);
                }
                cx += step_w;
            }
        }
        out
    }

    /// SSD's boxes over a `w × h` map of an `image_w × image_h` image.
    fn ssd_boxes(&self, w: usize, h: usize, [image_w, image_h]: [f32; 2]) -> Vec<f32> {
        let step = |s: f32, image: f32, n: usize| match (s == UNSET, self.step_mmdetection) {
            (false, _) => s,
            (true, false) => image / n as f32,
            (true, true) => (image / n as f32).ceil(),
        };
        let (step_w, step_h) = (
            step(self.step[0], image_w, w),
            step(self.step[1], image_h, h),
        );
        let mut out = Vec::new();
        for i in 0..h {
            let (mut cx, cy) = if self.center_mmdetection {
                let cy = self.offset * (step_h - 1.0) + i as f32 * step_h;
                (self.offset * (step_w - 1.0), cy)
            } else {
                (
                    self.offset * step_w,
                    self.offset * step_h + i as f32 * step_h,
                )
            };
            for _ in 0..w {
                let mut push = |bw: f32, bh: f32| {
                    out.extend([
                        (cx - bw * 0.5) / image_w,
                        (cy - bh * 0.5) / image_h,
                        (cx + bw * 0.5) / image_w,
                        (cy + bh * 0.5) / image_h,
                    ])
                };
                for (k, &min) in self.min_sizes.iter().enumerate() {
                    push(min, min);
                    if let Some(&max) = self.max_sizes.get(k) {
                        let s = (min * max).sqrt();
                        push(s, s);
                    }
                    for &ar in &self.aspect_ratios {
                        let (bw, bh) = (min * ar.sqrt(), min / ar.sqrt());
                        push(bw, bh);
                        if self.flip {
                            push(bh, bw);
                        }
                    }
                }
                cx += step_w;
            }
        }
        out
    }

    /// The output for inputs of these shapes (`[w, h, d, c]`): the feature map's, then the
    /// image's where the params do not give its size.
    fn boxes(&self, bottoms: &[[usize; 4]]) -> Result<Mat> {
        let Some(map) = bottoms.first() else {
            return Err(InputError::Count {
                got: 0,
                expected: "the feature map, then the image unless its size is given",
            }
            .into());
        };
        let [w, h, ..] = *map;
        let clip = |mut v: Vec<f32>| {
            if self.clip {
                v.iter_mut().for_each(|x| *x = x.clamp(0.0, 1.0));
            }
            v
        };
        if self.mxnet(bottoms.len()) {
            let boxes = clip(self.mxnet_boxes(w, h));
            return Mat::from_numpy(&[boxes.len()], &boxes);
        }
        let image = |i: usize, given: f32| match (given == UNSET, bottoms.get(1)) {
            (false, _) => Ok(given),
            (true, Some(image)) => Ok(image[i] as f32),
            (true, None) => Err(Error::from(InputError::Count {
                got: 1,
                expected: "the feature map and the image, whose size the params do not give",
            })),
        };
        let image = [image(0, self.image[0])?, image(1, self.image[1])?];
        let boxes = clip(self.ssd_boxes(w, h, image));
        let n = boxes.len();
        let variances = self.variances.iter().copied().cycle().take(n);
        let rows: Vec<f32> = boxes.into_iter().chain(variances).collect();
        Mat::from_numpy(&[2, n], &rows)
    }
}

impl Layer for PriorBox {
    fn support(&self) -> Support {
        // only the inputs' sizes are read: any layout, on either side, as they come (not
        // images: the output is 2-D, which image mats cannot hold)
        Support::MANY
            .any_cpu_layout()
            .gpu(self.gpu.is_some())
            .gpu_any_packing()
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.min_sizes = pd.floats(0);
        self.max_sizes = pd.floats(1);
        self.aspect_ratios = pd.floats(2);
        self.variances = [
            pd.float(3, 0.1),
            pd.float(4, 0.1),
            pd.float(5, 0.2),
            pd.float(6, 0.2),
        ];
        self.flip = pd.int(7, 1) != 0;
        self.clip = pd.int(8, 0) != 0;
        self.image = [pd.int(9, 0) as f32, pd.int(10, 0) as f32];
        self.step = [pd.float(11, UNSET), pd.float(12, UNSET)];
        self.offset = pd.float(13, 0.0);
        self.step_mmdetection = pd.int(14, 0) != 0;
        self.center_mmdetection = pd.int(15, 0) != 0;
        if !self.max_sizes.is_empty() && self.max_sizes.len() != self.min_sizes.len() {
            return Err(Error::BadParam {
                id: 1,
                value: format!("{} max sizes", self.max_sizes.len()),
                allowed: "one max size per min size (0), or none",
            });
        }
        if self.min_sizes.is_empty() {
            return Err(Error::BadParam {
                id: 0,
                value: "no min sizes".into(),
                allowed: "at least one min size",
            });
        }
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = gpu.map(|g| g.options);
        // boxes of another context or variant are not these pipelines'
        *self
            .uploaded
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner) = None;
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let shapes: Vec<[usize; 4]> = bottoms.iter().map(Mat::shape).collect();
        Ok(vec![self.boxes(&shapes)?])
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let options = self.gpu.ok_or(Error::NotLoaded {
            what: "PriorBox's GPU variant",
        })?;
        let shapes: Vec<[usize; 4]> = bottoms.iter().map(GpuMat::shape).collect();
        let mut uploaded = self.uploaded.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((made_for, boxes)) = uploaded.as_ref()
            && *made_for == shapes
        {
            return Ok(vec![boxes.clone()]);
        }
        // uploaded and waited for here, apart from the run: a kept mat is whole even where
        // the run's own submission fails
        let boxes = GpuMat::upload(rec.context(), &self.boxes(&shapes)?, options)?;
        *uploaded = Some((shapes, boxes.clone()));
        Ok(vec![boxes])
    }
}
