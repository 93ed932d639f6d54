//! Convolution's int8 inference on the device as int8 arithmetic: dense layers on pack4 blobs
//! (an RGB input padded to a block of 4 channels, as the float GEMM takes it; outputs not in
//! whole blocks of 4 computed into whole ones and unpacked, as an SSD head's) go through an
//! int8 GEMM ([`Int8Engine`]): int8
//! cooperative matrices (`convolution_gemm_int8_cm`, NVIDIA's int8 tensor cores), the
//! device's int8 dot products (`convolution_gemm_int8`, `dotPacked4x8EXT`) or, where the
//! device has neither (naga's path, Vulkan below 1.3 without
//! VK_KHR_shader_integer_dot_product), `convolution_gemm_int8_exact` (the same int32 sums
//! from sign-extended bytes). Either quantizes its input as it stages it, so a
//! layer is one dispatch, as its float twin is; the outputs are the same levels over their
//! scales the fake-quantizing path gives (see `int8`'s doc). Other int8 layers (depthwise,
//! grouped, pack1, outputs not in blocks of 4) keep that path.

use super::{Convolution, GpuConvolution};
use crate::OptionSet;
use crate::error::{Error, Result, TensorError};
use crate::gpu::specialize::SpecValue;
use crate::gpu::{DeviceBuffer, Recorder, Resource};
use crate::layer::contract::GpuSetup;
use crate::layer::conv::implicit_gemm::{GemmEngine, GemmPlan, dispatch_grid, shaped};
use crate::layer::conv::window::Pack4Kind;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::int8_scales::Int8Scales;
use crate::layer::shared::pipelines::{DeviceSide, fold_into_z};
use crate::shaders::Shader;
use crate::tensor::GpuMat;

/// The int8 GEMM's shaders, fastest first: the choice for a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Int8Engine {
    /// `convolution_gemm_int8_cm`: 16 × 16 × 32 int8 cooperative matrices.
    CooperativeMatrix,
    /// `convolution_gemm_int8`: int8 dot products of four lanes.
    DotProduct,
    /// `convolution_gemm_int8_exact`: int32 products of sign-extended bytes.
    Exact,
}

impl Int8Engine {
    /// Its shader.
    pub fn shader(self) -> Shader {
        match self {
            Int8Engine::CooperativeMatrix => Shader::ConvolutionGemmInt8Cm,
            Int8Engine::DotProduct => Shader::ConvolutionGemmInt8,
            Int8Engine::Exact => Shader::ConvolutionGemmInt8Exact,
        }
    }

    /// Positions × output blocks of 4 per workgroup, and its invocations.
    fn tile(self) -> ([usize; 2], usize) {
        match self {
            Int8Engine::CooperativeMatrix => ([64, 16], 128),
            _ => ([64, 32], 256),
        }
    }
}

/// The int8 GEMM of one layer: its engine and, once uploaded, its packed kernel and descales.
pub(super) struct Int8Gemm {
    engine: Int8Engine,
    /// Per step (four input channels at one kernel position), per output, one int of four
    /// levels.
    weights: Option<DeviceBuffer>,
    /// Each output's `1 / (input scale · weight scale)`, fp32.
    descales: Option<DeviceBuffer>,
}

impl Int8Gemm {
    /// The fastest engine with a variant in the layer's options that fits the device (int8
    /// matrices only where the run allows cooperative matrices).
    pub(super) fn choose(gpu: GpuSetup<'_>, opt: &RunOptions) -> Result<Int8Gemm> {
        let fits = |e: Int8Engine| {
            gpu.ctx
                .fitting_variants(e.shader().module(), gpu.options)
                .is_ok()
        };
        let engine = if opt.use_cooperative_matrix && fits(Int8Engine::CooperativeMatrix) {
            Int8Engine::CooperativeMatrix
        } else if fits(Int8Engine::DotProduct) {
            Int8Engine::DotProduct
        } else {
            let exact = Int8Engine::Exact;
            gpu.ctx
                .fitting_variants(exact.shader().module(), gpu.options)?;
            exact
        };
        Ok(Int8Gemm {
            engine,
            weights: None,
            descales: None,
        })
    }

    /// Which engine it runs.
    pub(super) fn engine(&self) -> Int8Engine {
        self.engine
    }

    /// Uploads `levels` (`[num_output][channels][kernel_h · kernel_w]`) in the shader's layout
    /// and the descales, zero past the channels and the outputs to whole blocks of 4.
    pub(super) fn upload(
        &mut self,
        gpu: GpuSetup<'_>,
        levels: &[f32],
        (outputs, channels, taps): (usize, usize, usize),
        scales: &Int8Scales,
    ) -> Result<()> {
        let blocks = outputs.div_ceil(4) * 4;
        let mut words = Vec::with_capacity(channels.div_ceil(4) * taps * blocks);
        for i4 in 0..channels.div_ceil(4) {
            for k in 0..taps {
                for o in 0..blocks {
                    let byte = |j: usize| {
                        let i = i4 * 4 + j;
                        let l = match i < channels && o < outputs {
                            true => levels[(o * channels + i) * taps + k] as i8,
                            false => 0,
                        };
                        u32::from(l as u8) << (8 * j)
                    };
                    words.push(byte(0) | byte(1) | byte(2) | byte(3));
                }
            }
        }
        let mut descales = scales.descales.clone();
        descales.resize(blocks, 0.0);
        self.weights = Some(gpu.ctx.upload(bytemuck::cast_slice(&words))?);
        self.descales = Some(gpu.ctx.upload(bytemuck::cast_slice(&descales))?);
        Ok(())
    }
}

impl Convolution {
    /// Whether the int8 GEMM takes this layer: where the float GEMM takes pack4 blobs (one
    /// group; whole blocks of 4 input channels, or an input padded to them).
    pub(super) fn int8_gemm_fits(&self) -> bool {
        self.uses_gemm()
    }

    /// The int8 GEMM of pack4 `bottom`, quantized with the input scale (and the output
    /// requantized with `output_scale`), if this layer has one and `bottom` is what it reads.
    /// `io`: the input scale, and the output scale where the output is to be int8 storage
    /// (the net's word); a `bottom` of int8 storage at the input scale is read as its levels.
    pub(super) fn forward_int8_gemm(
        &self,
        gemm: &Int8Gemm,
        (output_scale, (input_scale, int8_out)): (Option<f32>, (f32, Option<f32>)),
        bottom: &GpuMat,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<GpuMat>> {
        let state: &GpuConvolution = self.gpu.ready()?;
        // whole blocks of 4 channels, or a padded input's (its last block's zero channels
        // meet zero weights)
        let blocks_in = self.window.channels().div_ceil(4);
        if bottom.elempack != 4 || bottom.c != blocks_in || bottom.dims != 3 {
            return Ok(None);
        }
        let int8_in = match bottom.format.int8_scale() {
            Some(s) if s.to_bits() == input_scale.to_bits() => true,
            Some(scale) => {
                return Err(Error::Tensor(TensorError::Int8Storage {
                    scale,
                    reader: "an int8 convolution of another input scale",
                }));
            }
            None => false,
        };
        // int8 storage out: whole blocks of 4 outputs in a buffer
        let int8_out = int8_out.filter(|_| {
            self.window.num_output.is_multiple_of(4) && !state.options.contains(crate::Opt::Image)
        });
        let (Some(weights), Some(descales), Some(bias)) =
            (&gemm.weights, &gemm.descales, &state.bias4)
        else {
            return Err(Error::NotLoaded {
                what: "the int8 kernel on the device",
            });
        };
        let geo = self.geometry(bottom.w, bottom.h)?;
        let ctx = rec.context();
        let [ow, oh] = geo.out;
        let blocks = self.window.num_output.div_ceil(4);
        let (top, words) = self.gpu_output(ctx, bottom, geo, (3, blocks, 4), int8_out)?;
        // the matrices split their steps where the output has too few tiles to fill the
        // device (resnet's last stage: 49 positions), as the fp16 GEMM does
        let positions = ow * oh;
        let steps = bottom.c * self.window.kernel[0] * self.window.kernel[1];
        let splits = match gemm.engine {
            Int8Engine::CooperativeMatrix => {
                GemmPlan::choose(
                    GemmEngine::CooperativeMatrix,
                    [top.c, positions, steps],
                    false,
                )
                .splits
            }
            _ => 1,
        };
        // the GEMM's constants (the sum pass has no input scale)
        let spec = |sum: bool| {
            let mut values = self.window.spec(Pack4Kind::Blocks);
            if !sum {
                values.push((12, SpecValue::F32(input_scale)));
            }
            values.push((13, SpecValue::F32(output_scale.unwrap_or(0.0))));
            if sum || splits > 1 {
                values.push((14, SpecValue::I32(splits as i32)));
            }
            // which sides are int8 storage (the sum pass writes the output only)
            let io = i32::from(int8_in && !sum) | i32::from(int8_out.is_some()) << 1;
            if io != 0 {
                values.push((15, SpecValue::I32(io)));
            }
            shaped(values, &words)
        };
        let shader = gemm.engine.shader();
        let pipeline = ctx.pipeline(shader.module(), state.options, &spec(false))?;
        let ([tn, tm], invocations) = gemm.engine.tile();
        let groups = dispatch_grid(
            [
                positions.div_ceil(tn) * invocations,
                top.c.div_ceil(tm),
                splits,
            ],
            &top,
        )?;
        // unsplit, the shader continues its position tiles along z past the device limit
        let groups = match splits {
            1 => fold_into_z(ctx, &pipeline, groups, 0),
            _ => groups,
        };
        let mut resources = vec![
            bottom.resource(),
            top.resource(),
            Resource::Buffer(weights),
            bias.resource(),
            Resource::Buffer(descales),
        ];
        // the int8 storage bindings (6, 7) take the same buffers: each shader reads or writes
        // only one binding of each
        let int8_bindings = [bottom.resource(), top.resource()];
        if gemm.engine != Int8Engine::CooperativeMatrix {
            resources.extend(int8_bindings);
            rec.dispatch(&pipeline, &resources, &words, groups)?;
            return self.int8_output(top, rec);
        }
        let Some(no_partials) = &state.no_partials else {
            return Err(Error::NotLoaded {
                what: "the GEMM's partial-sum buffer on the device",
            });
        };
        if splits == 1 {
            resources.push(no_partials.resource());
            resources.extend(int8_bindings);
            rec.dispatch(&pipeline, &resources, &words, groups)?;
            return self.int8_output(top, rec);
        }
        // one row of int32 sums (a 1-D mat's length is its channel count)
        let partials = GpuMat::alloc(
            ctx,
            2,
            [positions * top.c * splits * 4, 1, 1],
            1,
            OptionSet::FP32,
        )?;
        resources.push(partials.resource());
        resources.extend(int8_bindings);
        rec.dispatch(&pipeline, &resources, &words, groups)?;
        let sum = ctx.pipeline(
            Shader::ConvolutionGemmInt8Sum.module(),
            state.options,
            &spec(true),
        )?;
        let finish = [
            partials.resource(),
            top.resource(),
            bias.resource(),
            Resource::Buffer(descales),
            top.resource(),
        ];
        let grid = dispatch_grid([positions, top.c, 1], &top)?;
        rec.dispatch(&sum, &finish, &words, grid)?;
        self.int8_output(top, rec)
    }

    /// The GEMM's output blocks, or where the outputs are not whole blocks of 4 (an SSD
    /// head's), its outputs unpacked to pack1 as the float GEMM gives them.
    fn int8_output(&self, top: GpuMat, rec: &mut Recorder<'_>) -> Result<Option<GpuMat>> {
        let outputs = self.window.num_output;
        Ok(Some(match outputs % 4 {
            0 => top,
            _ => top.record_unpacked_channels(rec, outputs)?,
        }))
    }
}
