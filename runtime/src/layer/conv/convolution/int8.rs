//! Convolution's and ConvolutionDepthWise's int8 inference (`8=int8_scale_term`, ncnn's
//! `forward_int8`): the input quantized with the model's scale (an int8 blob taken as it is),
//! the kernel's levels times its levels summed in int32 (dense and grouped layers as int8
//! GEMMs, [`Int8Kernel`]; depthwise ones a channel at a time), each output dequantized with its
//! scales, biased and activated, or requantized to an int8 blob for the next int8 layer.
//! Without int8 dot-product instructions a dense layer whose window fp32 sums exactly (below
//! 2^24) runs the float kernels over the levels instead, as does a 1-D input. With
//! `use_int8_inference` off, the float kernel (levels over their scales) runs as any other
//! convolution.
//!
//! On the GPU, dense layers on pack4 blobs are int8 GEMMs (`int8_gpu`: int8 products summed
//! in int32, the input quantized as it is staged). The others fake-quantize: the input's levels
//! over its scale, the float convolution of the kernel's levels over theirs (the same products
//! up to rounding, in the storage's precision), and for a requantizing layer the output's
//! levels over its scale; the direct shaders (depthwise, grouped, pack1) do both in their own
//! dispatch (specialization constants 28 and 29), around the float GEMM (a padded RGB input,
//! outputs not in blocks of 4) they are `unaryop` passes (op 20). Int8 layers of a GPU net therefore
//! pass each other such values, on the device and on the CPU alike (where a layer falls back
//! there), not int8 mats: the next layer's scale is the previous one's output scale (as ncnn's
//! converter writes them), so it finds the same levels. Where every reader of a requantizing
//! GEMM's output is an int8 GEMM quantizing with its output scale, the net has it write int8
//! storage instead (the levels, a byte each), which those readers take as their levels.
//!
//! The scales per weight row: one per output for Convolution; for ConvolutionDepthWise one per
//! group (`1`, `101`) or one for all (`2`, `102`). On the CPU, as ncnn's x86 and Arm builds.

use crate::error::{Error, Result, TensorError};
use crate::gpu::Recorder;
use crate::layer::contract::GpuSetup;
use crate::layer::params::bad_param;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::flat::unary;
use crate::layer::shared::int8_gemm::{Int8Kernel, Int8Rows};
use crate::layer::shared::int8_scales::{Int8Scales, fake_quantization, level, levels_of};
use crate::layer::shared::pipelines::PackPipelines;
use crate::layer::weights::Weights;
use crate::tensor::{ElemType, GpuMat, Mat};

use super::Convolution;
use super::int8_gpu::{Int8Engine, Int8Gemm};

/// An int8 layer's scales and kernel levels; at `create_pipeline` with int8 inference, the
/// convolution of levels that runs them.
pub(super) struct Int8Conv {
    scales: Int8Scales,
    /// The kernel's levels until `create_pipeline` moves them into `run`.
    levels: Vec<f32>,
    /// The same window over levels: no bias, no activation (a depthwise layer's or a 1-D
    /// input's sums, and a dense layer's where fp32 sums them exactly and faster than the
    /// int8 kernel).
    run: Option<Box<Convolution>>,
    /// A dense or grouped layer's kernel, per group, for the int8 GEMM.
    rows: Vec<Int8Rows>,
    /// On the device: the input's and (requantizing) the output's fake quantization.
    gpu: Option<(PackPipelines, Option<PackPipelines>)>,
    /// On the device, a dense layer's int8 GEMM.
    gemm: Option<Int8Gemm>,
    /// The net's word that every reader of the output takes int8 storage at its scale: the
    /// GEMM then writes its levels (`Layer::set_gpu_int8_output`).
    write_int8: bool,
}

impl Convolution {
    /// Reads the scales after the bias for `int8_scale_term`, keeps the kernel's levels, and
    /// leaves the float kernel in `weights`.
    pub(super) fn load_int8(
        &mut self,
        weights: &mut Weights<'_>,
        (values, stored_int8): (Vec<f32>, bool),
    ) -> Result<()> {
        let term = self.int8_scale_term;
        let w = &self.window;
        let rows = match (w.grouped, term) {
            (false, _) => w.num_output,
            (true, 1 | 101) => w.group,
            (true, 2 | 102) => 1,
            // load_param refuses the others
            (true, t) => return Err(bad_param(8, t, "ConvolutionDepthWise: 1, 2, 101 or 102")),
        };
        let scales = Int8Scales::load(weights, term, rows, w.num_output)?;
        let levels = scales.kernel_levels(values, stored_int8);
        self.weights = scales.dequantized(&levels);
        self.int8 = Some(Box::new(Int8Conv {
            scales,
            levels,
            run: None,
            rows: Vec::new(),
            gpu: None,
            gemm: None,
            write_int8: false,
        }));
        Ok(())
    }

    /// With int8 inference, the convolution of levels, and on a device its fake quantizations
    /// (the float kernel kept for it; dropped without one); without, the int8 state dropped.
    pub(super) fn prepare_int8(
        &mut self,
        opt: &RunOptions,
        gpu: Option<GpuSetup<'_>>,
    ) -> Result<()> {
        let depthwise = self.is_depthwise();
        let gemm_fits = self.int8_gemm_fits();
        let Some(int8) = self.int8.as_mut() else {
            return Ok(());
        };
        if !opt.use_int8_inference {
            self.int8 = None;
            return Ok(());
        }
        let mut window = self.window.clone();
        window.bias_term = false;
        window.activation = 0;
        // the pad value quantized as the input is
        let pad_value = level(self.pad_value * int8.scales.input);
        let taps = self.window.kernel[0] * self.window.kernel[1];
        if depthwise {
            int8.rows = vec![Int8Rows::new(&int8.levels, self.window.num_output, taps)];
        } else {
            let group = self.window.group;
            let (cout_g, k) = (
                self.window.num_output / group,
                self.window.channels_per_group() * taps,
            );
            int8.rows = (0..group)
                .map(|g| Int8Rows::new(&int8.levels[g * cout_g * k..], cout_g, k))
                .collect();
        }
        int8.run = Some(Box::new(Convolution {
            window,
            pad_value,
            weights: std::mem::take(&mut int8.levels),
            ..Convolution::default()
        }));
        int8.gemm = match gpu {
            Some(gpu) if gemm_fits => Some(Int8Gemm::choose(gpu, opt)?),
            _ => None,
        };
        int8.gpu = match gpu {
            Some(gpu) => {
                let input = fake_quantization(gpu, int8.scales.input)?;
                let output = int8
                    .scales
                    .output
                    .map(|s| fake_quantization(gpu, s))
                    .transpose()?;
                Some((input, output))
            }
            None => {
                self.weights = Vec::new();
                None
            }
        };
        Ok(())
    }

    /// The device's fake quantizations, where this layer runs as int8 on a device.
    pub(super) fn int8_gpu(&self) -> Option<&(PackPipelines, Option<PackPipelines>)> {
        self.int8.as_ref()?.gpu.as_ref()
    }

    /// The int8 forward on the device: the input's levels over its scale, the float
    /// convolution, the output's levels over its scale where the layer requantizes.
    pub(super) fn forward_gpu_int8(
        &self,
        bottom: &GpuMat,
        rec: &mut Recorder<'_>,
    ) -> Result<GpuMat> {
        let (Some(int8), Some(state)) = (self.int8.as_ref(), self.gpu.as_ref()) else {
            return self.forward_gpu_float(bottom, rec, ([None; 2], None));
        };
        let Some((input, output)) = &int8.gpu else {
            return self.forward_gpu_float(bottom, rec, ([None; 2], None));
        };
        let scales = (int8.scales.input, int8.scales.output);
        let io = (scales.0, scales.1.filter(|_| int8.write_int8));
        if let Some(gemm) = &int8.gemm
            && let Some(top) = self.forward_int8_gemm(gemm, (scales.1, io), bottom, rec)?
        {
            return Ok(top);
        }
        if let Some(scale) = bottom.format.int8_scale() {
            // the net hands int8 storage only to a layer whose GEMM takes it
            return Err(Error::Tensor(TensorError::Int8Storage {
                scale,
                reader: "the int8 convolution's float path",
            }));
        }
        if bottom.elempack != 4 || state.gemm.is_none() {
            // a direct shader: the quantizations in its own dispatch
            return self.forward_gpu_float(bottom, rec, ([Some(scales.0), scales.1], None));
        }
        let x = unary(rec, input, bottom)?;
        let top = self.forward_gpu_float(&x, rec, ([None; 2], None))?;
        match output {
            Some(output) => unary(rec, output, &top),
            None => Ok(top),
        }
    }

    /// Uploads the int8 GEMM's kernel, where the layer has one on the device.
    pub(super) fn upload_int8(&mut self, gpu: GpuSetup<'_>) -> Result<()> {
        let taps = self.window.kernel[0] * self.window.kernel[1];
        let shape = (self.window.num_output, self.window.channels(), taps);
        let Some(int8) = self.int8.as_mut() else {
            return Ok(());
        };
        if let (Some(gemm), Some(run)) = (int8.gemm.as_mut(), int8.run.as_ref()) {
            gemm.upload(gpu, &run.weights, shape, &int8.scales)?;
        }
        Ok(())
    }

    /// Where this layer's int8 GEMM runs on the device: the scale it quantizes its input with
    /// (and so reads int8 storage at), and the output's where it requantizes whole blocks of
    /// 4 outputs (and so can write int8 storage).
    pub(super) fn int8_storage_scales(&self) -> Option<(f32, Option<f32>)> {
        let int8 = self.int8.as_ref()?;
        int8.gemm.as_ref()?;
        let blocks = self.window.num_output.is_multiple_of(4);
        Some((int8.scales.input, int8.scales.output.filter(|_| blocks)))
    }

    /// The net's word on int8 storage out ([`Int8Conv::write_int8`]).
    pub(super) fn set_write_int8(&mut self, on: bool) {
        if let Some(int8) = self.int8.as_mut() {
            int8.write_int8 = on && int8.gemm.is_some();
        }
    }

    /// The device engine of the int8 GEMM, where this layer has one.
    pub fn int8_engine(&self) -> Option<Int8Engine> {
        Some(self.int8.as_ref()?.gemm.as_ref()?.engine())
    }

    /// Whether this layer runs as int8.
    pub(super) fn runs_int8(&self) -> bool {
        self.int8.as_ref().is_some_and(|i| i.run.is_some())
    }

    /// The int8 GEMM kernel for a `dims`-D input, where this layer's sums take one: a dense
    /// or grouped layer on planes, with the CPU's int8 dot products, or without them where
    /// a window's fp32 sum of levels could pass 2^24 and round (past 1040 products at ±127).
    fn int8_kernel(&self, dims: u8) -> Option<Int8Kernel> {
        let rows = &self.int8.as_ref()?.rows;
        if rows.is_empty() || dims != 3 || self.is_depthwise() {
            return None;
        }
        let kernel = Int8Kernel::best();
        let exact_in_fp32 = rows[0].k * 127 * 127 < 1 << 24;
        (kernel != Int8Kernel::Scalar || !exact_in_fp32).then_some(kernel)
    }

    /// The int8 forward of `bottom` (fp32 or int8), if this layer runs as int8.
    pub(super) fn forward_int8(&self, bottom: &Mat, opt: &RunOptions) -> Option<Result<Mat>> {
        let int8 = self.int8.as_ref()?;
        let run = int8.run.as_ref()?;
        Some((|| {
            let scales = &int8.scales;
            let activation = (self.window.activation, &self.window.activation_params[..]);
            // a GPU net's int8 layers pass levels over their scale (see the module's doc)
            let levels = int8.gpu.is_none();
            let finish = |p: usize, v: &mut [f32]| {
                scales.finish_output(p, v, &self.bias, activation, levels);
            };
            let kernel = self.int8_kernel(bottom.dims);
            if kernel.is_some() || self.is_depthwise() && bottom.dims == 3 {
                // the kernel reads pack1 int8 or fp32 planes
                let plain = bottom.elempack == 1
                    && matches!(bottom.elemtype(), ElemType::I8 | ElemType::F32);
                let unpacked;
                let x = if plain {
                    bottom
                } else {
                    unpacked = Mat::from_shape_values(3, bottom.shape(), &bottom.to_values())?;
                    &unpacked
                };
                let input = (x, scales.input, run.pad_value as i8);
                let top = match kernel {
                    Some(kernel) => self.int8_forward(&int8.rows, input, kernel, &finish)?,
                    None => self.int8_depthwise(int8.rows[0].levels(), input, &finish)?,
                };
                return Ok(match scales.output {
                    Some(_) if levels => top.cast(ElemType::I8),
                    _ => top,
                });
            }
            let x = Mat::from_shape_values(
                bottom.dims,
                bottom.shape(),
                &levels_of(bottom, scales.input),
            )?;
            // fp32 sums of whole numbers, exact: no Winograd, no 16-bit storage
            let exact = RunOptions {
                use_winograd_convolution: false,
                use_packing_layout: false,
                use_fp16_storage: false,
                use_fp16_arithmetic: false,
                use_bf16_storage: false,
                ..*opt
            };
            let sums = crate::layer::contract::Layer::forward(run.as_ref(), &x, &exact)?;
            scales.finish(sums, false, levels, &self.bias, activation)
        })())
    }
}
