//! Pooling: max/avg, global, adaptive, ncnn's pad modes (`0=pooling_type 1=kernel_w
//! 11=kernel_h 2=stride_w 12=stride_h 3=pad_left 13=pad_top 14=pad_right 15=pad_bottom
//! 4=global_pooling 5=pad_mode 6=avgpool_count_include_pad 7=adaptive_pooling 8=out_w
//! 18=out_h`).

use multiversion::multiversion;
use rayon::prelude::*;

use crate::OptionSet;
use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::contract::{GpuSetup, Layer, Packs, Support};
use crate::layer::params::ParamDict;
use crate::layer::rows::Rows;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::grain::min_items;
use crate::layer::shared::kernels;
use crate::layer::shared::phase_planes::{Combine, Phases, accumulate};
use crate::layer::shared::pipelines::no_partials;
use crate::layer::shared::pipelines::{DeviceSide, PackPipelines};
use crate::layer::shared::view::{channel_planes, kernel_fits, planar};
use crate::shaders::Shader;
use crate::tensor::BlobShape;
use crate::tensor::{ElemType, GpuMat, Mat};

/// A pooling layer.
#[derive(Default)]
pub struct Pooling {
    max: bool,
    kernel: [usize; 2],
    stride: [usize; 2],
    pad: [usize; 4], // left, right, top, bottom
    global: bool,
    pad_mode: i32,
    include_pad: bool,
    adaptive: bool,
    out: [usize; 2],
    /// pack1 and pack4 buffer pipelines (pack8 blobs go through pack4).
    gpu: Option<PackPipelines>,
    /// What a one-pass dispatch binds as the two-pass global pooling's partials.
    no_partials: Option<GpuMat>,
}

/// Where a window pooling's data sits in its padded input, for an input of `w × h`.
struct Window {
    /// The data's offset (left, top): the parameter pads, or the "same" modes' own.
    pad: [usize; 2],
    /// The frame averages count positions in, `[left, top, right, bottom]` (ends exclusive)
    /// in padded coordinates: inside the parameter pads and the tail pad (ncnn's count; in
    /// the "same" modes it holds the modes' own padding, so averages divide by the kernel).
    frame: [usize; 4],
    /// The output's `[w, h]`.
    out: [usize; 2],
}

impl Pooling {
    /// The window geometry of a (not global, not adaptive) pooling over `w × h`.
    fn window(&self, w: usize, h: usize) -> Result<Window> {
        let [kw, kh] = self.kernel;
        let [sw, sh] = self.stride;
        let [mut pl, mut pr, mut pt, mut pb] = self.pad;
        let [param_l, param_r, param_t, param_b] = self.pad;
        // extra padding at the far side that is not counted for averages (ncnn's tail pad)
        let (mut tail_w, mut tail_h) = (0, 0);
        match self.pad_mode {
            0 => {
                let rw = (w + pl + pr).saturating_sub(kw) % sw;
                let rh = (h + pt + pb).saturating_sub(kh) % sh;
                tail_w = if rw != 0 { sw - rw } else { 0 };
                tail_h = if rh != 0 { sh - rh } else { 0 };
            }
            1 => {}
            2 | 3 => {
                let wpad = (kw + (w.max(1) - 1) / sw * sw).saturating_sub(w);
                let hpad = (kh + (h.max(1) - 1) / sh * sh).saturating_sub(h);
                let (small_w, small_h) = (wpad / 2, hpad / 2);
                (pl, pr) = if self.pad_mode == 2 {
                    (small_w, wpad - small_w)
                } else {
                    (wpad - small_w, small_w)
                };
                (pt, pb) = if self.pad_mode == 2 {
                    (small_h, hpad - small_h)
                } else {
                    (hpad - small_h, small_h)
                };
            }
            m => {
                return Err(Error::BadParam {
                    id: 5,
                    value: m.to_string(),
                    allowed: "pad_mode 0 to 3",
                });
            }
        }
        let (pw, ph) = (w + pl + pr + tail_w, h + pt + pb + tail_h);
        kernel_fits("kernel", [kw, kh], [pw, ph])?;
        Ok(Window {
            pad: [pl, pt],
            frame: [
                param_l,
                param_t,
                (pw - tail_w).saturating_sub(param_r),
                (ph - tail_h).saturating_sub(param_b),
            ],
            out: [(pw - kw) / sw + 1, (ph - kh) / sh + 1],
        })
    }

    /// The adaptive output size over `w × h` (0 in the params keeps the input's).
    fn adaptive_out(&self, w: usize, h: usize) -> [usize; 2] {
        [
            if self.out[0] == 0 { w } else { self.out[0] },
            if self.out[1] == 0 { h } else { self.out[1] },
        ]
    }
}

/// Invocations of a workgroup of the global pooling shader (its `LANES`).
const GLOBAL_LANES: usize = 64;

/// How many workgroups pool one channel of a global pooling over `plane` values: one up to
/// 2048 values, else one per 1024 (at most 256), the partial results then reduced by a second
/// pass. With one workgroup per channel, the 64 channels of a 126² map (Real-CUGAN's
/// squeeze-excitation blocks) kept 16 of an H200's 132 multiprocessors busy, each invocation
/// waiting on some 250 dependent loads.
fn global_slabs(plane: usize) -> usize {
    if plane <= 2048 {
        1
    } else {
        plane.div_ceil(1024).min(256)
    }
}

impl Layer for Pooling {
    fn support(&self) -> Support {
        Support {
            // packed CPU blobs as they come: pooled an element (all its lanes) at a time
            packing: true,
            any_packing: true,
            ..Support::ONE_BLOB
                .gpu(self.gpu.is_some())
                .packs(Packs::UP_TO_4)
        }
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        // buffer shaders only: image nets pool on the CPU
        self.no_partials = gpu.as_ref().map(|g| no_partials(g.ctx)).transpose()?;
        self.gpu = match gpu {
            Some(gpu) => {
                let i = |v: usize| SpecValue::I32(v as i32);
                Some(PackPipelines::create(
                    gpu,
                    &[
                        (1, Shader::Pooling.module()),
                        (4, Shader::PoolingPack4.module()),
                    ],
                    &[
                        (0, SpecValue::I32(i32::from(!self.max))),
                        (1, i(self.kernel[0])),
                        (2, i(self.kernel[1])),
                        (3, i(self.stride[0])),
                        (4, i(self.stride[1])),
                        (5, SpecValue::I32(i32::from(self.include_pad))),
                        (6, SpecValue::I32(i32::from(self.global))),
                        (7, SpecValue::I32(i32::from(self.adaptive))),
                    ],
                )?)
            }
            _ => None,
        };
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        match bottoms {
            [
                BlobShape {
                    dims: 3,
                    shape: [w, h, ..],
                },
            ] => self.global || self.adaptive || self.window(*w, *h).is_ok(),
            _ => false,
        }
    }

    /// A window along the rows where the padding is the params' and the tail pad's (a band
    /// starting on a stride ends the input with the same remainder); not the "same" modes,
    /// global or adaptive pooling.
    fn gpu_rows(&self, blob: BlobShape) -> Option<Rows> {
        let (dims, [w, h, _, c]) = (blob.dims, blob.shape);
        let fixed = !self.global && !self.adaptive && matches!(self.pad_mode, 0 | 1);
        let win = self.window(w, h).ok()?;
        let out = [win.out[0], win.out[1], c];
        (dims == 3 && fixed).then(|| Rows::window(self.kernel[1], self.stride[1], win.pad[1], out))
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let pipelines = self.gpu.ready()?;
        let ctx = rec.context();
        planar(bottom.dims)?;
        let (w, h) = (bottom.w, bottom.h);
        let (dims, [ow, oh], pads) = if self.global {
            (1, [1, 1], [0; 6])
        } else if self.adaptive {
            (3, self.adaptive_out(w, h), [0; 6])
        } else {
            let win = self.window(w, h)?;
            let [fl, ft, fr, fb] = win.frame;
            (3, win.out, [win.pad[0], win.pad[1], fl, ft, fr, fb])
        };
        let top = GpuMat::alloc(
            ctx,
            dims,
            [ow, oh, bottom.c],
            bottom.elempack,
            bottom.options,
        )?;
        let pipeline = pipelines.for_mat(bottom)?.clone();
        let mut words = [0u32; 16];
        words[..4].copy_from_slice(&bottom.shape_words());
        words[4..8].copy_from_slice(&[ow as u32, oh as u32, top.c as u32, top.cstep as u32]);
        for (word, pad) in words[8..14].iter_mut().zip(pads) {
            *word = pad as u32;
        }
        let slabs = if self.global { global_slabs(w * h) } else { 1 };
        let c = top.c as u32;
        // fp32 partial sums of the two-pass global pooling (the binding is there either way)
        let partials = if slabs > 1 {
            let n = top.c * slabs * top.elempack;
            GpuMat::alloc(ctx, 2, [n, 1, 1], 1, OptionSet::FP32)?
        } else {
            self.no_partials.clone().ok_or(Error::NotLoaded {
                what: "the pooling's partial-sum binding on the device",
            })?
        };
        if slabs > 1 {
            words[14..].copy_from_slice(&[1, slabs as u32]);
            rec.dispatch(
                &pipeline,
                &[bottom, &top, &partials],
                &words,
                [(GLOBAL_LANES * slabs) as u32, 1, c],
            )?;
            words[14] = 2;
        }
        // global: a workgroup of the shader's invocations per channel
        let grid = if self.global {
            [GLOBAL_LANES as u32, 1, c]
        } else {
            [ow as u32, oh as u32, c]
        };
        rec.dispatch(&pipeline, &[bottom, &top, &partials], &words, grid)?;
        Ok(top)
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        let pooling_type = pd.int(0, 0);
        if !(0..=1).contains(&pooling_type) {
            return Err(Error::BadParam {
                id: 0,
                value: pooling_type.to_string(),
                allowed: "pooling_type 0 (max) or 1 (average)",
            });
        }
        self.max = pooling_type == 0;
        let kw = pd.int(1, 0);
        let sw = pd.int(2, 1);
        let pl = pd.int(3, 0);
        let k = [kw, pd.int(11, kw)];
        let s = [sw, pd.int(12, sw)];
        if k.iter().chain(&s).any(|v| *v <= 0) && pd.int(4, 0) == 0 && pd.int(7, 0) == 0 {
            return Err(Error::BadParam {
                id: 1,
                value: format!("kernel {k:?}, stride {s:?}"),
                allowed: "kernels and strides of at least 1",
            });
        }
        self.kernel = k.map(|v| v.max(1) as usize);
        self.stride = s.map(|v| v.max(1) as usize);
        let pt = pd.int(13, pl);
        self.pad = [pl, pd.int(14, pl), pt, pd.int(15, pt)].map(|v| v.max(0) as usize);
        self.global = pd.int(4, 0) != 0;
        self.pad_mode = pd.int(5, 0);
        self.include_pad = pd.int(6, 0) != 0;
        self.adaptive = pd.int(7, 0) != 0;
        let ow = pd.int(8, 0).max(0) as usize;
        self.out = [ow, pd.int(18, ow as i32).max(0) as usize];
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        planar(bottom.dims)?;
        if bottom.elempack > 1 {
            return self.forward_lanes(bottom);
        }
        let [w, h, _, c] = bottom.shape();
        let (v, step) = channel_planes(bottom);
        let plane = w * h;
        // every channel's whole plane to one value
        let whole_planes = || -> Vec<f32> {
            (0..c)
                .into_par_iter()
                .with_min_len(min_items(plane))
                .map(|q| {
                    let ch = &v[q * step..q * step + plane];
                    if self.max {
                        kernels::max(ch)
                    } else {
                        kernels::sum(ch) / plane as f32
                    }
                })
                .collect()
        };
        if self.global {
            return Mat::from_shape_values(1, [c, 1, 1, 1], &whole_planes());
        }
        if self.adaptive {
            // its uneven windows as rectangles, one lane per channel
            return self.forward_lanes(bottom);
        }
        let [kw, kh] = self.kernel;
        let [sw, sh] = self.stride;
        let Window {
            pad: [pl, pt],
            out: [ow, oh],
            ..
        } = self.window(w, h)?;
        if [ow, oh, pl, pt] == [1, 1, 0, 0] && self.kernel == [w, h] {
            // one unpadded window over the whole plane (caffe's global pooling, as in ncnn's
            // resnet50): the global reduction, not 49 one-value row updates per channel
            return Mat::from_shape_values(3, [1, 1, 1, c], &whole_planes());
        }
        // each channel laid out once as the phase planes of its padded plane (padding −∞
        // for max, 0 for average): every tap one contiguous run over the whole output
        // the padded plane each channel is staged in, checked before the per-thread scratch
        // is sized to it (a kernel or stride of 2^31 is no plane)
        let extent = |o: usize, s: usize, k: usize| (o - 1).checked_mul(s)?.checked_add(k);
        let padded = [extent(ow, sw, kw), extent(oh, sh, kh)];
        let [Some(pw), Some(ph)] = padded else {
            return Err(Error::BadParam {
                id: 1,
                value: format!("{:?} with stride {:?}", self.kernel, self.stride),
                allowed: "a kernel and stride whose window spans a number of values",
            });
        };
        crate::host::values(&[pw, ph])?;
        let phases = Phases::new([pw, ph], [sw, sh]);
        crate::host::values(&[phases.len()])?;
        let at = phases.taps([kw, kh], [1, 1]);
        let n = phases.flat_len([ow, oh]);
        let (fill, combine) = if self.max {
            (f32::NEG_INFINITY, Combine::Max)
        } else {
            (0.0, Combine::Add)
        };
        let scales = if self.max {
            Vec::new()
        } else {
            self.average_scales(&self.window(w, h)?)
        };
        // every window writes its output
        let mut top = Mat::for_writing(3, [ow, oh, 1, c], 1, ElemType::F32)?;
        let cstep = top.cstep;
        top.f32_mut()?
            .par_chunks_mut(cstep.max(1))
            .with_min_len(min_items(phases.len() + n * at.len()))
            .enumerate()
            .for_each_init(
                || (Vec::new(), Vec::new()),
                |(padded, flat): &mut (Vec<f32>, Vec<f32>), (q, o)| {
                    let o = &mut o[..ow * oh];
                    let ch = &v[q * step..q * step + plane];
                    padded.resize(phases.len(), fill);
                    phases.fill(ch, [w, h], [pl, pt], fill, padded);
                    flat.clear();
                    flat.resize(n, fill);
                    accumulate(flat, padded, &at, &[], combine);
                    phases.copy_out(flat, [ow, oh], o);
                    if !self.max {
                        kernels::zip_with(o, &scales, |a, s| a * s);
                    }
                },
            );
        Ok(top)
    }
}

impl Pooling {
    /// Per output position of a window pooling, one over the positions its average counts
    /// (inside the counting frame, or the whole kernel with `include_pad`).
    fn average_scales(&self, win: &Window) -> Vec<f32> {
        let ([kw, kh], [sw, sh]) = (self.kernel, self.stride);
        let [frame_l, frame_t, frame_r, frame_b] = win.frame;
        let [ow, oh] = win.out;
        (0..oh)
            .flat_map(|i| (0..ow).map(move |j| (i, j)))
            .map(|(i, j)| {
                if self.include_pad {
                    return 1.0 / (kw * kh) as f32;
                }
                let span = |start: usize, k: usize, lo: usize, hi: usize| {
                    (start + k).min(hi).saturating_sub(start.max(lo))
                };
                let n = span(j * sw, kw, frame_l, frame_r) * span(i * sh, kh, frame_t, frame_b);
                1.0 / n.max(1) as f32
            })
            .collect()
    }

    /// The forward as rectangles of input positions per output, each element's lanes (the
    /// channels of a packed blob, taken as it comes: `support_any_packing`; one channel of a
    /// pack1 blob) pooled together, window by window; a window pooling keeps the packing, a
    /// global one gives its 1-D values. Packed blobs and adaptive pooling come here.
    fn forward_lanes(&self, bottom: &Mat) -> Result<Mat> {
        let p = bottom.elempack;
        let [w, h, _, c] = bottom.shape();
        let (src, gs) = (bottom.f32()?, bottom.cstep * p);
        // each output's input rows and columns (ends exclusive) and its average scale
        let (out, rects, scales): ([usize; 2], Vec<[usize; 4]>, Vec<f32>) = if self.global {
            let scale = (!self.max).then_some(1.0 / (w * h).max(1) as f32);
            ([1, 1], vec![[0, w, 0, h]], scale.into_iter().collect())
        } else if self.adaptive {
            let [ow, oh] = self.adaptive_out(w, h);
            let rects: Vec<[usize; 4]> = (0..oh)
                .flat_map(|i| (0..ow).map(move |j| (i, j)))
                .map(|(i, j)| {
                    let (y0, y1) = (i * h / oh, ((i + 1) * h).div_ceil(oh));
                    let (x0, x1) = (j * w / ow, ((j + 1) * w).div_ceil(ow));
                    [x0, x1, y0, y1]
                })
                .collect();
            let scales = rects
                .iter()
                .filter(|_| !self.max)
                .map(|[x0, x1, y0, y1]| 1.0 / ((x1 - x0) * (y1 - y0)).max(1) as f32)
                .collect();
            ([ow, oh], rects, scales)
        } else {
            let win = self.window(w, h)?;
            let ([kw, kh], [sw, sh], [pl, pt]) = (self.kernel, self.stride, win.pad);
            let [ow, oh] = win.out;
            // the window's padded span less the padding: input positions only
            let clip = |start: usize, k: usize, pad: usize, n: usize| {
                [
                    start.saturating_sub(pad).min(n),
                    (start + k).saturating_sub(pad).min(n),
                ]
            };
            let rects = (0..oh)
                .flat_map(|i| (0..ow).map(move |j| (i, j)))
                .map(|(i, j)| {
                    let [x0, x1] = clip(j * sw, kw, pl, w);
                    let [y0, y1] = clip(i * sh, kh, pt, h);
                    [x0, x1, y0, y1]
                })
                .collect();
            let scales = if self.max {
                Vec::new()
            } else {
                self.average_scales(&win)
            };
            (win.out, rects, scales)
        };
        let max = self.max;
        let pool = |ch: &[f32], o: &mut [f32]| match p {
            1 => pool_lanes::<1>(ch, w, &rects, &scales, max, o),
            4 => pool_lanes::<4>(ch, w, &rects, &scales, max, o),
            8 => pool_lanes::<8>(ch, w, &rects, &scales, max, o),
            _ => pool_lanes::<16>(ch, w, &rects, &scales, max, o),
        };
        let work = (w * h).max(out[0] * out[1]) * p;
        if self.global {
            let mut values = vec![0.0f32; c];
            values
                .par_chunks_mut(p)
                .with_min_len(min_items(work))
                .enumerate()
                .for_each(|(q, o)| pool(&src[q * gs..][..w * h * p], o));
            return Mat::from_shape_values(1, [c, 1, 1, 1], &values);
        }
        let [ow, oh] = out;
        // every window writes its output
        let mut top = Mat::for_writing(3, [ow, oh, 1, c / p], p, ElemType::F32)?;
        let ogs = top.cstep * p;
        top.f32_mut()?
            .par_chunks_mut(ogs.max(1))
            .with_min_len(min_items(work))
            .enumerate()
            .for_each(|(q, o)| pool(&src[q * gs..][..w * h * p], &mut o[..ow * oh * p]));
        Ok(top)
    }
}

/// One block of `P` channels pooled: output `k` the max (or the sum times `scales[k]`) of the
/// positions `rects[k]` (`[x0, x1, y0, y1]`, ends exclusive) of `ch` (rows `w` positions, `P`
/// values each), lane by lane, into `out`'s `P` values at `k·P`.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn pool_lanes<const P: usize>(
    ch: &[f32],
    w: usize,
    rects: &[[usize; 4]],
    scales: &[f32],
    max: bool,
    out: &mut [f32],
) {
    for (k, (r, px)) in rects.iter().zip(out.chunks_exact_mut(P)).enumerate() {
        let [x0, x1, y0, y1] = *r;
        let mut acc = [if max { f32::NEG_INFINITY } else { 0.0 }; P];
        for y in y0..y1 {
            for v in ch[(y * w + x0) * P..(y * w + x1) * P].chunks_exact(P) {
                if max {
                    for (a, x) in acc.iter_mut().zip(v) {
                        *a = a.max(*x);
                    }
                } else {
                    for (a, x) in acc.iter_mut().zip(v) {
                        *a += x;
                    }
                }
            }
        }
        if let Some(s) = scales.get(k) {
            acc.iter_mut().for_each(|a| *a *= s);
        }
        px.copy_from_slice(&acc);
    }
}
