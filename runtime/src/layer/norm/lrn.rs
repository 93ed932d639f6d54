//! LRN, local response normalization: `0=region_type` (0 across channels, 1 within a channel)
//! `1=local_size 2=alpha 3=beta 4=bias`: `x * (bias + alpha * Σx² / n)^-beta` over the
//! `local_size` channels around (n = local_size) or the `local_size²` window around, zeros
//! outside (n = local_size²).

use rayon::prelude::*;

use crate::error::Result;
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::contract::{GpuSetup, Layer, Packs, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::flat::per_element;
use crate::layer::shared::grain::min_items;
use crate::layer::shared::kernels;
use crate::layer::shared::pipelines::{DeviceSide, PackPipelines};
use crate::layer::shared::view::{channel_planes, planar};
use crate::shaders::Shader;
use crate::tensor::BlobShape;
use crate::tensor::pool::Scratch;
use crate::tensor::{ElemType, GpuMat, Mat};

/// Local response normalization.
#[derive(Default)]
pub struct Lrn {
    within_channel: bool,
    local_size: usize,
    alpha: f32,
    beta: f32,
    bias: f32,
    /// pack1 and pack4 buffer pipelines (alexnet's LRNs sit between pack4 convolutions and
    /// poolings: two repacking passes each without the pack4 one).
    gpu: Option<PackPipelines>,
}

impl Lrn {
    /// `o[i] = x[i] · (bias + alpha · o[i] / n)^-beta`, `o` holding the sums of squares: where
    /// the base is sure to be a positive normal number, as e^(−beta · ln base), which
    /// vectorizes (libm's `powf` is one call per value).
    fn scale(&self, o: &mut [f32], x: &[f32], n: f32) {
        let (bias, alpha, beta) = (self.bias, self.alpha / n, self.beta);
        if bias >= f32::MIN_POSITIVE && bias.is_finite() && alpha >= 0.0 {
            kernels::zip_with(o, x, |s, v| {
                let base = (bias + alpha * s).min(f32::MAX);
                v * kernels::exp(-beta * kernels::ln(base))
            });
        } else {
            kernels::zip_with(o, x, |s, v| v * (bias + alpha * s).powf(-beta));
        }
    }
}

impl Layer for Lrn {
    fn support(&self) -> Support {
        Support::ONE_BLOB
            .gpu(self.gpu.is_some())
            .packs(Packs::UP_TO_4)
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        let allowed = "region_type 0 (across channels) or 1 (within a channel)";
        self.within_channel = pd.int_in(0, 0, 0..=1, allowed)? == 1;
        self.local_size = pd.int_in(1, 5, 1..=i32::MAX, "local_size of at least 1")? as usize;
        self.alpha = pd.float(2, 1.0);
        self.beta = pd.float(3, 0.75);
        self.bias = pd.float(4, 1.0);
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        let values = [
            (0, SpecValue::I32(i32::from(self.within_channel))),
            (1, SpecValue::I32(self.local_size as i32)),
            (2, SpecValue::F32(self.alpha)),
            (3, SpecValue::F32(self.beta)),
            (4, SpecValue::F32(self.bias)),
        ];
        let modules = [(1, Shader::Lrn.module()), (4, Shader::LrnPack4.module())];
        self.gpu = gpu
            .map(|gpu| PackPipelines::create(gpu, &modules, &values))
            .transpose()?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms.iter().all(|BlobShape { dims, .. }| *dims == 3)
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let pipeline = self.gpu.ready()?.for_mat(bottom)?.clone();
        let top = bottom.alloc_like(rec.context())?;
        per_element(rec, &pipeline, bottom, top)
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        planar(bottom.dims)?;
        let [w, h, _, c] = bottom.shape();
        let plane = w * h;
        // the input's own planes where it is fp32 pack1 (no copy), the output written in place
        let (x, step) = channel_planes(bottom);
        let mut sq = Scratch::any(c * plane);
        sq.par_chunks_mut(plane.max(1))
            .with_min_len(min_items(plane))
            .enumerate()
            .for_each(|(q, s)| {
                let xs = &x[q * step..q * step + plane];
                s.iter_mut().zip(xs).for_each(|(s, v)| *s = v * v);
            });
        let sq = &sq[..];
        let half = self.local_size / 2;
        let mut top = Mat::for_writing(3, [w, h, 1, c], 1, ElemType::F32)?;
        let cstep = top.cstep;
        top.f32_mut()?
            .par_chunks_mut(cstep.max(1))
            .with_min_len(min_items(plane * self.local_size))
            .enumerate()
            .for_each(|(q, o)| {
                let o = &mut o[..plane];
                let xs = &x[q * step..q * step + plane];
                // o holds each value's sum of squares first, then the value scaled
                let n = if self.within_channel {
                    let sq = &sq[q * plane..(q + 1) * plane];
                    for y in 0..h {
                        for xx in 0..w {
                            let mut sum = 0.0;
                            for yy in y.saturating_sub(half)..(y + self.local_size - half).min(h) {
                                for xw in
                                    xx.saturating_sub(half)..(xx + self.local_size - half).min(w)
                                {
                                    sum += sq[yy * w + xw];
                                }
                            }
                            o[y * w + xx] = sum;
                        }
                    }
                    (self.local_size * self.local_size) as f32
                } else {
                    let (lo, hi) = (q.saturating_sub(half), (q + self.local_size - half).min(c));
                    // the output's old values are a recycled buffer's: start from zeros
                    o.fill(0.0);
                    for k in lo..hi {
                        kernels::zip_with(o, &sq[k * plane..(k + 1) * plane], |s, v| s + v);
                    }
                    self.local_size as f32
                };
                self.scale(o, xs, n);
            });
        Ok(top)
    }
}
