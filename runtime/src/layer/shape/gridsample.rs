//! GridSample: `0=sample_type` (1 bilinear, 2 nearest, 3 bicubic) `1=padding_mode` (1 zeros,
//! 2 border, 3 reflection) `2=align_corner 3=permute_fusion`; inputs the image (3-D, or 4-D
//! sampled in 3-D, bicubic aside) and the grid of normalized coordinates (-1 to 1 across the
//! image): `[outh, outw, 2]` in numpy order (`[outd, outh, outw, 3]`), or with
//! `permute_fusion` `[2, outh, outw]` (`[3, outd, outh, outw]`). The output has the grid's
//! positions and the image's channels (PyTorch's `grid_sample`, ncnn's rounding: nearest
//! takes `floor(x + 0.5)`, bicubic pads each tap's coordinate alone).

use crate::error::{Error, InputError, Result};
use crate::gpu::specialize::SpecValue;
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::pipelines::DeviceSide;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat};
use rayon::prelude::*;
use std::sync::Arc;

/// Sampling an image at a grid's points.
#[derive(Default)]
pub struct GridSample {
    /// 1 bilinear, 2 nearest, 3 bicubic.
    sample: i32,
    /// 1 zeros, 2 border, 3 reflection.
    padding: i32,
    align_corner: bool,
    permute_fusion: bool,
    gpu: Option<Arc<Pipeline>>,
}

/// The numpy shapes of an image and a grid: the image's `[c, d, h, w]` (`d` 1 for a 3-D one)
/// and the output's `[d, h, w]`.
type Geometry = ([usize; 4], [usize; 3]);

impl GridSample {
    /// The image's and the output's extents, or the error for blobs that do not fit.
    fn geometry(&self, image: &[usize], grid: &[usize]) -> Result<Geometry> {
        let pf = self.permute_fusion;
        // the grid's points and its coordinates per point
        let (img, points, k) = match (image, grid) {
            (&[c, h, w], &[a, b, e]) => {
                let points = if pf { [1, b, e] } else { [1, a, b] };
                ([c, 1, h, w], points, if pf { a } else { e })
            }
            (&[c, d, h, w], &[a, b, e, f]) => {
                let points = if pf { [b, e, f] } else { [a, b, e] };
                ([c, d, h, w], points, if pf { a } else { f })
            }
            _ => {
                return Err(InputError::Mismatch {
                    a: image.to_vec(),
                    b: grid.to_vec(),
                    why: "(image, grid) do not fit: a 3-D image takes a 3-D grid, a 4-D one a 4-D grid",
                }
                .into());
            }
        };
        if k != image.len() - 1 {
            return Err(InputError::Values {
                what: "coordinates per grid point",
                got: k,
                expected: image.len() - 1,
            }
            .into());
        }
        if image.len() == 4 && self.sample == 3 {
            return Err(InputError::Dims {
                got: 4,
                takes: "3-D images for bicubic sampling (ncnn has no 3-D bicubic)",
            }
            .into());
        }
        Ok((img, points))
    }

    /// A coordinate in pixels from its normalized value along an axis of `n`.
    fn unnormalize(&self, v: f32, n: usize) -> f32 {
        let n = n as f32;
        if self.align_corner {
            (v + 1.0) / 2.0 * (n - 1.0)
        } else {
            ((v + 1.0) * n - 1.0) / 2.0
        }
    }

    /// A pixel coordinate after the padding mode: clamped to the border, or reflected.
    fn pad(&self, x: f32, n: usize) -> f32 {
        let last = n as f32 - 1.0;
        let border = |x: f32| x.max(0.0).min(last);
        let reflect = |x: f32, high: f32| high - (x.abs() - high).abs();
        match (self.padding, self.align_corner) {
            (2, _) => border(x),
            (3, true) => reflect(x, last),
            (3, false) => border(reflect(x + 0.5, n as f32) - 0.5),
            _ => x,
        }
    }
}

/// Bicubic weights of the four taps around fraction `t` (A = -0.75), the last one what makes
/// them sum to 1, as ncnn.
fn cubic(t: f32) -> [f32; 4] {
    const A: f32 = -0.75;
    let (x0, x1, x2) = (t + 1.0, t, 1.0 - t);
    let c0 = A * x0 * x0 * x0 - 5.0 * A * x0 * x0 + 8.0 * A * x0 - 4.0 * A;
    let c1 = (A + 2.0) * x1 * x1 * x1 - (A + 3.0) * x1 * x1 + 1.0;
    let c2 = (A + 2.0) * x2 * x2 * x2 - (A + 3.0) * x2 * x2 + 1.0;
    [c0, c1, c2, 1.0 - c0 - c1 - c2]
}

impl Layer for GridSample {
    fn support(&self) -> Support {
        Support::MANY.gpu_pack1(self.gpu.is_some()).gpu_4d()
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.sample = pd.int_in(0, 1, 1..=3, "1 bilinear, 2 nearest or 3 bicubic")?;
        self.padding = pd.int_in(1, 1, 1..=3, "1 zeros, 2 border or 3 reflection")?;
        self.align_corner = pd.int(2, 0) != 0;
        self.permute_fusion = pd.int(3, 0) != 0;
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        let i = SpecValue::I32;
        let values = [
            (0, i(self.sample)),
            (1, i(self.padding)),
            (2, i(i32::from(self.align_corner))),
            (3, i(i32::from(self.permute_fusion))),
        ];
        let module = crate::shaders::Shader::Gridsample.module();
        self.gpu = gpu.map(|g| g.pipeline(module, &values)).transpose()?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        let np = |b: &BlobShape| crate::layer::shared::view::numpy_shape(b.dims, b.shape);
        matches!(bottoms, [a, g] if self.geometry(&np(a), &np(g)).is_ok())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let [image, grid] = bottoms else {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "2: the image and the grid",
            }
            .into());
        };
        let ([c, d, h, w], [od, oh, ow]) =
            self.geometry(&image.numpy_shape(), &grid.numpy_shape())?;
        let (x, g) = (image.to_values(), grid.to_values());
        let points = od * oh * ow;
        let three = image.dims == 4;
        let k = if three { 3 } else { 2 };
        // point n's coordinate along axis a (0 x, 1 y, 2 z), unnormalized
        let coord = |n: usize, a: usize| {
            let v = if self.permute_fusion {
                g[a * points + n]
            } else {
                g[n * k + a]
            };
            self.unnormalize(v, [w, h, d][a])
        };
        let mut out = vec![0.0; c * points];
        out.par_chunks_mut(points.max(1))
            .enumerate()
            .for_each(|(q, plane)| {
                let img = &x[q * d * h * w..][..d * h * w];
                let at = |xi: i64, yi: i64, zi: i64| {
                    let inside = (0..w as i64).contains(&xi)
                        && (0..h as i64).contains(&yi)
                        && (0..d as i64).contains(&zi);
                    if inside {
                        img[(zi as usize * h + yi as usize) * w + xi as usize]
                    } else {
                        0.0
                    }
                };
                for (n, o) in plane.iter_mut().enumerate() {
                    let (sx, sy) = (coord(n, 0), coord(n, 1));
                    *o = match self.sample {
                        3 => {
                            // each tap's integer coordinate padded by itself
                            let (x1, y1) = (sx.floor(), sy.floor());
                            let tap = |t: f32, n: usize| self.pad(t, n) as i64;
                            let (cx, cy) = (cubic(sx - x1), cubic(sy - y1));
                            let row = |j: usize| {
                                let yi = tap(y1 - 1.0 + j as f32, h);
                                (0..4)
                                    .map(|i| at(tap(x1 - 1.0 + i as f32, w), yi, 0) * cx[i])
                                    .fold(0.0, |s, v| s + v)
                            };
                            (0..4).map(|j| row(j) * cy[j]).fold(0.0, |s, v| s + v)
                        }
                        _ => {
                            let sx = self.pad(sx, w);
                            let sy = self.pad(sy, h);
                            let sz = if three { self.pad(coord(n, 2), d) } else { 0.0 };
                            if self.sample == 2 {
                                let r = |v: f32| (v + 0.5).floor() as i64;
                                at(r(sx), r(sy), r(sz))
                            } else {
                                let (x0, y0, z0) = (sx.floor(), sy.floor(), sz.floor());
                                let (a, b, g) = (sx - x0, sy - y0, sz - z0);
                                let (xi, yi, zi) = (x0 as i64, y0 as i64, z0 as i64);
                                let plane = |zi: i64| {
                                    let v0 = at(xi, yi, zi) * (1.0 - a) + at(xi + 1, yi, zi) * a;
                                    let v1 =
                                        at(xi, yi + 1, zi) * (1.0 - a) + at(xi + 1, yi + 1, zi) * a;
                                    v0 * (1.0 - b) + v1 * b
                                };
                                if three {
                                    plane(zi) * (1.0 - g) + plane(zi + 1) * g
                                } else {
                                    plane(zi)
                                }
                            }
                        }
                    };
                }
            });
        let shape = if three {
            vec![c, od, oh, ow]
        } else {
            vec![c, oh, ow]
        };
        Ok(vec![Mat::from_numpy(&shape, &out)?])
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let pipeline = self.gpu.ready()?;
        let [image, grid] = bottoms else {
            return Err(Error::from(InputError::Count {
                got: bottoms.len(),
                expected: "2: the image and the grid",
            }));
        };
        let np = |m: &GpuMat| crate::layer::shared::view::numpy_shape(m.dims, m.shape());
        let ([c, d, _, _], [od, oh, ow]) = self.geometry(&np(image), &np(grid))?;
        let top =
            GpuMat::alloc_space(rec.context(), image.dims, [ow, oh, od, c], 1, image.options)?;
        let mut words = image.shape_words().to_vec();
        words.extend(grid.shape_words());
        words.extend(top.shape_words());
        words.extend([d, od, image.dims as usize - 1].map(|v| v as u32));
        let grid_size = [ow as u32, (oh * od) as u32, c as u32];
        rec.dispatch(pipeline, &[image, grid, &top], &words, grid_size)?;
        Ok(vec![top])
    }
}
