//! Convolution and ConvolutionDepthWise: `0=num_output 1=kernel_w 11=kernel_h 2=dilation_w
//! 12=dilation_h 3=stride_w 13=stride_h 4=pad_left 15=pad_right 14=pad_top 16=pad_bottom
//! (-233 / -234: ncnn's "same" padding, upper / lower) 18=pad_value 5=bias_term
//! 6=weight_data_size 7=group (depthwise) 8=int8_scale_term 9=activation_type
//! 10=activation_params`; weights `[num_output][channels / group][kernel_h][kernel_w]` (type
//! 0: fp32, fp16, int8 or quantized), then the bias, then with `int8_scale_term` the weight
//! scales, the input's scale and (above 100) the output's: ncnn's int8 inference (`int8`).
//!
//! CPU: one algorithm per layer and shape (`cpu::CpuAlgo`): Winograd for 3×3 stride-1 dense
//! layers, a GEMM over the planes for pointwise ones, im2col tiles and their GEMMs for the rest
//! of the dense and grouped ones, per-row tap sums for depthwise ones.
//! GPU, chosen per layer at `create_pipeline` and per shape at forward: dense pack4 layers as an
//! implicit GEMM tiled in shared memory (`convolution_gemm`, its steps split over slices when
//! the output has too few tiles to fill the device; on fp16 blobs where the device has
//! cooperative matrices, `convolution_gemm_cm` on tensor cores instead), 3×3 stride-1 ones of
//! at least 16 channels each side on large maps as Winograd F(4,3) whose 36 products go through
//! the same GEMM (`winograd`); grouped layers of a few large groups as dense ones (zero weights
//! outside each group: `reorder`), other grouped and depthwise pack4 layers, dense ones from
//! pack4 to pack1 outputs and pack1 layers as direct convolutions. Every shader reads the shapes through
//! `psc()`, and each forward specializes them, so they fold at pipeline time (one pipeline per
//! shape, from the context's cache after the first forward).
//!
//! The files: `cpu` (the CPU algorithms), `gemm` (the implicit GEMM's strategy: shader, tile
//! and split per shape), `winograd` (the GPU's Winograd), `direct` (the direct shaders: pack1,
//! grouped and depthwise pack4, pack4 to pack1), `residual` (the forward with the net's fused
//! residual sum), `weights` (the layouts the shaders read).

pub(in crate::layer::conv) mod cpu;
mod direct;
mod int8;
mod int8_gpu;
mod reorder;
mod residual;
mod weights;
mod winograd;

use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Packs, Support};
use crate::layer::conv::implicit_gemm::GemmEngine;
use crate::layer::conv::window::{Pack4Kind, Rank, Window, dynamic_inputs};
use crate::layer::epilogue::{Epilogue, FusedActivation};
use crate::layer::params::{ParamDict, bad_param};
use crate::layer::rows::Rows;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::pipelines::{DeviceSide, no_partials};
use crate::layer::shared::view::kernel_fits;
use crate::layer::weights::Weights;
use crate::shaders::Shader;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat};
use crate::{Opt, OptionSet};

mod gemm;

pub use cpu::CpuAlgo;
pub use int8_gpu::Int8Engine;

/// A convolution (dense, grouped or depthwise).
#[derive(Default)]
pub struct Convolution {
    window: Window,
    pad_value: f32,
    int8_scale_term: i32,
    weights: Vec<f32>,
    bias: Vec<f32>,
    /// The weights in Winograd's domain, for the CPU (made on first use).
    winograd: cpu::WinogradWeights,
    /// The depthwise weights as channel lanes, for the CPU's small maps (made on first use).
    lane_weights: cpu::LaneWeights,
    /// The pointwise and stem weights as panels for packed blobs on the CPU (made on first
    /// use).
    packed_panels: cpu::PackedPanels,
    /// The depthwise and grouped weights as packed lanes, for the CPU (made on first use).
    packed_taps: cpu::PackedTaps,
    /// With `int8_scale_term`: the scales and kernel levels (ncnn's int8 inference).
    int8: Option<Box<int8::Int8Conv>>,
    /// Where the outputs were reordered into a dense layer: the parameters' form.
    params_form: Option<reorder::ParamsForm>,
    gpu: Option<GpuConvolution>,
}

/// The device side: the algorithm per packing and the weights each reads, uploaded once.
/// Pipelines come from the context's cache per forward shape (`psc()` folds the shapes): made
/// on the first forward of a shape, found again on every later one.
struct GpuConvolution {
    /// The pack4 algorithm's shader, if a pack4 one fits (the pack1 one is `convolution`).
    pack4: Option<Shader>,
    /// The implicit GEMM pack4 blobs go through, if any (`pack4` is then its shader).
    gemm: Option<GemmEngine>,
    /// The options the pipelines are made with.
    options: OptionSet,
    weights1: Option<GpuMat>,
    weights4: Option<GpuMat>,
    bias: Option<GpuMat>,
    bias4: Option<GpuMat>,
    /// What the unsplit GEMM binds as its (unused) partial sums.
    no_partials: Option<GpuMat>,
    /// Winograd F(4,3) for large maps, where the layer fits it.
    winograd: Option<crate::layer::conv::winograd_gpu::GpuWinograd>,
    /// `convolution_pack4to1`'s weights, where a GEMM layer has one block of pack1 outputs.
    to_pack1: Option<GpuMat>,
}

/// Where the output's windows lie in the padded input of one forward.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    pad_left: usize,
    pad_top: usize,
    /// Padded width and height.
    padded: [usize; 2],
    /// Output width and height.
    out: [usize; 2],
}

impl AsMut<Window> for Convolution {
    fn as_mut(&mut self) -> &mut Window {
        &mut self.window
    }
}

impl Convolution {
    /// A ConvolutionDepthWise layer (the form that reads `7=group`); `default()` is a
    /// Convolution.
    pub fn depthwise() -> Self {
        crate::layer::conv::window::depthwise()
    }

    /// Whether a `dims`-D input of `n` values takes ncnn's deprecated path: a 1-D blob through
    /// a 1×1 kernel is an InnerProduct (its values the channels of one position, its outputs a
    /// 1-D blob).
    fn inner_product(&self, dims: u8, n: usize) -> bool {
        dims == 1
            && self.window.kernel == [1, 1]
            && n == self.window.channels()
            && self.geometry(1, 1).is_ok_and(|g| g.out == [1, 1])
    }

    /// The window geometry over an input of `w × h`.
    fn geometry(&self, w: usize, h: usize) -> Result<Geometry> {
        let ([kw, kh], [dw, dh], [sw, sh]) = self.window.taps();
        let (ext_w, ext_h) = (dw * (kw - 1) + 1, dh * (kh - 1) + 1);
        let [l, r, t, b] = self.window.pad;
        let (pl, pr, pt, pb) = if l == -233 || l == -234 {
            let wpad = (ext_w + (w.max(1) - 1) / sw * sw).saturating_sub(w);
            let hpad = (ext_h + (h.max(1) - 1) / sh * sh).saturating_sub(h);
            if l == -233 {
                (wpad / 2, wpad - wpad / 2, hpad / 2, hpad - hpad / 2)
            } else {
                (wpad - wpad / 2, wpad / 2, hpad - hpad / 2, hpad / 2)
            }
        } else {
            let p = |v: i32| v.max(0) as usize;
            (p(l), p(r), p(t), p(b))
        };
        let (pw, ph) = (w + pl + pr, h + pt + pb);
        kernel_fits("dilated kernel", [ext_w, ext_h], [pw, ph])?;
        let out = [(pw - ext_w) / sw + 1, (ph - ext_h) / sh + 1];
        // a mutated pad makes planes no one can hold (nor count: their product overflows)
        crate::host::values(&out)?;
        Ok(Geometry {
            pad_left: pl,
            pad_top: pt,
            padded: [pw, ph],
            out,
        })
    }

    /// The dims of its GPU outputs: 2 for the 1-D form (its 3-D view's one row holds the
    /// sequence), else 3.
    fn out_dims(&self) -> u8 {
        match self.window.rank {
            Rank::One => 2,
            _ => 3,
        }
    }

    /// Whether every input channel feeds only its own output channel.
    fn is_depthwise(&self) -> bool {
        self.window.group > 1
            && self.window.group == self.window.num_output
            && self.window.channels_per_group() == 1
    }

    /// Whether dense pack4 blobs go through the implicit GEMM.
    fn uses_gemm(&self) -> bool {
        self.window.group == 1
            && matches!(self.pack4_kind(), Pack4Kind::Blocks | Pack4Kind::ToPack1)
    }

    /// Whether the GEMM takes a pack1 input padded to whole blocks of 4 channels (a dense
    /// layer on an RGB image: the direct pack1 shader took up to 97 us on resnet's first
    /// layer on an H200, and its pack1 output needed repacking).
    fn gemm_pads_input(&self) -> bool {
        self.window.group == 1
            && !self.window.channels().is_multiple_of(4)
            && self.window.num_output.is_multiple_of(4)
    }

    /// Whether the depthwise pack4 shader can stage its input window in shared memory
    /// (`convolution_dw_tile`: a reach, (kernel - 1) · dilation, of at most 4 and strides of
    /// at most 2 keep the window within its shared array).
    fn depthwise_tiles(&self) -> bool {
        let w = &self.window;
        self.pack4_kind() == Pack4Kind::Depthwise
            && (0..2)
                .all(|i| w.kernel[i].saturating_sub(1) * w.dilation[i] <= 4 && w.stride[i] <= 2)
    }

    /// Which pack4 shader fits, if any.
    fn pack4_kind(&self) -> Pack4Kind {
        let w = &self.window;
        if self.is_depthwise() && w.num_output.is_multiple_of(4) {
            Pack4Kind::Depthwise
        } else if self.gemm_pads_input()
            || w.channels_per_group().is_multiple_of(4)
                && (w.num_output / w.group).is_multiple_of(4)
        {
            Pack4Kind::Blocks
        } else if w.group == 1 && w.channels().is_multiple_of(4) {
            Pack4Kind::ToPack1
        } else {
            Pack4Kind::None
        }
    }
}

impl Convolution {
    /// One forward with the weights (and bias) as inputs: `[kernel_w, kernel_h, channels /
    /// group, num_output]` as ncnn's dynamic weights are laid out, which is the stored order.
    fn forward_dynamic(&self, bottoms: &[Mat], opt: &RunOptions) -> Result<Mat> {
        let (bottom, weight, bias) = dynamic_inputs(bottoms, self.window.bias_term)?;
        let [kw, kh, _, outc] = weight.shape();
        let weights = weight.to_values();
        let conv = Convolution {
            window: self.window.with_weights([kw, kh], outc, weights.len())?,
            pad_value: self.pad_value,
            weights,
            bias: bias.map(Mat::to_values).unwrap_or_default(),
            ..Convolution::default()
        };
        conv.forward_cpu(bottom, opt)
    }
}

impl Layer for Convolution {
    fn support(&self) -> Support {
        if self.window.dynamic {
            // ncnn's Vulkan convolution takes no dynamic weights either
            return Support::MANY;
        }
        if self.runs_int8() && self.int8_gpu().is_none() {
            // int8 blobs from the layer before as they are; fp32 ones unpacked
            return Support {
                int8_storage: true,
                ..Support::ONE_BLOB
            };
        }
        let pack4 = self.gpu.as_ref().is_some_and(|g| g.pack4.is_some());
        Support {
            // a pack1 input of other channel counts (an RGB image) takes the GEMM as whole
            // blocks of 4, its channels padded with zeros
            vulkan_pad_to_pack4: pack4 && self.gemm_pads_input(),
            // packed CPU blobs where a kernel reads them in place
            packing: self.dense_pack().or_else(|| self.taps_pack()).is_some(),
            ..Support::ONE_BLOB.gpu(self.gpu.is_some()).packs(if pack4 {
                Packs::UP_TO_4
            } else {
                Packs::ONE
            })
        }
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.window.load(pd, 19)?;
        self.pad_value = pd.float(18, 0.0);
        self.int8_scale_term = pd.int(8, 0);
        if self.window.grouped && ![0, 1, 2, 101, 102].contains(&self.int8_scale_term) {
            let allowed = "ConvolutionDepthWise's int8_scale_term: 0, 1, 2, 101 or 102";
            return Err(bad_param(8, self.int8_scale_term, allowed));
        }
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.reset_for_load();
        if self.window.dynamic {
            return Ok(());
        }
        let kernel = weights.load_stored(self.window.weight_data_size, 0)?;
        if self.window.bias_term {
            self.bias = weights.load(self.window.num_output, 1)?;
        }
        if self.int8_scale_term != 0 {
            return self.load_int8(weights, kernel);
        }
        self.weights = kernel.0;
        Ok(())
    }

    fn output_channels(&self) -> Option<usize> {
        Some(self.window.num_output)
    }

    fn reorder_outputs(&mut self, order: &[usize]) -> bool {
        self.reorder(order)
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        let gpu = gpu.filter(|_| !self.window.dynamic);
        // dense weights for the CPU too (after a device limit); a reload restores the groups
        if gpu.is_some() && self.few_large_groups() {
            let identity: Vec<usize> = (0..self.window.num_output).collect();
            self.reorder(&identity);
        }
        self.prepare_int8(opt, gpu)?;
        self.gpu = match gpu {
            Some(gpu) => {
                let gemm = self.uses_gemm().then(|| GemmEngine::choose(gpu, opt));
                let kind = self.pack4_kind();
                // `lmem` (ncnn's use_shader_local_memory) picks the tiled depthwise shader
                let pack4 = (kind != Pack4Kind::None).then(|| {
                    if let Some(gemm) = gemm {
                        gemm.shader()
                    } else if kind == Pack4Kind::ToPack1 {
                        Shader::ConvolutionPack4to1
                    } else if self.depthwise_tiles() && gpu.options.contains(Opt::LocalMemory) {
                        Shader::ConvolutionDwTile
                    } else {
                        Shader::ConvolutionPack4
                    }
                });
                // pipelines come per forward shape; a missing variant fails here, not then
                for shader in [Some(Shader::Convolution), pack4].into_iter().flatten() {
                    gpu.ctx.fitting_variants(shader.module(), gpu.options)?;
                }
                let winograd = self.winograd_state(gpu, opt)?;
                Some(GpuConvolution {
                    pack4,
                    gemm,
                    winograd,
                    options: gpu.options,
                    weights1: None,
                    weights4: None,
                    bias: None,
                    bias4: None,
                    no_partials: None,
                    to_pack1: None,
                })
            }
            _ => None,
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        if self.gpu.is_none() {
            return Ok(());
        }
        let bias = self.window.bias_or_zeros(&self.bias);
        let packed = match self.pack4_kind() {
            Pack4Kind::Blocks | Pack4Kind::ToPack1 if self.uses_gemm() => Some(self.weights_gemm()),
            Pack4Kind::Blocks | Pack4Kind::ToPack1 => Some(self.weights_pack4()),
            Pack4Kind::Depthwise => Some(self.weights_depthwise_pack4()),
            Pack4Kind::None => None,
        };
        let to_pack1 = self.upload_to_pack1(gpu)?;
        let Some(state) = self.gpu.as_mut() else {
            return Ok(());
        };
        // new weights: the transformed ones are made again at the next Winograd forward
        if let Some(w) = state.winograd.as_mut() {
            *w = Default::default();
        }
        state.weights1 = Some(gpu.upload_values(&self.weights, 1)?);
        state.bias = Some(gpu.upload_values(&bias, 1)?);
        if let Some(w4) = packed {
            state.weights4 = Some(gpu.upload_values(&w4, 4)?);
            state.bias4 = Some(gpu.upload_values(&self.window.bias_blocks(&self.bias), 4)?);
        }
        if state.gemm.is_some() {
            state.no_partials = Some(no_partials(gpu.ctx)?);
            state.to_pack1 = to_pack1;
        }
        self.upload_int8(gpu)
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        self.window.accepts(bottoms, |w, h| self.geometry(w, h))
            || matches!(bottoms, [BlobShape { dims: 1, shape: [n, ..] }] if self.inner_product(1, *n))
    }

    /// A window along the rows, where the padding is the params' ("same" padding depends on
    /// the height).
    fn gpu_rows(&self, blob: BlobShape) -> Option<Rows> {
        let (dims, [w, h, _, _]) = (blob.dims, blob.shape);
        let ([_, kh], [_, dh], [_, sh]) = self.window.taps();
        let same = matches!(self.window.pad[0], -233 | -234);
        let geo = self.geometry(w, h).ok()?;
        let out = [geo.out[0], geo.out[1], self.window.num_output];
        (dims == 3 && !same && !self.window.dynamic)
            .then(|| Rows::window(dh * (kh - 1) + 1, sh, geo.pad_top, out))
    }

    fn gpu_int8_input(&self) -> Option<f32> {
        self.int8_storage_scales().map(|s| s.0)
    }

    fn gpu_int8_output(&self) -> Option<f32> {
        self.int8_storage_scales()?.1
    }

    fn set_gpu_int8_output(&mut self, on: bool) {
        self.set_write_int8(on);
    }

    fn forward_gpu_activated(
        &self,
        bottoms: &[GpuMat],
        act: FusedActivation,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<GpuMat>> {
        // a float layer without an activation of its own (an int8 layer's epilogue stays)
        let [bottom] = bottoms else {
            return Ok(None);
        };
        if self.window.activation != 0 || self.int8_gpu().is_some() {
            return Ok(None);
        }
        self.forward_gpu_float(bottom, rec, ([None; 2], Some(act)))
            .map(Some)
    }

    fn forward_gpu_residual(
        &self,
        bottoms: &[GpuMat],
        residual: &GpuMat,
        act: Option<FusedActivation>,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<GpuMat>> {
        // the sum comes after the layer's own activation: a layer with one keeps it apart
        let [bottom] = bottoms else {
            return Ok(None);
        };
        if self.window.activation != 0 || self.int8_gpu().is_some() {
            return Ok(None);
        }
        self.forward_residual(bottom, residual, act, rec)
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        match self.int8_gpu() {
            Some(_) => self.forward_gpu_int8(bottom, rec),
            None => self.forward_gpu_float(bottom, rec, ([None; 2], None)),
        }
    }

    fn forward(&self, bottom: &Mat, opt: &RunOptions) -> Result<Mat> {
        if let Some(top) = self.forward_int8(bottom, opt) {
            return top;
        }
        if self.inner_product(bottom.dims, bottom.shape()[0]) {
            // ncnn's (deprecated) 1-D path: the values are the channels of one position, the
            // result the outputs as a 1-D blob, an InnerProduct
            let n = bottom.shape()[0];
            // a packed 1-D blob holds its values in order, as a pack1 one
            let x = if bottom.elempack == 1 {
                bottom.reshape(3, [1, 1, 1, n])?
            } else {
                Mat::from_shape_values(3, [1, 1, 1, n], &bottom.to_values())?
            };
            let y = self.forward_cpu(&x, opt)?;
            return y.reshape(1, [self.window.num_output, 1, 1, 1]);
        }
        self.forward_cpu(bottom, opt)
    }

    fn forward_many(&self, bottoms: &[Mat], opt: &RunOptions) -> Result<Vec<Mat>> {
        Ok(vec![self.forward_dynamic(bottoms, opt)?])
    }
}

impl Convolution {
    /// A `dims`-D output of `c` channels of `pack` for `bottom` over `geo` (3-D int8 storage at
    /// the scale `int8` has), and the words the shaders read (both shapes, the padding, the
    /// pad value).
    fn gpu_output(
        &self,
        ctx: &crate::gpu::Context,
        bottom: &GpuMat,
        geo: Geometry,
        (dims, c, pack): (u8, usize, usize),
        int8: Option<f32>,
    ) -> Result<(GpuMat, Vec<u32>)> {
        let [ow, oh] = geo.out;
        let top = match int8 {
            // int8 storage at that scale (an int8 layer's requantized output)
            Some(scale) => GpuMat::alloc_int8(ctx, [ow, oh, c], pack, (bottom.options, scale))?,
            None => GpuMat::alloc(ctx, dims, [ow, oh, c], pack, bottom.options)?,
        };
        let mut words = bottom.shape_words().to_vec();
        words.extend(top.shape_words());
        words.extend([
            geo.pad_left as u32,
            geo.pad_top as u32,
            self.pad_value.to_bits(),
        ]);
        Ok((top, words))
    }

    /// The float forward on the device; with an int8 layer's input and output scales in
    /// `quant`, the direct shaders fake-quantize its input and output (see `int8`); with
    /// `act`, that activation in place of the layer's own (a fused activation layer).
    fn forward_gpu_float(
        &self,
        bottom: &GpuMat,
        rec: &mut Recorder<'_>,
        (quant, act): ([Option<f32>; 2], Option<FusedActivation>),
    ) -> Result<GpuMat> {
        let state = self.gpu.ready()?;
        let channels =
            (self.window).unpadded_channels(bottom.c, bottom.elempack, self.gemm_pads_input());
        // a 1-D GPU mat is one position of `c` channels, one element apart
        let one_d = bottom.dims == 1 && self.inner_product(1, channels);
        self.window
            .check_input(if one_d { 3 } else { bottom.dims }, channels)?;
        let geo = self.geometry(bottom.w, bottom.h)?;
        let ctx = rec.context();
        // the net gives pack4 (padded where vulkan_pad_to_pack4 says) where the pack4 shaders
        // exist, else pack1
        // (pack4 to pack1 gives a pack1 output)
        let (shader, weights, bias, pack) =
            match (state.pack4, &state.weights4, &state.bias4, bottom.elempack) {
                (Some(s), Some(w), Some(b), 4) => (
                    s,
                    w,
                    b,
                    if self.pack4_kind() == Pack4Kind::ToPack1 {
                        1
                    } else {
                        4
                    },
                ),
                (_, _, _, 1) => {
                    let (Some(w), Some(b)) = (&state.weights1, &state.bias) else {
                        return Err(Error::NotLoaded {
                            what: "the weights on the device",
                        });
                    };
                    (Shader::Convolution, w, b, 1)
                }
                (.., p) => return Err(Error::NoShader { elempack: p }),
            };
        let dims = if one_d { 1 } else { self.out_dims() };
        let output =
            |c: usize, pack: usize| self.gpu_output(ctx, bottom, geo, (dims, c, pack), None);
        let direct1 = self.direct_to_pack1(state, bottom, geo.out);
        let (shader, weights) =
            direct1.map_or((shader, weights), |w| (Shader::ConvolutionPack4to1, w));
        if bottom.elempack == 4 && pack == 1 && state.gemm.is_some() && direct1.is_none() {
            // a pack1 output (outputs not in whole blocks of 4, an SSD head's 126): the GEMM
            // into whole blocks (zero weights past the outputs), then the outputs unpacked;
            // the direct pack4-to-pack1 shader, one invocation per position and block, took
            // 312 us on mobilenet_ssd's 10×10×1024 → 126 head on an H200
            let (blocks, words) = output(self.window.num_output.div_ceil(4), 4)?;
            let epilogue = Epilogue::activation(act);
            self.dispatch_gemm(
                state,
                rec,
                [bottom, &blocks, weights, bias],
                (&words, epilogue),
            )?;
            return blocks.record_unpacked_channels(rec, self.window.num_output);
        }
        let (top, words) = output(self.window.num_output / pack, pack)?;
        if bottom.elempack == 4 && self.winograd_on(state, geo.out) {
            let epilogue = Epilogue::activation(act);
            self.dispatch_winograd(state, rec, [bottom, &top, bias], (&words, epilogue))?;
            return Ok(top);
        }
        if bottom.elempack == 4 && pack == 4 && state.gemm.is_some() {
            let epilogue = Epilogue::activation(act);
            self.dispatch_gemm(
                state,
                rec,
                [bottom, &top, weights, bias],
                (&words, epilogue),
            )?;
            return Ok(top);
        }
        let buffers = [bottom, &top, weights, bias];
        let epilogue = Epilogue::activation(act);
        self.dispatch_direct(state, rec, shader, buffers, (&words, quant, epilogue))?;
        Ok(top)
    }
}
