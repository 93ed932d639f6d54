//! Convolution3D and ConvolutionDepthWise3D: `0=num_output 1=kernel_w 11=kernel_h 21=kernel_d
//! 2=dilation_w 12=dilation_h 22=dilation_d 3=stride_w 13=stride_h 23=stride_d 4=pad_left
//! 15=pad_right 14=pad_top 16=pad_bottom 24=pad_front 17=pad_behind` (-233 / -234: ncnn's
//! "same" padding, upper / lower) `18=pad_value 5=bias_term 6=weight_data_size 7=group`
//! (depthwise) `9=activation_type 10=activation_params`, over 4-D blobs; weights
//! `[num_output][channels / group][kernel_d][kernel_h][kernel_w]`, then the bias.
//!
//! ncnn's "same lower" padding splits the width and height with the odd one first but the
//! depth with the odd one last (its `copy_make_border_3d` call takes `dpad / 2` in front);
//! fpshader splits them as ncnn does.
//!
//! CPU: per group and output slab, the windows as columns (im2col) and one GEMM with the
//! weights. GPU: dense layers over whole blocks of 4 channels through the 2-D convolutions'
//! implicit GEMM (tensor cores where those take them), whose steps run over the depth taps
//! too (`convolution_head.comp`'s depth constants); those of 3×3 across at stride 1 on large
//! maps as Winograd F(4,3) per depth slab, the depth taps summed by its products
//! (`conv::winograd_gpu`); other layers through the direct pack1 shader, which sums the same
//! window.

use rayon::prelude::*;

use crate::OptionSet;
use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::layer::activation::fused::activate_all;
use crate::layer::contract::{GpuSetup, Layer, Packs, Support};
use crate::layer::conv::implicit_gemm::DepthSlabs;
use crate::layer::conv::implicit_gemm::{GemmCall, GemmEngine, gemm_weights, shaped};
use crate::layer::conv::window::{Pack4Kind, Rank, Window, of_rank};
use crate::layer::conv::winograd_gpu::{self, GpuWinograd, WinogradCall};
use crate::layer::epilogue::{Epilogue, FusedActivation};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::cpu_gemm::{MatMut, MatRef, gemm};
use crate::layer::shared::pipelines::{DeviceSide, no_partials};
use crate::layer::shared::view::{channel_planes, kernel_fits};
use crate::layer::weights::Weights;
use crate::shaders::Shader;
use crate::tensor::{BlobShape, GpuMat, Mat};

/// A 3-D convolution (dense, grouped or depthwise).
#[derive(Default)]
pub struct Convolution3D {
    window: Window,
    pad_value: f32,
    weights: Vec<f32>,
    bias: Vec<f32>,
    gpu: Option<GpuConvolution3D>,
}

/// The device side: the pack1 weights for the direct shader, and for dense layers over whole
/// blocks the GEMM's.
struct GpuConvolution3D {
    options: OptionSet,
    /// The GEMM pack4 blobs go through (dense layers over whole blocks of 4 channels).
    gemm: Option<GemmEngine>,
    weights1: Option<GpuMat>,
    bias1: Option<GpuMat>,
    weights4: Option<GpuMat>,
    bias4: Option<GpuMat>,
    no_partials: Option<GpuMat>,
    /// Winograd F(4,3) for large maps, where the layer fits it.
    winograd: Option<GpuWinograd>,
}

/// Where one forward's windows lie, per axis `[w, h, d]`: the padding before the input, and
/// the output's extent.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    before: [usize; 3],
    out: [usize; 3],
}

impl AsMut<Window> for Convolution3D {
    fn as_mut(&mut self) -> &mut Window {
        &mut self.window
    }
}

impl Convolution3D {
    /// A Convolution3D layer.
    pub fn dense() -> Self {
        of_rank(Rank::Three, false)
    }

    /// A ConvolutionDepthWise3D layer (the form that reads `7=group`).
    pub fn depthwise() -> Self {
        of_rank(Rank::Three, true)
    }

    /// The window geometry over an input of `[w, h, d]`.
    fn geometry(&self, size: [usize; 3]) -> Result<Geometry> {
        let [kernel, dilation, stride] = self.window.axes3();
        let [l, r, t, b] = self.window.pad;
        let [f, k] = self.window.depth.pad;
        let extent = |i: usize| dilation[i] * (kernel[i] - 1) + 1;
        let pads: [[usize; 2]; 3] = if l == -233 || l == -234 {
            let excess = |i: usize| {
                let n = size[i].max(1);
                (extent(i) + (n - 1) / stride[i] * stride[i]).saturating_sub(size[i])
            };
            let [pw, ph, pd] = [excess(0), excess(1), excess(2)];
            if l == -233 {
                [
                    [pw / 2, pw - pw / 2],
                    [ph / 2, ph - ph / 2],
                    [pd / 2, pd - pd / 2],
                ]
            } else {
                // ncnn's lower split of w and h, its upper one of d
                [
                    [pw - pw / 2, pw / 2],
                    [ph - ph / 2, ph / 2],
                    [pd / 2, pd - pd / 2],
                ]
            }
        } else {
            let p = |v: i32| v.max(0) as usize;
            [[p(l), p(r)], [p(t), p(b)], [p(f), p(k)]]
        };
        let padded = [0, 1, 2].map(|i| size[i] + pads[i][0] + pads[i][1]);
        kernel_fits(
            "dilated kernel",
            [extent(0), extent(1)],
            [padded[0], padded[1]],
        )?;
        kernel_fits("dilated kernel depth", [extent(2), 1], [padded[2], 1])?;
        Ok(Geometry {
            before: pads.map(|p| p[0]),
            out: [0, 1, 2].map(|i| (padded[i] - extent(i)) / stride[i] + 1),
        })
    }

    /// Whether pack4 blobs go through the GEMM: one group, outputs in whole blocks of 4 (an
    /// input of other channel counts, a clip's RGB, padded to blocks with zeros).
    fn dense_blocks(&self) -> bool {
        let w = &self.window;
        w.group == 1 && w.num_output.is_multiple_of(4)
    }

    /// Whether the GEMM takes a pack1 input padded to whole blocks of 4 channels (r3d_18's
    /// 3-channel stem took 42% of the network's device time in the direct pack1 shader on an
    /// H200).
    fn pads_input(&self) -> bool {
        self.dense_blocks() && !self.window.channels().is_multiple_of(4)
    }

    /// Whether pack4 blobs may take Winograd (per shape: [`winograd_gpu::fits_grid`]): a
    /// dense layer of 3×3 across at stride 1 over whole blocks, padded with zeros (the depth's
    /// padding lies in the transformed domain, where only 0 is the same value).
    fn winograd_fits(&self) -> bool {
        self.dense_blocks()
            && !self.pads_input()
            && self.pad_value == 0.0
            && winograd_gpu::fits_window(&self.window)
    }
}

impl Layer for Convolution3D {
    fn support(&self) -> Support {
        let pack4 = self.gpu.as_ref().is_some_and(|g| g.gemm.is_some());
        let packs = if pack4 { Packs::UP_TO_4 } else { Packs::ONE };
        Support {
            vulkan_pad_to_pack4: pack4 && self.pads_input(),
            ..Support::ONE_BLOB
                .gpu(self.gpu.is_some())
                .packs(packs)
                .gpu_4d()
        }
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        // (ncnn's 3-D convolutions take no dynamic weights: id 19 is unused)
        self.window.load(pd, 19)?;
        if self.window.dynamic {
            return Err(Error::BadParam {
                id: 19,
                value: "1".into(),
                allowed: "0: the 3-D convolutions take no weights as inputs",
            });
        }
        self.pad_value = pd.float(18, 0.0);
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.weights = weights.load(self.window.weight_data_size, 0)?;
        if self.window.bias_term {
            self.bias = weights.load(self.window.num_output, 1)?;
        }
        Ok(())
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(gpu) => {
                let gemm = self.dense_blocks().then(|| GemmEngine::choose(gpu, opt));
                let shaders = [Some(Shader::Convolution), gemm.map(GemmEngine::shader)];
                for shader in shaders.into_iter().flatten() {
                    gpu.ctx.fitting_variants(shader.module(), gpu.options)?;
                }
                let winograd = opt.use_winograd_convolution && self.winograd_fits();
                if winograd {
                    winograd_gpu::check_shaders(gpu.ctx, gpu.options)?;
                }
                Some(GpuConvolution3D {
                    options: gpu.options,
                    gemm,
                    weights1: None,
                    bias1: None,
                    weights4: None,
                    bias4: None,
                    no_partials: None,
                    winograd: winograd.then(GpuWinograd::default),
                })
            }
            None => None,
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        let w = &self.window;
        let bias = w.bias_or_zeros(&self.bias);
        let (cin, taps) = (w.channels_per_group(), w.taps_count());
        let packed = gemm_weights(&self.weights, cin, taps, w.num_output);
        let Some(state) = self.gpu.as_mut() else {
            return Ok(());
        };
        // new weights: the transformed ones are made again at the next Winograd forward
        if let Some(w) = state.winograd.as_mut() {
            *w = GpuWinograd::default();
        }
        state.weights1 = Some(gpu.upload_values(&self.weights, 1)?);
        state.bias1 = Some(gpu.upload_values(&bias, 1)?);
        if state.gemm.is_some() {
            state.weights4 = Some(gpu.upload_values(&packed, 4)?);
            state.bias4 = Some(gpu.upload_values(&bias, 4)?);
            state.no_partials = Some(no_partials(gpu.ctx)?);
        }
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms.iter().all(|b| {
            let [w, h, d, c] = b.shape;
            b.dims == 4 && c == self.window.channels() && self.geometry([w, h, d]).is_ok()
        })
    }

    fn forward_gpu_activated(
        &self,
        bottoms: &[GpuMat],
        act: FusedActivation,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<GpuMat>> {
        match bottoms {
            [bottom] if self.window.activation == 0 => {
                self.forward_gpu_with(bottom, (Some(act), None), rec)
            }
            _ => Ok(None),
        }
    }

    fn forward_gpu_residual(
        &self,
        bottoms: &[GpuMat],
        residual: &GpuMat,
        act: Option<FusedActivation>,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<GpuMat>> {
        // the sum comes after the layer's own activation: a layer with one keeps it apart
        match bottoms {
            [bottom] if self.window.activation == 0 => {
                self.forward_gpu_with(bottom, (act, Some(residual)), rec)
            }
            _ => Ok(None),
        }
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        self.forward_gpu_with(bottom, (None, None), rec)?
            .ok_or(Error::NoShader {
                elempack: bottom.elempack,
            })
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let [w, h, d, c] = bottom.shape();
        self.window.check_volume(bottom.dims, c)?;
        let geo = self.geometry([w, h, d])?;
        let [ow, oh, od] = geo.out;
        let win = &self.window;
        let (group, cin_g) = (win.group, win.channels_per_group());
        let cout_g = win.num_output / group;
        let taps = win.taps_count();
        let steps = cin_g * taps;
        let slab = crate::host::values(&[ow, oh])?;
        let (x, step) = channel_planes(bottom);
        let mut top = Mat::new_4d(ow, oh, od, win.num_output, 1)?;
        let cstep = top.cstep;
        let out = top.f32_mut()?;
        // one slab of outputs at a time: its columns take steps × slab values
        let mut cols = vec![0.0f32; crate::host::values(&[steps, slab])?];
        for g in 0..group {
            let weights = &self.weights[g * cout_g * steps..(g + 1) * cout_g * steps];
            for oz in 0..od {
                self.columns(&x, step, g * cin_g, [w, h, d], (geo, oz), &mut cols);
                let dst = &mut out[g * cout_g * cstep + oz * slab..];
                gemm(
                    MatRef::rows(weights, cout_g, steps, steps),
                    MatRef::rows(&cols, steps, slab, slab),
                    MatMut::rows(dst, cout_g, slab, cstep),
                    false,
                );
            }
        }
        let (act, params) = (win.activation, &win.activation_params);
        out.par_chunks_mut(cstep.max(1))
            .enumerate()
            .for_each(|(p, plane)| {
                let plane = &mut plane[..ow * oh * od];
                let b = self.bias.get(p).copied().unwrap_or(0.0);
                plane.iter_mut().for_each(|v| *v += b);
                activate_all(act, params, plane);
            });
        Ok(top)
    }
}

impl Convolution3D {
    /// The windows of output slab `oz` as columns: row `(ci · taps + tap)`, column the
    /// slab's position, over the group's input channels from `first` on of `x` (planes `step`
    /// apart, each `[w, h, d]`), the pad value outside.
    fn columns(
        &self,
        x: &[f32],
        step: usize,
        first: usize,
        [w, h, d]: [usize; 3],
        (geo, oz): (Geometry, usize),
        cols: &mut [f32],
    ) {
        let [[kw, kh, kd], [dw, dh, dd], [sw, sh, sd]] = self.window.axes3();
        let [ow, oh, _] = geo.out;
        let [bw, bh, bd] = geo.before;
        let pad = self.pad_value;
        cols.par_chunks_mut((ow * oh).max(1))
            .enumerate()
            .for_each(|(row, dst)| {
                let (ci, tap) = (row / (kw * kh * kd), row % (kw * kh * kd));
                let (kz, ky, kx) = (tap / (kw * kh), tap / kw % kh, tap % kw);
                let plane = &x[(first + ci) * step..];
                let z = (oz * sd + kz * dd).checked_sub(bd).filter(|&z| z < d);
                for oy in 0..oh {
                    let y = (oy * sh + ky * dh).checked_sub(bh).filter(|&y| y < h);
                    let line = &mut dst[oy * ow..(oy + 1) * ow];
                    let (Some(z), Some(y)) = (z, y) else {
                        line.fill(pad);
                        continue;
                    };
                    let src = &plane[(z * h + y) * w..(z * h + y + 1) * w];
                    for (ox, v) in line.iter_mut().enumerate() {
                        let xi = (ox * sw + kx * dw).checked_sub(bw).filter(|&xi| xi < w);
                        *v = xi.map_or(pad, |xi| src[xi]);
                    }
                }
            });
    }

    /// Winograd's forward from pack4 `bottom` into `top` (`conv::winograd_gpu`) over `slabs`:
    /// the transformed weights (made and uploaded at the first), then its three steps. An
    /// error past a device limit or the memory budget comes before anything is recorded.
    fn record_winograd(
        &self,
        (state, winograd): (&GpuConvolution3D, &GpuWinograd),
        rec: &mut Recorder<'_>,
        [bottom, top, bias]: [&GpuMat; 3],
        (words, epilogue, slabs): (&[u32], Epilogue<'_>, DepthSlabs),
    ) -> Result<()> {
        let (Some(gemm), Some(no_partials)) = (state.gemm, &state.no_partials) else {
            return Err(Error::NotLoaded {
                what: "the weights on the device",
            });
        };
        let gpu = GpuSetup {
            ctx: rec.context(),
            options: state.options,
        };
        let sizes = [
            self.window.channels(),
            self.window.num_output,
            slabs.axis.kernel,
        ];
        let call = WinogradCall {
            gemm,
            options: state.options,
            weights: winograd.weights(gpu, &self.weights, sizes)?,
            no_partials,
            window: &self.window,
            depth: Some(slabs),
        };
        call.record(rec, [bottom, top, bias], (words, epilogue))
    }

    /// The forward on the device, `act` in place of the layer's own activation where given.
    /// With `residual`, that blob is added before the activation in the GEMM's epilogue (the
    /// net's fused sum): `None`, with nothing recorded, where this input does not take the GEMM
    /// or the output would not have the residual's layout.
    fn forward_gpu_with(
        &self,
        bottom: &GpuMat,
        (act, residual): (Option<FusedActivation>, Option<&GpuMat>),
        rec: &mut Recorder<'_>,
    ) -> Result<Option<GpuMat>> {
        let state = self.gpu.ready()?;
        let channels =
            (self.window).unpadded_channels(bottom.c, bottom.elempack, self.pads_input());
        self.window.check_volume(bottom.dims, channels)?;
        let [w, h, d, _] = bottom.space();
        let geo = self.geometry([w, h, d])?;
        let ctx = rec.context();
        let [ow, oh, od] = geo.out;
        let pack = bottom.elempack;
        let outc = self.window.num_output / pack;
        let top = GpuMat::alloc_space(ctx, 4, [ow, oh, od, outc], pack, bottom.options)?;
        let mut words = bottom.shape_words().to_vec();
        words.extend(top.shape_words());
        words.extend([
            geo.before[0] as u32,
            geo.before[1] as u32,
            self.pad_value.to_bits(),
        ]);
        let slabs = DepthSlabs {
            axis: self.window.depth,
            pad_front: geo.before[2],
            depth: d,
            outdepth: od,
        };
        let shape = slabs.spec().to_vec();
        let not_loaded = || Error::NotLoaded {
            what: "the weights on the device",
        };
        let layout = |m: &GpuMat| (m.dims, m.space(), m.elempack, m.cstep, m.format, m.options);
        let gemm_path = pack == 4 && state.gemm.is_some();
        if residual.is_some_and(|r| !gemm_path || layout(r) != layout(&top)) {
            return Ok(None);
        }
        let epilogue = Epilogue { act, residual };
        if let (4, Some(gemm)) = (pack, state.gemm) {
            let (Some(weights), Some(bias), Some(no_partials)) =
                (&state.weights4, &state.bias4, &state.no_partials)
            else {
                return Err(not_loaded());
            };
            let (blocks, kd) = ([bottom.c, outc], self.window.depth.kernel);
            if let Some(winograd) = (state.winograd.as_ref())
                .filter(|_| winograd_gpu::fits_grid(ctx, [ow, oh], blocks, [d, od], kd))
            {
                let io = [bottom, &top, bias];
                // its buffers past the memory left: the implicit GEMM needs none of them
                match self.record_winograd((state, winograd), rec, io, (&words, epilogue, slabs)) {
                    Err(e) if e.is_device_limit() => {}
                    done => return done.map(|()| Some(top)),
                }
            }
            let call = GemmCall {
                gemm,
                options: state.options,
                no_partials,
                window: &self.window,
                shape,
            };
            call.record(rec, [bottom, &top, weights, bias], (&words, epilogue))?;
            return Ok(Some(top));
        }
        if pack != 1 {
            return Err(Error::NoShader { elempack: pack });
        }
        let (Some(weights), Some(bias)) = (&state.weights1, &state.bias1) else {
            return Err(not_loaded());
        };
        let mut values = self.window.spec_with(Pack4Kind::None, epilogue.act);
        values.extend(shape);
        let pipeline = ctx.pipeline(
            Shader::Convolution.module(),
            state.options,
            &shaped(values, &words),
        )?;
        rec.dispatch(
            &pipeline,
            &[bottom, &top, weights, bias],
            &words,
            top.grid(),
        )?;
        Ok(Some(top))
    }
}
