//! Pooling3D: `0=pooling_type` (0 max, 1 average) `1=kernel_w 11=kernel_h 21=kernel_d
//! 2=stride_w 12=stride_h 22=stride_d 3=pad_left 14=pad_right 13=pad_top 15=pad_bottom
//! 23=pad_front 16=pad_behind 4=global_pooling 5=pad_mode 6=avgpool_count_include_pad
//! 7=adaptive_pooling 8=out_w 18=out_h 28=out_d` over each channel's volume of a 4-D blob
//! (ncnn's defaults: `_h` and `_d` their `_w`, right as left, top as left, bottom as top,
//! front as top, behind as front). Global pooling gives one value per channel; adaptive
//! pooling `out` windows `[⌊n·j/out⌋, ⌈n·(j+1)/out⌉)` per axis. Pad modes as Pooling1D's
//! (the `pool_window` module). On the device, global pooling is the 2-D Pooling's over the
//! volume's 3-D view (`w × h·d`, the same memory): packed blobs stay packed, each channel
//! reduced by a workgroup (the pack1 volume shader took 42 us over r3d_18's 512 × 98 values
//! on an H200, its input's unpacking 19 more).

use crate::error::{InputError, Result};
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::{GpuSetup, Layer, Packs, Support};
use crate::layer::params::{ParamDict, ParamValue};
use crate::layer::reduce::pool_window::{Axis, AxisParams, axes, spec_values};
use crate::layer::reduce::pooling::Pooling;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::pipelines::DeviceSide;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat};
use rayon::prelude::*;
use std::sync::Arc;

/// Max or average pooling over volumes.
#[derive(Default)]
pub struct Pooling3D {
    average: bool,
    /// Kernel, stride and padding of w, h and d.
    axes: [AxisParams; 3],
    global: bool,
    pad_mode: i32,
    include_pad: bool,
    /// Adaptive pooling's output `[w, h, d]`.
    adaptive: Option<[usize; 3]>,
    gpu: Option<Arc<Pipeline>>,
    /// Global pooling on the device: the 2-D layer's, over the volume's 3-D view.
    global_gpu: Option<Pooling>,
}

impl Pooling3D {
    /// The windows along w, h and d of an input `[w, h, d]`: the bordered axes' or the
    /// adaptive ones (`left` 0, every step counted).
    fn windows(&self, n: [usize; 3]) -> Result<[Axis; 3]> {
        if let Some(out) = self.adaptive {
            return Ok([0, 1, 2].map(|a| Axis {
                left: 0,
                out: out[a],
                counted: [0, n[a] as i64],
            }));
        }
        let v = axes(&n, &self.axes, self.pad_mode)?;
        Ok([v[0], v[1], v[2]])
    }

    fn check(dims: u8) -> Result<()> {
        match dims {
            4 => Ok(()),
            got => Err(InputError::Dims {
                got,
                takes: "4-D blobs (volumes)",
            }
            .into()),
        }
    }

    /// Output value `(j, i, z)` of one channel's volume `v` of `n` (`[w, h, d]`).
    fn pool(&self, v: &[f32], n: [usize; 3], win: &[Axis; 3], at: [usize; 3]) -> f32 {
        let [w, h, d] = n;
        let get = |x: usize, y: usize, z: usize| v[(z * h + y) * w + x];
        if self.global || self.adaptive.is_some() {
            // whole axes, or adaptive windows
            let span = |a: usize| match self.global {
                true => (0, n[a]),
                false => {
                    let (o, j) = (win[a].out, at[a]);
                    (n[a] * j / o, (n[a] * (j + 1)).div_ceil(o))
                }
            };
            let ((x0, x1), (y0, y1), (z0, z1)) = (span(0), span(1), span(2));
            let mut acc = if self.average { 0.0 } else { get(x0, y0, z0) };
            for z in z0..z1 {
                for y in y0..y1 {
                    for x in x0..x1 {
                        acc = if self.average {
                            acc + get(x, y, z)
                        } else {
                            acc.max(get(x, y, z))
                        };
                    }
                }
            }
            return match (self.average, self.global) {
                (false, _) => acc,
                (true, true) => acc / (w * h * d) as f32,
                (true, false) => acc / (y1 - y0) as f32 / (x1 - x0) as f32 / (z1 - z0) as f32,
            };
        }
        // bordered coordinates: the padding is -FLT_MAX for the max, 0 for the average
        let value = |b: [i64; 3]| {
            let i = [0, 1, 2].map(|a| b[a] - win[a].left);
            let inside = (0..3).all(|a| (0..n[a] as i64).contains(&i[a]));
            match (inside, self.average) {
                (true, _) => get(i[0] as usize, i[1] as usize, i[2] as usize),
                (false, true) => 0.0,
                (false, false) => f32::MIN,
            }
        };
        let start = [0, 1, 2].map(|a| (at[a] * self.axes[a].stride) as i64);
        let [kw, kh, kd] = self.axes.map(|a| a.kernel as i64);
        let counts = |a: usize, s: i64| {
            self.include_pad || (win[a].counted[0]..win[a].counted[1]).contains(&s)
        };
        let mut acc = if self.average { 0.0 } else { value(start) };
        let mut area = 0usize;
        for kz in 0..kd {
            let sz = start[2] + kz;
            for ky in 0..kh {
                let sy = start[1] + ky;
                for kx in 0..kw {
                    let sx = start[0] + kx;
                    let v = value([sx, sy, sz]);
                    if !self.average {
                        acc = acc.max(v);
                    } else if counts(0, sx) && counts(1, sy) && counts(2, sz) {
                        acc += v;
                        area += 1;
                    }
                }
            }
        }
        if self.average { acc / area as f32 } else { acc }
    }
}

impl Layer for Pooling3D {
    fn support(&self) -> Support {
        match self.global_gpu {
            Some(_) => Support::ONE_BLOB.gpu(true).packs(Packs::UP_TO_4).gpu_4d(),
            None => Support::ONE_BLOB.gpu_pack1(self.gpu.is_some()).gpu_4d(),
        }
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.average = pd.int_in(0, 0, 0..=1, "0 max or 1 average")? == 1;
        self.global = pd.int(4, 0) != 0;
        let adaptive = pd.int(7, 0) != 0;
        self.pad_mode = pd.int_in(5, 0, 0..=3, "pad_mode 0 to 3")?;
        self.include_pad = pd.int(6, 0) != 0;
        let positive = |id: u32, default: i32, what: &'static str| {
            pd.int_in(id, default, 1..=i32::MAX, what)
                .map(|v| v as usize)
        };
        let at_least_0 = |id: u32, default: i32| {
            pd.int_in(id, default, 0..=i32::MAX, "padding of at least 0")
                .map(|v| v as usize)
        };
        let (left, top) = (pd.int(3, 0), pd.int(13, pd.int(3, 0)));
        let front = pd.int(23, top);
        let pads = [
            [at_least_0(3, 0)?, at_least_0(14, left)?],
            [at_least_0(13, left)?, at_least_0(15, top)?],
            [at_least_0(23, top)?, at_least_0(16, front)?],
        ];
        self.adaptive = None;
        if self.global {
            return Ok(());
        }
        if adaptive {
            let w = pd.int(8, 0);
            self.adaptive = Some([
                positive(8, 0, "an adaptive output side of at least 1")?,
                positive(18, w, "an adaptive output side of at least 1")?,
                positive(28, w, "an adaptive output side of at least 1")?,
            ]);
            return Ok(());
        }
        let (kw, sw) = (pd.int(1, 0), pd.int(2, 1));
        let kernel = [(1, kw), (11, pd.int(11, kw)), (21, pd.int(21, kw))];
        let stride = [(2, sw), (12, pd.int(12, sw)), (22, pd.int(22, sw))];
        for a in 0..3 {
            self.axes[a] = AxisParams {
                kernel: positive(kernel[a].0, kernel[a].1, "a kernel of at least 1")?,
                stride: positive(stride[a].0, stride[a].1, "a stride of at least 1")?,
                pad: pads[a],
                // ncnn's "same lower" splits d as "same upper" does
                lower_first: a < 2,
            };
        }
        Ok(())
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.global_gpu = None;
        if let (true, Some(gpu)) = (self.global, gpu) {
            let mut pd = ParamDict::new();
            pd.set(0, ParamValue::Int(i32::from(self.average)))
                .set(4, ParamValue::Int(1));
            let mut planes = Pooling::default();
            planes.load_param(&pd)?;
            planes.create_pipeline(opt, Some(gpu))?;
            self.global_gpu = Some(planes);
            return Ok(());
        }
        let (a, g, pad) = (self.average, self.global, self.include_pad);
        let values = spec_values(a, g, self.adaptive.is_some(), pad);
        let module = crate::shaders::Shader::Pooling3d.module();
        self.gpu = gpu.map(|g| g.pipeline(module, &values)).transpose()?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        let fits = |b: &BlobShape| {
            self.global || self.windows([b.shape[0], b.shape[1], b.shape[2]]).is_ok()
        };
        bottoms.iter().all(|b| b.dims == 4 && fits(b))
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        Self::check(bottom.dims)?;
        let [w, h, d, c] = bottom.shape();
        let n = [w, h, d];
        let win = match self.global {
            true => [1, 1, 1].map(|o| Axis {
                left: 0,
                out: o,
                counted: [0, 0],
            }),
            false => self.windows(n)?,
        };
        let [ow, oh, od] = win.map(|a| a.out);
        let x = bottom.to_values();
        let volume = crate::host::values(&[ow, oh, od])?;
        let mut out = vec![0.0; crate::host::values(&[c, volume])?];
        out.par_chunks_mut(volume.max(1))
            .enumerate()
            .for_each(|(q, plane)| {
                let v = &x[q * w * h * d..][..w * h * d];
                for (k, o) in plane.iter_mut().enumerate() {
                    let at = [k % ow, k / ow % oh, k / (ow * oh)];
                    *o = self.pool(v, n, &win, at);
                }
            });
        match self.global {
            true => Mat::from_numpy(&[c], &out),
            false => Mat::from_numpy(&[c, od, oh, ow], &out),
        }
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        Self::check(bottom.dims)?;
        if let Some(planes) = &self.global_gpu {
            // the volume as w × h·d rows: the layout of a 4-D mat's 3-D view
            let view = GpuMat {
                dims: 3,
                d: 1,
                ..bottom.clone()
            };
            return planes.forward_gpu(&view, rec);
        }
        let pipeline = self.gpu.ready()?;
        let [w, h, d, c] = bottom.shape();
        let n = [w, h, d];
        let win = match self.global {
            true => n.map(|e| Axis {
                left: 0,
                out: 1,
                counted: [0, e as i64],
            }),
            false => self.windows(n)?,
        };
        let [ow, oh, od] = win.map(|a| a.out);
        let ctx = rec.context();
        let top = match self.global {
            true => GpuMat::alloc(ctx, 1, [1, 1, c], 1, bottom.options)?,
            false => GpuMat::alloc_space(ctx, 4, [ow, oh, od, c], 1, bottom.options)?,
        };
        let mut words: Vec<i64> = vec![w as i64, h as i64, d as i64, bottom.cstep as i64];
        words.extend([ow, oh, od, top.cstep, c].map(|v| v as i64));
        words.extend(self.axes.map(|a| a.kernel as i64));
        words.extend(self.axes.map(|a| a.stride as i64));
        words.extend(win.map(|a| a.left));
        words.extend(win.iter().flat_map(|a| a.counted));
        let words: Vec<u32> = words.iter().map(|&v| v as i32 as u32).collect();
        let grid = [ow as u32, oh as u32, (od * c) as u32];
        rec.dispatch(pipeline, &[bottom, &top], &words, grid)?;
        Ok(top)
    }
}
