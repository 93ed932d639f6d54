//! Interp: `0=resize_type` (1 nearest, 2 bilinear, 3 bicubic) `1=height_scale 2=width_scale
//! 3=output_height 4=output_width 6=align_corner`. 3-D blobs resize both axes, 2-D blobs their
//! width, 1-D blobs become `outw × outh` planes of each value. The output size is the params'
//! when both are given, else the input's times the scales (truncated). Sources follow ncnn's
//! coefficient tables: half-pixel centres (or aligned corners), taps moved inside the image at
//! its borders; reads are clamped into the image where ncnn would read outside a 1-wide one.
//! `5=dynamic_target_size` (the size from a second blob) is not supported: a load error.

use std::sync::Arc;

use rayon::prelude::*;

use crate::error::{InputError, Result};
use crate::gpu::specialize::SpecValue;
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::pipelines::DeviceSide;
use crate::layer::run_options::RunOptions;
use crate::shaders::Shader;
use crate::tensor::{GpuMat, Mat};

/// Resizing by interpolation.
#[derive(Default)]
pub struct Interp {
    resize_type: i32,
    scale: [f32; 2],
    /// output width and height (0: from the scales)
    output: [usize; 2],
    align_corner: bool,
    gpu: Option<Arc<Pipeline>>,
}

/// One output's sources along an axis: the first source index and the weights of the
/// consecutive sources from it (2 bilinear, 4 bicubic starting one before `s`).
#[derive(Clone, Copy, Debug)]
struct Tap {
    s: isize,
    weights: [f32; 4],
}

/// The source coordinate of output `d` before flooring.
fn source(d: usize, scale: f64, align: bool) -> f32 {
    if align {
        (d as f64 * scale) as f32
    } else {
        ((d as f64 + 0.5) * scale - 0.5) as f32
    }
}

fn linear_taps(size: usize, out: usize, scale: f64, align: bool) -> Vec<Tap> {
    (0..out)
        .map(|d| {
            let fx = source(d, scale, align);
            let mut s = fx.floor() as isize;
            let mut f = fx - s as f32;
            if s < 0 {
                s = 0;
                f = 0.0;
            }
            if s >= size as isize - 1 {
                s = size as isize - 2;
                f = 1.0;
            }
            Tap {
                s,
                weights: [1.0 - f, f, 0.0, 0.0],
            }
        })
        .collect()
}

fn cubic_taps(size: usize, out: usize, scale: f64, align: bool) -> Vec<Tap> {
    const A: f32 = -0.75;
    let n = size as isize;
    (0..out)
        .map(|d| {
            let fx = source(d, scale, align);
            let mut s = fx.floor() as isize;
            let f = fx - s as f32;
            let (f0, f1, f2) = (f + 1.0, f, 1.0 - f);
            let c0 = A * f0 * f0 * f0 - 5.0 * A * f0 * f0 + 8.0 * A * f0 - 4.0 * A;
            let c1 = (A + 2.0) * f1 * f1 * f1 - (A + 3.0) * f1 * f1 + 1.0;
            let c2 = (A + 2.0) * f2 * f2 * f2 - (A + 3.0) * f2 * f2 + 1.0;
            let mut c = [c0, c1, c2, 1.0 - c0 - c1 - c2];
            // taps outside the image fold into the border ones, as ncnn's tables do
            if s <= -1 {
                s = 1;
                c = [c[0] + c[1] + c[2], c[3], 0.0, 0.0];
            }
            if s == 0 {
                s = 1;
                c = [c[0] + c[1], c[2], c[3], 0.0];
            }
            if s == n - 2 {
                s = n - 3;
                c = [0.0, c[0], c[1], c[2] + c[3]];
            }
            if s >= n - 1 {
                s = n - 3;
                c = [0.0, 0.0, c[0], 1.0 - c[0]];
            }
            Tap {
                s: s - 1,
                weights: c,
            }
        })
        .collect()
}

fn nearest_taps(size: usize, out: usize, step: f32) -> Vec<Tap> {
    (0..out)
        .map(|d| Tap {
            s: ((d as f32 * step) as isize).min(size as isize - 1),
            weights: [1.0, 0.0, 0.0, 0.0],
        })
        .collect()
}

impl Interp {
    /// The output width and height for an input of `w × h`.
    fn out_size(&self, w: usize, h: usize) -> [usize; 2] {
        let [ow, oh] = self.output;
        if ow > 0 && oh > 0 {
            [ow, oh]
        } else {
            let [hs, ws] = self.scale;
            [(w as f32 * ws) as usize, (h as f32 * hs) as usize]
        }
    }

    /// Source extent per output extent along an axis (0 width, 1 height): from the sizes when
    /// the params give them, else the inverse scale; ends to ends when corners align
    /// (bilinear and bicubic).
    fn step(&self, axis: usize, size: usize, out: usize) -> f64 {
        if self.align_corner && self.resize_type != 1 && out > 1 {
            (size as f64 - 1.0) / (out as f64 - 1.0)
        } else if self.output.iter().all(|o| *o > 0) {
            size as f64 / out as f64
        } else {
            // the params' scales are height, width
            1.0 / f64::from(self.scale[1 - axis])
        }
    }

    /// The taps of every output along an axis.
    fn taps(&self, axis: usize, size: usize, out: usize) -> Vec<Tap> {
        let step = self.step(axis, size, out);
        match self.resize_type {
            1 => nearest_taps(size, out, step as f32),
            2 => linear_taps(size, out, step, self.align_corner),
            _ => cubic_taps(size, out, step, self.align_corner),
        }
    }

    fn check_size(&self, w: usize, h: usize, out: [usize; 2]) -> Result<()> {
        if out.contains(&0) || w == 0 || h == 0 {
            return Err(InputError::Output {
                what: "a resize to or from nothing (w, h, out w, out h)",
                shape: vec![w, h, out[0], out[1]],
            }
            .into());
        }
        Ok(())
    }
}

/// Resizes one plane of `w × h` by the taps.
fn resize_plane(src: &[f32], w: usize, h: usize, xs: &[Tap], ys: &[Tap], dst: &mut [f32]) {
    let at = |y: isize, x: isize| {
        src[y.clamp(0, h as isize - 1) as usize * w + x.clamp(0, w as isize - 1) as usize]
    };
    let ow = xs.len();
    for (oy, ty) in ys.iter().enumerate() {
        for (ox, tx) in xs.iter().enumerate() {
            let mut v = 0.0;
            for (j, wy) in ty.weights.iter().enumerate() {
                if *wy == 0.0 {
                    continue;
                }
                let row: f32 = tx
                    .weights
                    .iter()
                    .enumerate()
                    .map(|(i, wx)| at(ty.s + j as isize, tx.s + i as isize) * wx)
                    .sum();
                v += row * wy;
            }
            dst[oy * ow + ox] = v;
        }
    }
}

impl Layer for Interp {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some())
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        let allowed = "resize_type 1 (nearest), 2 (bilinear) or 3 (bicubic)";
        self.resize_type = pd.int_in(0, 0, 1..=3, allowed)?;
        self.scale = [pd.float(1, 1.0), pd.float(2, 1.0)];
        let size = |id: u32| pd.int(id, 0).max(0) as usize;
        self.output = [size(4), size(3)];
        pd.int_in(5, 0, 0..=0, "0: dynamic target sizes are not supported")?;
        self.align_corner = pd.int(6, 0) != 0;
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        let values = [
            (0, SpecValue::I32(self.resize_type)),
            (1, SpecValue::I32(i32::from(self.align_corner))),
        ];
        self.gpu = gpu
            .map(|gpu| gpu.pipeline(Shader::Interp.module(), &values))
            .transpose()?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[(u8, [usize; 4])]) -> bool {
        bottoms.iter().all(|&(dims, [w, h, _, _])| {
            let out = self.out_size(w, h);
            dims == 3 && self.check_size(w, h, out).is_ok()
        })
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let pipeline = self.gpu.ready()?.clone();
        let ctx = rec.context();
        let (w, h) = (bottom.w, bottom.h);
        let out = self.out_size(w, h);
        self.check_size(w, h, out)?;
        let top = GpuMat::alloc(ctx, 3, [out[0], out[1], bottom.c], 1, bottom.options);
        let mut words = bottom.shape_words().to_vec();
        words.extend(top.shape_words());
        words.push((self.step(0, w, out[0]) as f32).to_bits());
        words.push((self.step(1, h, out[1]) as f32).to_bits());
        rec.dispatch(&pipeline, &[bottom, &top], &words, top.grid())?;
        Ok(top)
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let x = bottom.to_values();
        let [w, h, _, c] = bottom.shape();
        match bottom.dims {
            1 => {
                // each value becomes a plane
                let [ow, oh] = self.out_size(1, 1);
                self.check_size(1, 1, [ow, oh])?;
                let out: Vec<f32> = x
                    .iter()
                    .flat_map(|v| std::iter::repeat_n(*v, ow * oh))
                    .collect();
                Mat::from_shape_values(3, [ow, oh, 1, w], &out)
            }
            2 => {
                // the width only: each row is a 1-high plane
                let [ow, _] = self.out_size(w, h);
                self.check_size(w, h, [ow, h])?;
                let xs = self.taps(0, w, ow);
                let ys = [Tap {
                    s: 0,
                    weights: [1.0, 0.0, 0.0, 0.0],
                }];
                let mut out = vec![0.0f32; ow * h];
                out.par_chunks_mut(ow)
                    .zip(x.par_chunks(w))
                    .for_each(|(dst, src)| resize_plane(src, w, 1, &xs, &ys, dst));
                Mat::from_shape_values(2, [ow, h, 1, 1], &out)
            }
            3 => {
                let out = self.out_size(w, h);
                self.check_size(w, h, out)?;
                let [ow, oh] = out;
                let (xs, ys) = (self.taps(0, w, ow), self.taps(1, h, oh));
                let mut values = vec![0.0f32; ow * oh * c];
                values
                    .par_chunks_mut(ow * oh)
                    .zip(x.par_chunks(w * h))
                    .for_each(|(dst, src)| resize_plane(src, w, h, &xs, &ys, dst));
                Mat::from_shape_values(3, [ow, oh, 1, c], &values)
            }
            d => Err(InputError::Dims {
                got: d,
                takes: "1-D to 3-D blobs",
            }
            .into()),
        }
    }
}
