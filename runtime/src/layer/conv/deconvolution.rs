//! Deconvolution and DeconvolutionDepthWise (transposed convolution): `0=num_output
//! 1=kernel_w 11=kernel_h 2=dilation_w 12=dilation_h 3=stride_w 13=stride_h 4=pad_left
//! 15=pad_right 14=pad_top 16=pad_bottom 18=output_pad_right 19=output_pad_bottom
//! 20=output_w 21=output_h 5=bias_term 6=weight_data_size 7=group (depthwise) 9=activation_type
//! 10=activation_params`; weights `[num_output][channels / group][kernel_h][kernel_w]`, then
//! the bias. The full result is `(w - 1) * stride + kernel extent + output pad` wide; positive
//! pads are cut from it, else with `output_w`/`output_h` and pads -233 / -234 the excess is
//! cut evenly (the odd one right / left), as ncnn does.
//!
//! CPU and GPU: each output gathers the inputs whose kernel footprint covers it; on the GPU
//! pack1 for any groups, and pack4 in (pack4 out, or pack1 where the outputs are not a multiple
//! of 4) for dense ones over a multiple of 4 input channels and depthwise ones over blocks
//! (`deconvolution_dw_pack4`: a yolo's upsampler between pack4 layers). Those of up to 16 taps (an
//! upsampler's 2×2 or 4×4 stride 2) take the convolutions' implicit GEMM instead, one 1×1
//! product over the input whose outputs are every tap's (tensor cores where the convolutions
//! take them), summed per output with the bias by `deconvolution_taps{,_pack4to1}`.

use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use crate::OptionSet;
use crate::error::{Error, InputError, Result};
use crate::gpu::{Pipeline, Recorder};
use crate::layer::activation::fused::{activate, activate_all};
use crate::layer::contract::{GpuSetup, Layer, Packs, Support};
use crate::layer::conv::implicit_gemm::{Batched, GemmEngine};
use crate::layer::conv::window::Pack4Kind;
use crate::layer::conv::window::dynamic_inputs;
use crate::layer::conv::window::{Rank, Window};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::cpu_gemm::{MatMut, MatRef, gemm};
use crate::layer::shared::pipelines::no_partials;
use crate::layer::shared::pipelines::{DeviceSide, block_grid};
use crate::layer::shared::view::channel_planes;
use crate::layer::weights::Weights;
use crate::shaders::Shader;
use crate::tensor::BlobShape;
use crate::tensor::pool::Scratch;
use crate::tensor::{GpuMat, Mat};

/// A transposed convolution (dense, grouped or depthwise).
#[derive(Default)]
pub struct Deconvolution {
    window: Window,
    output_pad: [usize; 2],
    output_size: [usize; 2],
    weights: Vec<f32>,
    bias: Vec<f32>,
    /// The weights as the CPU GEMM reads them, `[num_output][kernel_h][kernel_w][channels]`
    /// (dense layers; made on first use).
    weights_gemm: OnceLock<Vec<f32>>,
    gpu: Option<GpuDeconvolution>,
}

struct GpuDeconvolution {
    pipeline: Arc<Pipeline>,
    weights: Option<GpuMat>,
    bias: Option<GpuMat>,
    /// The pack4-input pipeline, its weights and bias, where the layer is dense over blocks:
    /// the direct shader, or where the taps go through the GEMM, the shader summing their
    /// products (the weights then in the GEMM's layout).
    pack4: Option<(Arc<Pipeline>, Option<Coefficients>)>,
    /// The taps' GEMM, where they fit it ([`Deconvolution::taps_fit`]).
    taps: Option<GpuTaps>,
}

/// The GEMM the taps go through: its shader, variant, and what it binds as its unused
/// partial sums.
struct GpuTaps {
    gemm: GemmEngine,
    options: OptionSet,
    no_partials: Option<GpuMat>,
}

/// Weights and bias on the device.
type Coefficients = (GpuMat, GpuMat);

/// The most kernel taps a layer takes through the batched GEMM: its products are taps × the
/// input's positions × the outputs (a 4×4 kernel's 16: four times a stride-2 output).
const MAX_GEMM_TAPS: usize = 16;

/// The output of one forward: its size and where it starts in the full result.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    out: [usize; 2],
    left: usize,
    top: usize,
}

impl AsMut<Window> for Deconvolution {
    fn as_mut(&mut self) -> &mut Window {
        &mut self.window
    }
}

impl Deconvolution {
    fn geometry(&self, w: usize, h: usize) -> Result<Geometry> {
        let ([kw, kh], [dw, dh], [sw, sh]) = self.window.taps();
        if w == 0 || h == 0 {
            return Err(InputError::Output {
                what: "an empty input",
                shape: vec![w, h],
            }
            .into());
        }
        let full = [
            (w - 1) * sw + dw * (kw - 1) + 1 + self.output_pad[0],
            (h - 1) * sh + dh * (kh - 1) + 1 + self.output_pad[1],
        ];
        let [l, r, t, b] = self.window.pad;
        let [ow, oh] = self.output_size;
        let (left, right, top, bottom) = if self.window.pad.iter().any(|p| *p > 0) {
            let p = |v: i32| v.max(0) as usize;
            (p(l), p(r), p(t), p(b))
        } else if ow > 0 && oh > 0 && self.window.pad.iter().any(|p| *p == -233 || *p == -234) {
            let (wcut, hcut) = (full[0].saturating_sub(ow), full[1].saturating_sub(oh));
            if self.window.pad.contains(&-233) {
                (wcut / 2, wcut - wcut / 2, hcut / 2, hcut - hcut / 2)
            } else {
                (wcut - wcut / 2, wcut / 2, hcut - hcut / 2, hcut / 2)
            }
        } else if ow > 0 && oh > 0 {
            // ncnn cuts nothing and makes no output here (its forward fails)
            return Err(InputError::Output {
                what: "output_w/output_h (20=/21=) without positive or -233/-234 pads",
                shape: vec![ow, oh],
            }
            .into());
        } else {
            (0, 0, 0, 0)
        };
        if left + right >= full[0] || top + bottom >= full[1] {
            return Err(InputError::Output {
                what: "the pads cut all of it",
                shape: full.to_vec(),
            }
            .into());
        }
        Ok(Geometry {
            out: [full[0] - left - right, full[1] - top - bottom],
            left,
            top,
        })
    }
}

impl Deconvolution {
    /// Whether the pack4 shaders take it: one group over whole blocks of 4 input channels.
    fn dense_blocks(&self) -> bool {
        self.window.group == 1 && self.window.channels_per_group().is_multiple_of(4)
    }

    /// Whether `deconvolution_dw_pack4` takes it: 2-D, each output its own input's, in blocks.
    fn depthwise_blocks(&self) -> bool {
        let w = &self.window;
        w.rank == Rank::Two
            && w.group > 1
            && w.group == w.num_output
            && w.channels_per_group() == 1
            && w.num_output.is_multiple_of(4)
    }

    /// Whether the taps go through the batched GEMM: dense over whole blocks of 4 input
    /// channels, at most [`MAX_GEMM_TAPS`] taps (the products take taps × the input's
    /// positions × the outputs).
    fn taps_fit(&self) -> bool {
        let w = &self.window;
        w.group == 1 && w.channels().is_multiple_of(4) && w.kernel[0] * w.kernel[1] <= MAX_GEMM_TAPS
    }

    /// The taps' GEMM on an input of `positions` (rows `in_rs` apart): one product whose
    /// outputs are every tap's blocks of outputs, `[tap][output block]` (a GEMM per tap left a
    /// 3-output layer one block of a 16-block tile: 426 µs on upconv_7's last layer).
    fn taps_gemm(&self, positions: usize, in_rs: usize) -> Batched {
        let [kw, kh] = self.window.kernel;
        Batched {
            positions,
            in_blocks: self.window.channels() / 4,
            in_rs,
            out_blocks: kw * kh * self.window.num_output.div_ceil(4),
            out_rs: positions,
            batches: 1,
        }
    }

    /// The output's elempack from a pack4 input: 4 where the outputs fill blocks.
    fn out_pack(&self) -> usize {
        if self.window.num_output.is_multiple_of(4) {
            4
        } else {
            1
        }
    }

    /// The weights of the taps' GEMM: output `to` of its product is output `to % blocks` of
    /// tap `to / blocks` (blocks: the outputs rounded up to blocks of 4, zero past them).
    fn weights_taps(&self) -> Vec<f32> {
        let (cin, outc) = (self.window.channels(), self.window.num_output);
        let n = self.window.kernel[0] * self.window.kernel[1];
        let blocks = outc.div_ceil(4) * 4;
        self.taps_gemm(0, 0).weights(|_, i, to| {
            let (t, o) = (to / blocks, to % blocks);
            match o < outc {
                true => self.weights[(o * cin + i) * n + t],
                false => 0.0,
            }
        })
    }

    /// The depthwise pack4 shader's weights: per block and tap, the block's four weights.
    fn weights_depthwise4(&self) -> Vec<f32> {
        let taps = self.window.taps_count();
        let blocks = self.window.num_output / 4;
        (0..blocks * taps * 4)
            .map(|i| {
                let (b, t, l) = (i / (taps * 4), i / 4 % taps, i % 4);
                self.weights[(b * 4 + l) * taps + t]
            })
            .collect()
    }

    /// The weights for the pack4 shaders: per output block (pack1 out too: the last block's
    /// rows past the outputs are zero), input block and tap, a vec4 over the input lanes per
    /// output lane.
    fn weights_pack4(&self) -> Vec<f32> {
        let (outc, cin) = (self.window.num_output, self.window.channels_per_group());
        let taps = self.window.weight_data_size / (outc * cin).max(1);
        let mut out = Vec::with_capacity(self.weights.len());
        for ob in 0..outc.div_ceil(4) {
            for qb in 0..cin / 4 {
                for t in 0..taps {
                    for r in 0..4 {
                        for l in 0..4 {
                            let (o, q) = (ob * 4 + r, qb * 4 + l);
                            out.push(match o < outc {
                                true => self.weights[(o * cin + q) * taps + t],
                                false => 0.0,
                            });
                        }
                    }
                }
            }
        }
        out
    }
}

impl Deconvolution {
    /// One forward with the weights (and bias) as inputs: `[kernel_w, kernel_h, num_output /
    /// group, channels]`, per group input-major as ncnn lays dynamic weights out, transposed
    /// here to the stored output-major order.
    fn forward_dynamic(&self, bottoms: &[Mat]) -> Result<Mat> {
        let (bottom, weight, bias) = dynamic_inputs(bottoms, self.window.bias_term)?;
        let [kw, kh, outc_g, cin] = weight.shape();
        let group = self.window.group;
        let (cin_g, maxk) = (cin / group.max(1), kw * kh);
        let src = weight.to_values();
        let mut weights = Vec::with_capacity(src.len());
        for g in 0..group {
            let wg = &src[g * cin_g * outc_g * maxk..];
            for o in 0..outc_g {
                for i in 0..cin_g {
                    let at = (i * outc_g + o) * maxk;
                    weights.extend_from_slice(&wg[at..at + maxk]);
                }
            }
        }
        let deconv = Deconvolution {
            window: self
                .window
                .with_weights([kw, kh], outc_g * group, weights.len())?,
            output_pad: self.output_pad,
            output_size: self.output_size,
            weights,
            bias: bias.map(Mat::to_values).unwrap_or_default(),
            ..Deconvolution::default()
        };
        deconv.forward(bottom, &RunOptions::default())
    }
}

impl Layer for Deconvolution {
    fn support(&self) -> Support {
        if self.window.dynamic {
            // ncnn's Vulkan deconvolution takes no dynamic weights either
            return Support::MANY;
        }
        let pack4 = self.gpu.as_ref().is_some_and(|g| g.pack4.is_some());
        Support::ONE_BLOB.gpu(self.gpu.is_some()).packs(if pack4 {
            Packs::UP_TO_4
        } else {
            Packs::ONE
        })
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.window.load(pd, 28)?;
        let opr = pd.int(18, 0).max(0) as usize;
        let ow = pd.int(20, 0).max(0) as usize;
        if self.window.rank == Rank::One {
            // one row: no padding below, and an output size of one row where one is given
            self.output_pad = [opr, 0];
            self.output_size = [ow, usize::from(ow > 0)];
            return Ok(());
        }
        self.output_pad = [opr, pd.int(19, opr as i32).max(0) as usize];
        self.output_size = [ow, pd.int(21, ow as i32).max(0) as usize];
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        if self.window.dynamic {
            return Ok(());
        }
        self.weights = weights.load(self.window.weight_data_size, 0)?;
        // the CPU's GEMM rows were laid out from the weights a second load replaces
        self.weights_gemm = OnceLock::new();
        if self.window.bias_term {
            self.bias = weights.load(self.window.num_output, 1)?;
        }
        Ok(())
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        let module = Shader::Deconvolution.module();
        self.gpu = match gpu.filter(|_| !self.window.dynamic) {
            Some(gpu) => {
                let taps = match self.taps_fit() {
                    true => {
                        let gemm = GemmEngine::choose(gpu, opt);
                        gpu.ctx
                            .fitting_variants(gemm.shader().module(), gpu.options)?;
                        Some(GpuTaps {
                            gemm,
                            options: gpu.options,
                            no_partials: None,
                        })
                    }
                    false => None,
                };
                let depthwise = self
                    .depthwise_blocks()
                    .then_some(Shader::DeconvolutionDwPack4);
                let pack4 = if let Some(shader) = depthwise {
                    let spec = self.window.spec(Pack4Kind::None);
                    Some((gpu.pipeline(shader.module(), &spec)?, None))
                } else if self.dense_blocks() {
                    let shader = match (taps.is_some(), self.out_pack()) {
                        (true, 4) => Shader::DeconvolutionTaps,
                        (true, _) => Shader::DeconvolutionTapsPack4to1,
                        (false, 4) => Shader::DeconvolutionPack4,
                        (false, _) => Shader::DeconvolutionPack4to1,
                    };
                    Some((
                        gpu.pipeline(shader.module(), &self.window.spec(Pack4Kind::None))?,
                        None,
                    ))
                } else {
                    None
                };
                Some(GpuDeconvolution {
                    pipeline: gpu.pipeline(module, &self.window.spec(Pack4Kind::None))?,
                    weights: None,
                    bias: None,
                    pack4,
                    taps,
                })
            }
            _ => None,
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        let weights4 = self.gpu.as_ref().and_then(|g| {
            g.pack4.as_ref().map(|_| match g.taps {
                Some(_) => self.weights_taps(),
                None if self.depthwise_blocks() => self.weights_depthwise4(),
                None => self.weights_pack4(),
            })
        });
        let Some(state) = self.gpu.as_mut() else {
            return Ok(());
        };
        let bias = self.window.bias_or_zeros(&self.bias);
        state.weights = Some(gpu.upload_values(&self.weights, 1)?);
        state.bias = Some(gpu.upload_values(&bias, 1)?);
        if let (Some((_, packed)), Some(weights4)) = (state.pack4.as_mut(), weights4) {
            let bias4 = self.window.bias_blocks(&self.bias);
            *packed = Some((
                gpu.upload_values(&weights4, 4)?,
                gpu.upload_values(&bias4, 4)?,
            ));
        }
        if let Some(taps) = state.taps.as_mut() {
            taps.no_partials = Some(no_partials(gpu.ctx)?);
        }
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        self.window.accepts(bottoms, |w, h| self.geometry(w, h))
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let state = self.gpu.ready()?;
        let not_loaded = || Error::NotLoaded {
            what: "the weights on the device",
        };
        let (pipeline, weights, bias, pack) = match (bottom.elempack, &state.pack4) {
            (1, _) => {
                let (Some(w), Some(b)) = (&state.weights, &state.bias) else {
                    return Err(not_loaded());
                };
                (&state.pipeline, w, b, 1)
            }
            (4, Some((pipeline, packed))) => {
                let (w, b) = packed.as_ref().ok_or_else(not_loaded)?;
                (pipeline, w, b, self.out_pack())
            }
            (p, _) => return Err(Error::NoShader { elempack: p }),
        };
        self.window
            .check_input(bottom.dims, bottom.c * bottom.elempack)?;
        let geo = self.geometry(bottom.w, bottom.h)?;
        let ctx = rec.context();
        let [ow, oh] = geo.out;
        let out = [ow, oh, self.window.num_output / pack];
        // the 1-D form's output is 2-D: its 3-D view's one row holds the sequence
        let dims = if self.window.rank == Rank::One { 2 } else { 3 };
        let top = GpuMat::alloc(ctx, dims, out, pack, bottom.options)?;
        let mut words = bottom.shape_words().to_vec();
        words.extend(top.shape_words());
        words.extend([geo.left as u32, geo.top as u32, 0]);
        let grid = match bottom.elempack {
            4 => block_grid(&top),
            _ => top.grid(),
        };
        if let (4, Some(taps)) = (bottom.elempack, &state.taps) {
            // the taps' products, then `pipeline` sums them per output
            let unused = taps.no_partials.as_ref().ok_or_else(not_loaded)?;
            let gemm = self.taps_gemm(bottom.w * bottom.h, bottom.cstep);
            let products = GpuMat::alloc(
                ctx,
                2,
                [gemm.out_blocks * gemm.positions, 1, 1],
                4,
                bottom.options,
            )?;
            gemm.record(
                rec,
                (taps.gemm, taps.options, None),
                [bottom, &products, weights, bias, unused],
            )?;
            rec.dispatch(pipeline, &[&products, &top, bias], &words, grid)?;
            return Ok(top);
        }
        rec.dispatch(pipeline, &[bottom, &top, weights, bias], &words, grid)?;
        Ok(top)
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        Ok(vec![self.forward_dynamic(bottoms)?])
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let [w, h, _, c] = bottom.shape();
        self.window.check_input(bottom.dims, c)?;
        let geo = self.geometry(w, h)?;
        if self.window.group == 1 {
            return self.forward_gemm(bottom, &geo);
        }
        let ([kw, kh], [dw, dh], [sw, sh]) = self.window.taps();
        let [ow, oh] = geo.out;
        let cin_g = self.window.channels_per_group();
        let cout_g = self.window.num_output / self.window.group;
        let x = bottom.to_values();
        let plane = w * h;
        // the input taps of a full-result coordinate along one axis: (kernel index, input index)
        let taps = |b: usize, k: usize, d: usize, s: usize, n: usize| -> Vec<(usize, usize)> {
            (0..k)
                .filter_map(|kk| {
                    let t = b.checked_sub(kk * d)?;
                    (t % s == 0 && t / s < n).then_some((kk, t / s))
                })
                .collect()
        };
        let xtaps: Vec<Vec<(usize, usize)>> = (0..ow)
            .map(|ox| taps(ox + geo.left, kw, dw, sw, w))
            .collect();
        let ytaps: Vec<Vec<(usize, usize)>> = (0..oh)
            .map(|oy| taps(oy + geo.top, kh, dh, sh, h))
            .collect();
        let mut out = vec![0.0f32; self.window.num_output * ow * oh];
        out.par_chunks_mut((ow * oh).max(1))
            .enumerate()
            .for_each(|(p, dst)| {
                let g = p / cout_g;
                let bias = self.bias.get(p).copied().unwrap_or(0.0);
                let wp = &self.weights[p * cin_g * kw * kh..(p + 1) * cin_g * kw * kh];
                for (oy, ty) in ytaps.iter().enumerate() {
                    for (ox, tx) in xtaps.iter().enumerate() {
                        let mut sum = bias;
                        for &(ky, i) in ty {
                            for &(kx, j) in tx {
                                for q in 0..cin_g {
                                    let v = x[(g * cin_g + q) * plane + i * w + j];
                                    sum += v * wp[(q * kh + ky) * kw + kx];
                                }
                            }
                        }
                        dst[oy * ow + ox] =
                            activate(self.window.activation, &self.window.activation_params, sum);
                    }
                }
            });
        Mat::from_shape_values(3, [ow, oh, 1, self.window.num_output], &out)
    }
}

impl Deconvolution {
    /// A dense layer on the CPU: every (output channel, kernel tap) row of the weights times
    /// the input planes in one GEMM, then each row's products added at its tap's offset in
    /// the output (col2im), in parallel over output channels.
    fn forward_gemm(&self, bottom: &Mat, geo: &Geometry) -> Result<Mat> {
        let ([kw, kh], [dw, dh], [sw, sh]) = self.window.taps();
        let (w, h, cin) = (bottom.w, bottom.h, self.window.channels_per_group());
        let (kk, nout, n) = (kw * kh, self.window.num_output, w * h);
        let weights = self.weights_gemm.get_or_init(|| {
            let mut t = vec![0.0f32; self.weights.len()];
            for (p, wp) in self.weights.chunks_exact((cin * kk).max(1)).enumerate() {
                for (q, wq) in wp.chunks_exact(kk.max(1)).enumerate() {
                    for (k, v) in wq.iter().enumerate() {
                        t[(p * kk + k) * cin + q] = *v;
                    }
                }
            }
            t
        });
        let (x, step) = channel_planes(bottom);
        let mut cols = Scratch::zeros(nout * kk * n);
        gemm(
            MatRef::rows(weights, nout * kk, cin, cin),
            MatRef::rows(&x, cin, n, step),
            MatMut::rows(&mut cols, nout * kk, n, n),
            false,
        );
        let [ow, oh] = geo.out;
        let mut top = Mat::new_3d(ow, oh, nout, 1)?;
        let cstep = top.cstep;
        let (act, params) = (self.window.activation, &self.window.activation_params);
        top.f32_mut()?
            .par_chunks_mut(cstep.max(1))
            .zip(cols.par_chunks(kk * n))
            .enumerate()
            .for_each(|(p, (dst, rows))| {
                dst.fill(self.bias.get(p).copied().unwrap_or(0.0));
                for (k, row) in rows.chunks_exact(n.max(1)).enumerate() {
                    let (ky, kx) = (k / kw, k % kw);
                    for iy in 0..h {
                        let Some(oy) = (iy * sh + ky * dh).checked_sub(geo.top) else {
                            continue;
                        };
                        if oy >= oh {
                            break;
                        }
                        let src = &row[iy * w..(iy + 1) * w];
                        let line = &mut dst[oy * ow..(oy + 1) * ow];
                        for (ix, v) in src.iter().enumerate() {
                            let Some(ox) = (ix * sw + kx * dw).checked_sub(geo.left) else {
                                continue;
                            };
                            if ox >= ow {
                                break;
                            }
                            line[ox] += v;
                        }
                    }
                }
                activate_all(act, params, &mut dst[..ow * oh]);
            });
        Ok(top)
    }
}
