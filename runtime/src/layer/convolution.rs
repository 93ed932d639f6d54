//! Convolution and ConvolutionDepthWise: `0=num_output 1=kernel_w 11=kernel_h 2=dilation_w
//! 12=dilation_h 3=stride_w 13=stride_h 4=pad_left 15=pad_right 14=pad_top 16=pad_bottom
//! (-233 / -234: ncnn's "same" padding, upper / lower) 18=pad_value 5=bias_term
//! 6=weight_data_size 7=group (depthwise) 8=int8_scale_term 9=activation_type
//! 10=activation_params`; weights `[num_output][channels / group][kernel_h][kernel_w]` (type
//! 0: fp32, fp16, int8 or quantized), then the bias, then with `int8_scale_term` the weight
//! scales (int8 weights are dequantized: ncnn stores `round(w * scale)`).
//!
//! CPU: im2col over tiles of output positions, then the tile's GEMM as vectorized row updates.
//! GPU, chosen per layer at `create_pipeline` and per shape at forward: dense pack4 layers as an
//! implicit GEMM tiled in shared memory (`convolution_gemm`, its steps split over slices when
//! the output has too few tiles to fill the device; on fp16 blobs where the device has
//! cooperative matrices, `convolution_gemm_cm` on tensor cores instead); grouped and depthwise
//! pack4 layers and pack1 layers as direct convolutions. Every shader reads the shapes through
//! `psc()`, and each forward specializes them, so they fold at pipeline time (one pipeline per
//! shape, from the context's cache after the first forward).

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::gpu::specialize::{SpecValue, Specialization};
use crate::layer::contract::{GpuSetup, Implements, Layer, Support};
use crate::layer::gpu_util::{no_device, pack8_as_pack4};
use crate::layer::innerproduct::activate;
use crate::layer::kernels;
use crate::layer::option::Option;
use crate::layer::params::ParamDict;
use crate::layer::weights::Weights;
use crate::layer::window::Window;
use crate::shaders::Shader;
use crate::tensor::{GpuMat, Mat};
use crate::{Opt, OptionSet};

/// A convolution (dense, grouped or depthwise).
#[derive(Default)]
pub struct Convolution {
    window: Window,
    pad_value: f32,
    int8_scale_term: i32,
    weights: Vec<f32>,
    bias: Vec<f32>,
    gpu: core::option::Option<GpuConvolution>,
}

/// The device side: the algorithm per packing and the weights each reads, uploaded once.
/// Pipelines come from the context's cache per forward shape (`psc()` folds the shapes): made
/// on the first forward of a shape, found again on every later one.
struct GpuConvolution {
    /// The pack4 algorithm's shader, if a pack4 one fits (the pack1 one is `convolution`).
    pack4: core::option::Option<Shader>,
    /// The implicit GEMM pack4 blobs go through, if any (`pack4` is then its shader).
    gemm: core::option::Option<Gemm>,
    /// The options the pipelines are made with.
    options: OptionSet,
    weights1: core::option::Option<GpuMat>,
    weights4: core::option::Option<GpuMat>,
    bias: core::option::Option<GpuMat>,
    bias4: core::option::Option<GpuMat>,
    /// What the unsplit GEMM binds as its (unused) partial sums.
    no_partials: core::option::Option<GpuMat>,
}

/// The implicit GEMM's two shaders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gemm {
    /// `convolution_gemm`: fp32 FMA, any device and path.
    Fma,
    /// `convolution_gemm_cm`: fp16 products on cooperative matrices (tensor cores), for fp16
    /// blobs where [`crate::Context::cooperative_matrix`] holds.
    CooperativeMatrix,
}

impl Gemm {
    fn shader(self) -> Shader {
        match self {
            Gemm::Fma => Shader::ConvolutionGemm,
            Gemm::CooperativeMatrix => Shader::ConvolutionGemmCm,
        }
    }

    /// Invocations per workgroup (4 subgroups of 32 for the cooperative-matrix one).
    fn invocations(self) -> usize {
        match self {
            Gemm::Fma => 256,
            Gemm::CooperativeMatrix => 128,
        }
    }
}

/// The cooperative-matrix GEMM's tile: positions × output blocks of 4.
const GEMM_CM_TILE: [usize; 2] = [64, 16];

/// Workgroups the GEMM aims for before it splits its steps (a few per multiprocessor of a large
/// GPU), and the fewest steps a slice keeps.
const GEMM_TARGET_GROUPS: usize = 512;
const GEMM_MIN_SLICE_STEPS: usize = 16;
/// The GEMM's tiles (positions × output blocks of 4) by its `wide` specialization: 0 the
/// default, 1 for layers of at most 16 blocks, 2 for layers of at least [`GEMM_BIG_POSITIONS`]
/// positions (8 positions per invocation).
const GEMM_TILES: [[usize; 2]; 3] = [[64, 32], [128, 16], [128, 32]];
/// Output positions from which the 128 × 32 tile is taken.
const GEMM_BIG_POSITIONS: usize = 8192;

/// The specialization of one forward: `values`, then the `psc()` shapes from its push constants
/// (input then output w, h, c, cstep: constants 20–27 of `convolution_head.comp`).
fn shaped(values: Vec<(u32, SpecValue)>, words: &[u32]) -> Specialization {
    let shapes = words.iter().take(8).zip(20..);
    Specialization {
        values: values
            .into_iter()
            .chain(shapes.map(|(v, id)| (id, SpecValue::I32(*v as i32))))
            .collect(),
        local_size: None,
    }
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

impl Convolution {
    /// ConvolutionDepthWise (reads `7=group`).
    pub fn depthwise() -> Self {
        Convolution {
            window: Window::grouped(),
            ..Convolution::default()
        }
    }

    fn kind(&self) -> &'static str {
        if self.window.grouped {
            "ConvolutionDepthWise"
        } else {
            "Convolution"
        }
    }

    /// The window geometry over an input of `w × h`.
    fn geometry(&self, w: usize, h: usize) -> Result<Geometry> {
        let [kw, kh] = self.window.kernel;
        let [dw, dh] = self.window.dilation;
        let [sw, sh] = self.window.stride;
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
        if pw < ext_w || ph < ext_h {
            return Err(Error::Shape(format!(
                "{} kernel {kw}x{kh} (dilation {dw}x{dh}) is larger than the padded input {pw}x{ph}",
                self.kind()
            )));
        }
        Ok(Geometry {
            pad_left: pl,
            pad_top: pt,
            padded: [pw, ph],
            out: [(pw - ext_w) / sw + 1, (ph - ext_h) / sh + 1],
        })
    }

    /// Whether every input channel feeds only its own output channel.
    fn is_depthwise(&self) -> bool {
        self.window.group > 1
            && self.window.group == self.window.num_output
            && self.window.channels_per_group() == 1
    }

    /// The pack4 weights of the dense and grouped shader: per output block of 4, its
    /// group's input blocks of 4 and kernel position, four rows (one per output lane) of four
    /// input weights.
    fn weights_pack4(&self) -> Vec<f32> {
        let [kw, kh] = self.window.kernel;
        let (cin_g, kk) = (self.window.channels_per_group(), kw * kh);
        let mut out = Vec::with_capacity(self.weights.len());
        for o4 in 0..self.window.num_output / 4 {
            for i4 in 0..cin_g / 4 {
                for k in 0..kk {
                    for lane in 0..4 {
                        for j in 0..4 {
                            let (o, i) = (o4 * 4 + lane, i4 * 4 + j);
                            out.push(self.weights[(o * cin_g + i) * kk + k]);
                        }
                    }
                }
            }
        }
        out
    }

    /// The pack4 weights of the GEMM: per step (input block of 4 and kernel position), per
    /// output block, four rows (one per output lane) of four input weights.
    fn weights_gemm(&self) -> Vec<f32> {
        let [kw, kh] = self.window.kernel;
        let (cin, kk) = (self.window.channels_per_group(), kw * kh);
        let mut out = Vec::with_capacity(self.weights.len());
        // a last, partial block of input channels has zero weights past the channels
        for i4 in 0..cin.div_ceil(4) {
            for k in 0..kk {
                for o4 in 0..self.window.num_output / 4 {
                    for lane in 0..4 {
                        for j in 0..4 {
                            let (o, i) = (o4 * 4 + lane, i4 * 4 + j);
                            out.push(match i < cin {
                                true => self.weights[(o * cin + i) * kk + k],
                                false => 0.0,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// Whether dense pack4 blobs go through the implicit GEMM.
    fn uses_gemm(&self) -> bool {
        self.window.group == 1 && self.pack4_kind() == 1
    }

    /// Whether the GEMM takes a pack1 input padded to whole blocks of 4 channels (a dense
    /// layer on an RGB image: the direct pack1 shader took up to 97 us on resnet's first
    /// layer on an H200, and its pack1 output needed repacking).
    fn gemm_pads_input(&self) -> bool {
        self.window.group == 1
            && !self.window.channels().is_multiple_of(4)
            && self.window.num_output.is_multiple_of(4)
    }

    /// The FMA GEMM's tile (its `wide` value) for `positions` outputs: the wide one when the
    /// outputs fit it, the big one for many positions.
    fn gemm_tile(&self, positions: usize) -> usize {
        if self.window.num_output / 4 <= GEMM_TILES[1][1] {
            1
        } else if positions >= GEMM_BIG_POSITIONS {
            2
        } else {
            0
        }
    }

    /// The tile (positions × output blocks) `gemm` computes per workgroup over `positions`.
    fn gemm_tile_size(&self, gemm: Gemm, positions: usize) -> [usize; 2] {
        match gemm {
            Gemm::Fma => GEMM_TILES[self.gemm_tile(positions)],
            Gemm::CooperativeMatrix => GEMM_CM_TILE,
        }
    }

    /// How many slices `gemm` splits its `steps` into over `positions` outputs.
    fn gemm_splits(&self, gemm: Gemm, positions: usize, steps: usize) -> usize {
        let blocks = self.window.num_output / 4;
        let [tn, tm] = self.gemm_tile_size(gemm, positions);
        let tiles = positions.div_ceil(tn) * blocks.div_ceil(tm);
        let wanted = GEMM_TARGET_GROUPS.div_ceil(tiles.max(1));
        let most = (steps / GEMM_MIN_SLICE_STEPS).max(1);
        // a power of two, so that few split counts (pipelines) exist
        let s = wanted.min(most).max(1);
        if s.is_power_of_two() {
            s
        } else {
            s.next_power_of_two() / 2
        }
    }

    /// Whether the depthwise pack4 shader can stage its input window in shared memory
    /// (`convolution_dw_tile`: a reach, (kernel - 1) · dilation, of at most 4 and strides of
    /// at most 2 keep the window within its shared array).
    fn depthwise_tiles(&self) -> bool {
        let w = &self.window;
        self.pack4_kind() == 2
            && (0..2)
                .all(|i| w.kernel[i].saturating_sub(1) * w.dilation[i] <= 4 && w.stride[i] <= 2)
    }

    /// The pack4 weights of the depthwise shader: per channel block and kernel position, the
    /// four channels' weights.
    fn weights_depthwise_pack4(&self) -> Vec<f32> {
        let kk = self.window.kernel[0] * self.window.kernel[1];
        let mut out = Vec::with_capacity(self.weights.len());
        for c4 in 0..self.window.num_output / 4 {
            for k in 0..kk {
                for lane in 0..4 {
                    out.push(self.weights[(c4 * 4 + lane) * kk + k]);
                }
            }
        }
        out
    }

    /// Which pack4 shader fits, if any: 1 dense or grouped (groups of whole blocks of 4, or
    /// one group whose input the GEMM pads), 2 depthwise.
    fn pack4_kind(&self) -> i32 {
        if self.is_depthwise() && self.window.num_output.is_multiple_of(4) {
            2
        } else if self.gemm_pads_input()
            || self.window.channels_per_group().is_multiple_of(4)
                && (self.window.num_output / self.window.group).is_multiple_of(4)
        {
            1
        } else {
            0
        }
    }
}

impl Convolution {
    /// Records the implicit GEMM (and, when it splits its steps, the pass that adds the
    /// slices) from pack4 `bottom` into `top`.
    fn dispatch_gemm(
        &self,
        state: &GpuConvolution,
        rec: &mut Recorder<'_>,
        [bottom, top, weights, bias]: [&GpuMat; 4],
        words: &[u32],
    ) -> Result<()> {
        let (Some(no_partials), Some(gemm)) = (&state.no_partials, state.gemm) else {
            return Err(no_device(self.kind()));
        };
        let positions = top.w * top.h;
        let steps = bottom.c * self.window.kernel[0] * self.window.kernel[1];
        let splits = self.gemm_splits(gemm, positions, steps);
        let grid = |v: [usize; 3]| -> Result<[u32; 3]> {
            let one = |x: usize| {
                u32::try_from(x).map_err(|_| {
                    Error::Shape(format!(
                        "{} output {positions}x{} is too large",
                        self.kind(),
                        top.c
                    ))
                })
            };
            Ok([one(v[0])?, one(v[1])?, one(v[2])?])
        };
        // the FMA GEMM's tile is a specialization; the cooperative-matrix one has one tile
        let wide = (gemm == Gemm::Fma).then(|| self.gemm_tile(positions));
        let [tn, tm] = self.gemm_tile_size(gemm, positions);
        let groups = grid([
            positions.div_ceil(tn) * gemm.invocations(),
            top.c.div_ceil(tm),
            splits,
        ])?;
        let ctx = rec.context();
        // the split and the tile (the sum pass has none) and the shapes, specialized here
        let spec = |tile: core::option::Option<usize>| {
            let mut values = self.window.spec(1);
            values.push((12, SpecValue::I32(splits as i32)));
            values.extend(tile.map(|w| (13, SpecValue::I32(w as i32))));
            shaped(values, words)
        };
        let pipeline = ctx.pipeline(gemm.shader().module(), state.options, &spec(wide))?;
        if splits == 1 {
            return rec.dispatch(
                &pipeline,
                &[bottom, top, weights, bias, no_partials],
                words,
                groups,
            );
        }
        let sum = ctx.pipeline(
            Shader::ConvolutionGemmSum.module(),
            state.options,
            &spec(None),
        )?;
        // one row of fp32 values (a 1-D mat's length is its channel count)
        let partials = ctx.alloc_mat(
            2,
            [positions * top.c * splits * 4, 1, 1],
            1,
            OptionSet::FP32,
        );
        rec.dispatch(
            &pipeline,
            &[bottom, top, weights, bias, &partials],
            words,
            groups,
        )?;
        rec.dispatch(
            &sum,
            &[&partials, top, bias],
            words,
            grid([positions, top.c, 1])?,
        )
    }
}

impl Layer for Convolution {
    fn support(&self) -> Support {
        Support {
            vulkan: self.gpu.is_some(),
            vulkan_packing: true,
            ..Support::ONE_BLOB
        }
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD_CPU_GPU
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        let kind = self.kind();
        self.window.load(pd, kind)?;
        self.pad_value = pd.float(18, 0.0);
        self.int8_scale_term = pd.int(8, 0);
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.weights = weights.load(self.window.weight_data_size, 0)?;
        if self.window.bias_term {
            self.bias = weights.load(self.window.num_output, 1)?;
        }
        if self.int8_scale_term != 0 {
            // per output (per group for depthwise) scales of the int8 weights; the input's
            // scale only matters to int8 arithmetic, which this layer does not do
            let n = if self.window.grouped && self.window.group > 1 {
                self.window.group
            } else {
                self.window.num_output
            };
            let scales = weights.load(n, 1)?;
            weights.load(1, 1)?;
            let per = self.weights.len() / n.max(1);
            for (chunk, s) in self.weights.chunks_mut(per.max(1)).zip(&scales) {
                let inv = if *s == 0.0 { 0.0 } else { 1.0 / s };
                chunk.iter_mut().for_each(|w| *w *= inv);
            }
        }
        Ok(())
    }

    fn create_pipeline(
        &mut self,
        opt: &Option,
        gpu: core::option::Option<GpuSetup<'_>>,
    ) -> Result<()> {
        self.gpu = match gpu {
            Some(gpu) if !gpu.options.contains(Opt::Image) => {
                // tensor cores multiply fp16: only blobs that are fp16 already take them
                let fp16 =
                    gpu.options.contains(Opt::Fp16Storage) || gpu.options.contains(Opt::Fp16Packed);
                let gemm = self.uses_gemm().then_some(
                    if opt.use_cooperative_matrix && fp16 && gpu.ctx.cooperative_matrix() {
                        Gemm::CooperativeMatrix
                    } else {
                        Gemm::Fma
                    },
                );
                let kind = self.pack4_kind();
                // `lmem` (ncnn's use_shader_local_memory) picks the tiled depthwise shader
                let pack4 = (kind != 0).then(|| {
                    if let Some(gemm) = gemm {
                        gemm.shader()
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
                Some(GpuConvolution {
                    pack4,
                    gemm,
                    options: gpu.options,
                    weights1: None,
                    weights4: None,
                    bias: None,
                    bias4: None,
                    no_partials: None,
                })
            }
            _ => None,
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &Option) -> Result<()> {
        let bias = self.window.bias_or_zeros(&self.bias);
        let packed = match self.pack4_kind() {
            1 if self.uses_gemm() => Some(self.weights_gemm()),
            1 => Some(self.weights_pack4()),
            2 => Some(self.weights_depthwise_pack4()),
            _ => None,
        };
        let Some(state) = self.gpu.as_mut() else {
            return Ok(());
        };
        let flat = |v: &[f32]| Mat::from_shape_values(1, [v.len(), 1, 1, 1], v);
        state.weights1 = Some(gpu.ctx.upload_mat(&flat(&self.weights)?, gpu.options)?);
        state.bias = Some(gpu.ctx.upload_mat(&flat(&bias)?, gpu.options)?);
        if let Some(w4) = packed {
            let up = |v: &[f32]| -> Result<GpuMat> {
                gpu.ctx.upload_mat(&flat(v)?.to_packing(4)?, gpu.options)
            };
            state.weights4 = Some(up(&w4)?);
            state.bias4 = Some(up(&bias)?);
        }
        if state.gemm.is_some() {
            state.no_partials = Some(gpu.ctx.alloc_mat(1, [4, 1, 1], 4, OptionSet::FP32));
        }
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[(u8, [usize; 4])]) -> bool {
        bottoms.iter().all(|&(dims, [w, h, _, c])| {
            dims == 3 && c == self.window.channels() && self.geometry(w, h).is_ok()
        })
    }

    fn forward_gpu(
        &self,
        bottom: &GpuMat,
        rec: &mut Recorder<'_>,
        _opt: &Option,
    ) -> Result<GpuMat> {
        let state = self.gpu.as_ref().ok_or_else(|| no_device(self.kind()))?;
        self.window
            .check_input(self.kind(), bottom.dims, bottom.c * bottom.elempack)?;
        let geo = self.geometry(bottom.w, bottom.h)?;
        let ctx = rec.context();
        let packed = match (state.pack4, &state.weights4, &state.bias4) {
            // a padded input (elempack 1) takes the GEMM too
            (Some(s), Some(w), Some(b)) if bottom.elempack >= 4 || self.gemm_pads_input() => {
                Some((s, w, b))
            }
            _ => None,
        };
        let (shader, weights, bias, bottom, pack) = match packed {
            Some((s, w, b)) if bottom.elempack == 1 => {
                (s, w, b, ctx.record_padded_pack4(rec, bottom)?, 4)
            }
            Some((s, w, b)) => (s, w, b, pack8_as_pack4(rec, bottom)?, 4),
            None => {
                let (Some(w), Some(b)) = (&state.weights1, &state.bias) else {
                    return Err(no_device(self.kind()));
                };
                let bottom = ctx.record_packing(rec, bottom, 1)?;
                (Shader::Convolution, w, b, bottom, 1)
            }
        };
        let [ow, oh] = geo.out;
        let top = ctx.alloc_mat(
            3,
            [ow, oh, self.window.num_output / pack],
            pack,
            bottom.options,
        );
        let mut words = bottom.shape_words().to_vec();
        words.extend(top.shape_words());
        words.extend([
            geo.pad_left as u32,
            geo.pad_top as u32,
            self.pad_value.to_bits(),
        ]);
        if pack == 4 && state.gemm.is_some() {
            self.dispatch_gemm(state, rec, [&bottom, &top, weights, bias], &words)?;
            return Ok(top);
        }
        let kind = if pack == 4 { self.pack4_kind() } else { 0 };
        let spec = shaped(self.window.spec(kind), &words);
        let pipeline = ctx.pipeline(shader.module(), state.options, &spec)?;
        rec.dispatch(
            &pipeline,
            &[&bottom, &top, weights, bias],
            &words,
            top.grid(),
        )?;
        Ok(top)
    }

    fn forward(&self, bottom: &Mat, _opt: &Option) -> Result<Mat> {
        let [w, h, _, c] = bottom.shape();
        self.window.check_input(self.kind(), bottom.dims, c)?;
        let geo = self.geometry(w, h)?;
        let [kw, kh] = self.window.kernel;
        let [dw, dh] = self.window.dilation;
        let [sw, sh] = self.window.stride;
        let [pw, ph] = geo.padded;
        let [ow, oh] = geo.out;
        let (group, cin_g) = (self.window.group, self.window.channels_per_group());
        let cout_g = self.window.num_output / group;
        let (plane, n, k) = (pw * ph, ow * oh, cin_g * kw * kh);

        // every channel padded once (the pad value around it)
        let values;
        let (src, step) = match bottom.f32() {
            Ok(data) if bottom.elempack == 1 => (data, bottom.cstep),
            _ => {
                values = bottom.to_values();
                (&values[..], w * h)
            }
        };
        let mut padded = vec![self.pad_value; c * plane];
        padded
            .par_chunks_mut(plane.max(1))
            .enumerate()
            .for_each(|(q, dst)| {
                let ch = &src[q * step..q * step + w * h];
                for (y, row) in ch.chunks(w.max(1)).enumerate() {
                    let at = (y + geo.pad_top) * pw + geo.pad_left;
                    dst[at..at + w].copy_from_slice(row);
                }
            });

        // each im2col row's offset into a group's padded channels
        let offsets: Vec<usize> = (0..cin_g)
            .flat_map(|ci| {
                (0..kh)
                    .flat_map(move |ky| (0..kw).map(move |kx| ci * plane + ky * dh * pw + kx * dw))
            })
            .collect();
        const TILE: usize = 256;
        let tiles = n.div_ceil(TILE);
        let results: Vec<(usize, usize, Vec<f32>)> = (0..group * tiles)
            .into_par_iter()
            .map_init(Vec::new, |col: &mut Vec<f32>, job| {
                let (g, t) = (job / tiles, job % tiles);
                let first = t * TILE;
                let len = TILE.min(n - first);
                // the tile's windows: k rows of `len` values
                col.resize(k * len, 0.0);
                let base: Vec<usize> = (first..first + len)
                    .map(|p| (p / ow) * sh * pw + (p % ow) * sw)
                    .collect();
                let group_in = &padded[g * cin_g * plane..(g + 1) * cin_g * plane];
                for (row, off) in col.chunks_mut(len).zip(&offsets) {
                    for (v, b) in row.iter_mut().zip(&base) {
                        *v = group_in[b + off];
                    }
                }
                // the tile's GEMM: each output row gathers weight × im2col row updates
                let mut out = vec![0.0f32; cout_g * len];
                for (oc_g, acc) in out.chunks_mut(len).enumerate() {
                    let oc = g * cout_g + oc_g;
                    acc.fill(self.bias.get(oc).copied().unwrap_or(0.0));
                    let wrow = &self.weights[oc * k..(oc + 1) * k];
                    for (wv, row) in wrow.iter().zip(col.chunks(len)) {
                        let wv = *wv;
                        kernels::zip_with(acc, row, |a, x| a + wv * x);
                    }
                    if self.window.activation != 0 {
                        for v in acc.iter_mut() {
                            *v = activate(
                                self.window.activation,
                                &self.window.activation_params,
                                *v,
                            );
                        }
                    }
                }
                (g, first, out)
            })
            .collect();
        let mut out = vec![0.0f32; self.window.num_output * n];
        for (g, first, tile) in results {
            let len = tile.len() / cout_g.max(1);
            for (oc_g, row) in tile.chunks(len.max(1)).enumerate() {
                let oc = g * cout_g + oc_g;
                out[oc * n + first..oc * n + first + len].copy_from_slice(row);
            }
        }
        Mat::from_shape_values(3, [ow, oh, 1, self.window.num_output], &out)
    }
}
