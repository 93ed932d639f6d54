//! Interp: `0=resize_type` (1 nearest, 2 bilinear, 3 bicubic) `1=height_scale 2=width_scale
//! 3=output_height 4=output_width 6=align_corner`. 3-D blobs resize both axes, 2-D blobs their
//! width, 1-D blobs become `outw × outh` planes of each value. The output size is the params'
//! when both are given, else the input's times the scales (truncated). Sources follow ncnn's
//! coefficient tables: half-pixel centres (or aligned corners), taps moved inside the image at
//! its borders; reads are clamped into the image where ncnn would read outside a 1-wide one.
//! `5=dynamic_target_size`: the size is a second blob's w and h; `9=` a size expression over the
//! inputs' extents (`"*(0w,2),0h"`: w, then h, which defaults to the input's).

use rayon::prelude::*;

use crate::error::{Error, InputError, Result};
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::contract::{GpuSetup, Layer, Packs, Support};
use crate::layer::params::ParamDict;
use crate::layer::rows::Rows;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::expression::{Extents, eval_list, inputs_read};
use crate::layer::shared::pipelines::{DeviceSide, PackPipelines};
use crate::shaders::Shader;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat};

/// Resizing by interpolation.
#[derive(Default)]
pub struct Interp {
    resize_type: i32,
    scale: [f32; 2],
    /// output width and height (0: from the scales)
    output: [usize; 2],
    align_corner: bool,
    /// `5=1`: the output size is the second input's.
    dynamic: bool,
    /// `9=`: the output size as an expression, and how many inputs it reads.
    size_expr: Option<(String, usize)>,
    gpu: Option<PackPipelines>,
}

/// One forward's output size, and whether the steps come from the sizes (else the scales).
#[derive(Clone, Copy, Debug)]
struct Sizing {
    out: [usize; 2],
    by_size: bool,
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
    /// The output width and height for inputs of `extents` (the first resized, of `dims`): the
    /// expression's, the second input's, the params', or the first's times the scales (a 1-D
    /// input's values become planes of 1 × 1 times the scales, as ncnn sizes them).
    fn sizing(&self, dims: u8, extents: &[Extents]) -> Result<Sizing> {
        let [w, h, ..] = *extents.first().ok_or(InputError::Count {
            got: 0,
            expected: "1 or more",
        })?;
        let given = self.output.iter().all(|o| *o > 0);
        let extent = |v: i32| usize::try_from(v).unwrap_or(0);
        if let Some((expr, _)) = &self.size_expr {
            let out = match eval_list(expr, extents)?[..] {
                [ow] => [extent(ow), h],
                [ow, oh] => [extent(ow), extent(oh)],
                ref other => {
                    return Err(Error::BadParam {
                        id: 9,
                        value: format!("{expr} = {other:?}"),
                        allowed: "one or two sizes: w, or w and h",
                    });
                }
            };
            return Ok(Sizing { out, by_size: true });
        }
        if self.dynamic {
            let [rw, rh, ..] = *extents.get(1).ok_or(InputError::Count {
                got: extents.len(),
                expected: "2 with dynamic_target_size",
            })?;
            return Ok(Sizing {
                out: [rw, rh],
                by_size: true,
            });
        }
        let out = if given {
            self.output
        } else {
            let [hs, ws] = self.scale;
            let (w, h) = if dims == 1 { (1, 1) } else { (w, h) };
            [(w as f32 * ws) as usize, (h as f32 * hs) as usize]
        };
        Ok(Sizing {
            out,
            by_size: given,
        })
    }

    /// Source extent per output extent along an axis (0 width, 1 height): from the sizes when
    /// `by_size`, else the inverse scale; ends to ends when corners align (bilinear and
    /// bicubic).
    fn step(&self, axis: usize, size: usize, out: usize, by_size: bool) -> f64 {
        if self.align_corner && self.resize_type != 1 && out > 1 {
            (size as f64 - 1.0) / (out as f64 - 1.0)
        } else if by_size {
            size as f64 / out as f64
        } else {
            // the params' scales are height, width
            1.0 / f64::from(self.scale[1 - axis])
        }
    }

    /// The taps of every output along an axis.
    fn taps(&self, axis: usize, size: usize, out: usize, by_size: bool) -> Vec<Tap> {
        let step = self.step(axis, size, out, by_size);
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
        let many = self.dynamic || self.size_expr.as_ref().is_some_and(|(_, n)| *n > 1);
        Support {
            one_blob_only: !many,
            ..Support::ONE_BLOB
                .gpu(self.gpu.is_some())
                .packs(Packs::UP_TO_4)
        }
    }

    /// Pack4 for 3-D blobs, a lane per channel; 1-D and 2-D blobs resize as pack1.
    fn gpu_packs(&self, bottoms: &[BlobShape]) -> Option<Packs> {
        (bottoms.first().map_or(0, |b| b.dims) != 3).then_some(Packs::ONE)
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let extents: Vec<Extents> = bottoms.iter().map(Mat::shape).collect();
        let sizing = self.sizing(bottoms.first().map_or(0, |b| b.dims), &extents)?;
        Ok(vec![self.resize(&bottoms[0], sizing)?])
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let extents: Vec<Extents> = bottoms.iter().map(GpuMat::shape).collect();
        let dims = bottoms.first().map_or(0, |b| b.dims);
        let sizing = self.sizing(dims, &extents)?;
        Ok(vec![self.resize_gpu(rec, &bottoms[0], sizing)?])
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        let allowed = "resize_type 1 (nearest), 2 (bilinear) or 3 (bicubic)";
        self.resize_type = pd.int_in(0, 0, 1..=3, allowed)?;
        self.scale = [pd.float(1, 1.0), pd.float(2, 1.0)];
        let size = |id: u32| pd.int(id, 0).max(0) as usize;
        self.output = [size(4), size(3)];
        self.dynamic = pd.int_in(5, 0, 0..=1, "0, or 1: the size from a second input")? == 1;
        self.align_corner = pd.int(6, 0) != 0;
        self.size_expr = pd
            .string(9)
            .filter(|e| !e.is_empty())
            .map(|e| (e.to_string(), inputs_read(e)));
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        let values = [
            (0, SpecValue::I32(self.resize_type)),
            (1, SpecValue::I32(i32::from(self.align_corner))),
        ];
        self.gpu = gpu
            .map(|gpu| {
                PackPipelines::create(
                    gpu,
                    &[
                        (1, Shader::Interp.module()),
                        (4, Shader::InterpPack4.module()),
                    ],
                    &values,
                )
            })
            .transpose()?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        let extents: Vec<Extents> = bottoms.iter().map(|b| b.shape).collect();
        let Some(&BlobShape {
            dims,
            shape: [w, h, ..],
        }) = bottoms.first()
        else {
            return false;
        };
        // 2-D blobs resize their width: rows are 1-high planes on the device
        let h = if dims == 2 { 1 } else { h };
        (dims == 2 || dims == 3)
            && self
                .sizing(dims, &extents)
                .is_ok_and(|s| self.check_size(w, h, s.out).is_ok())
    }

    /// Integral height scales with the sizes from the scales: a band of rows resizes with the
    /// whole input's steps. Nearest by powers of two only, whose steps are exact (another
    /// scale's rounded step may floor a band's row to another source row); bilinear reads a
    /// row more on each side, bicubic two.
    fn gpu_rows(&self, blob: BlobShape) -> Option<Rows> {
        let (dims, [w, h, _, c]) = (blob.dims, blob.shape);
        let [hs, ws] = self.scale;
        let up = hs as usize;
        let integral = hs >= 1.0 && hs == up as f32 && up <= 64;
        let by_scale = self.output == [0, 0] && !self.dynamic && self.size_expr.is_none();
        let (exact, reach) = match self.resize_type {
            1 => (up.is_power_of_two(), 0),
            2 => (!self.align_corner, 1),
            _ => (!self.align_corner, 2),
        };
        (dims == 3 && integral && by_scale && exact).then(|| Rows {
            down: 1,
            up,
            before: reach,
            after: reach,
            out: [(w as f32 * ws) as usize, h * up, c],
        })
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let sizing = self.sizing(bottom.dims, &[bottom.shape()])?;
        self.resize_gpu(rec, bottom, sizing)
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let sizing = self.sizing(bottom.dims, &[bottom.shape()])?;
        self.resize(bottom, sizing)
    }
}

impl Interp {
    fn resize_gpu(
        &self,
        rec: &mut Recorder<'_>,
        bottom: &GpuMat,
        sizing: Sizing,
    ) -> Result<GpuMat> {
        let pipeline = self.gpu.ready()?.for_mat(bottom)?.clone();
        let ctx = rec.context();
        let (w, h) = (bottom.w, bottom.h);
        let Sizing { mut out, by_size } = sizing;
        // a 2-D blob's rows are its view's channels, each a 1-high plane kept 1 high
        let rows = bottom.dims == 2;
        if rows {
            out[1] = 1;
        }
        self.check_size(w, h, out)?;
        let view = [out[0], out[1], bottom.c];
        let top = GpuMat::alloc(ctx, bottom.dims, view, bottom.elempack, bottom.options)?;
        let mut words = bottom.shape_words().to_vec();
        words.extend(top.shape_words());
        words.push((self.step(0, w, out[0], by_size) as f32).to_bits());
        words.push((self.step(1, h, out[1], by_size || rows) as f32).to_bits());
        rec.dispatch(&pipeline, &[bottom, &top], &words, top.grid())?;
        Ok(top)
    }

    fn resize(&self, bottom: &Mat, sizing: Sizing) -> Result<Mat> {
        let x = bottom.to_values();
        let [w, h, _, c] = bottom.shape();
        let by_size = sizing.by_size;
        match bottom.dims {
            1 => {
                // each value becomes a plane
                let [ow, oh] = sizing.out;
                self.check_size(1, 1, [ow, oh])?;
                let out: Vec<f32> = x
                    .iter()
                    .flat_map(|v| std::iter::repeat_n(*v, ow * oh))
                    .collect();
                Mat::from_shape_values(3, [ow, oh, 1, w], &out)
            }
            2 => {
                // the width only: each row is a 1-high plane
                let [ow, _] = sizing.out;
                self.check_size(w, h, [ow, h])?;
                let xs = self.taps(0, w, ow, by_size);
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
                let out = sizing.out;
                self.check_size(w, h, out)?;
                let [ow, oh] = out;
                let (xs, ys) = (self.taps(0, w, ow, by_size), self.taps(1, h, oh, by_size));
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
