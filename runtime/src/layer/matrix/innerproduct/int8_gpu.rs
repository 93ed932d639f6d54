//! InnerProduct's int8 inference on the device as int8 arithmetic, where the float layer runs
//! its GEMV (one flat input of vec4 rows): `innerproduct_int8` on the device's int8 dot
//! products (`dotPacked4x8EXT`), or `innerproduct_int8_exact` (the same int32 sums from
//! sign-extended bytes) where it has none (naga's path, Vulkan without
//! VK_KHR_shader_integer_dot_product). The input is quantized as it is loaded, so the layer is
//! one dispatch; each output is dequantized, biased, activated and, where the layer
//! requantizes, taken to its levels over the output scale, as a GPU net's int8 layers pass
//! them. Several rows (ncnn's gemm path: a 2-D input `num_input` wide) run one GEMV per row in
//! the same dispatch. Inputs of a count not a multiple of 4 keep the fake quantization before
//! the float kernel.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::gpu::specialize::SpecValue;
use crate::gpu::{DeviceBuffer, Pipeline, Recorder, Resource};
use crate::layer::contract::GpuSetup;
use crate::layer::shared::int8_gemm::Int8Rows;
use crate::layer::shared::int8_scales::Int8Scales;
use crate::layer::shared::pipelines::{DeviceSide, fold_into_z};
use crate::shaders::Shader;
use crate::tensor::{GpuMat, StorageFormat};

use super::{InnerProduct, as_row, vec4_rows};

/// The int8 GEMV of one layer: its pipeline and, once uploaded, its kernel and descales.
pub(super) struct Int8Gemv {
    pipeline: Arc<Pipeline>,
    /// Per output, one int per four inputs, the first in the low byte (until uploaded).
    words: Vec<u32>,
    /// Each output's `1 / (input scale · weight scale)`, fp32 (until uploaded).
    descales: Vec<f32>,
    uploaded: Option<(DeviceBuffer, DeviceBuffer)>,
}

impl Int8Gemv {
    /// The GEMV of `kernel` (`k` a multiple of 4) for the layer's float specialization
    /// `values` (bias, activation): the dot-product shader where a variant of it fits the
    /// device, else the exact one.
    pub(super) fn new(
        gpu: GpuSetup<'_>,
        kernel: &Int8Rows,
        scales: &Int8Scales,
        values: &[(u32, SpecValue)],
    ) -> Result<Int8Gemv> {
        let fits = gpu
            .ctx
            .fitting_variants(Shader::InnerproductInt8.module(), gpu.options)
            .is_ok();
        let shader = match fits {
            true => Shader::InnerproductInt8,
            false => Shader::InnerproductInt8Exact,
        };
        let mut values = values.to_vec();
        values.push((4, SpecValue::F32(scales.input)));
        values.push((5, SpecValue::F32(scales.output.unwrap_or(0.0))));
        let pipeline = gpu.pipeline(shader.module(), &values)?;
        let words = kernel
            .levels()
            .chunks_exact(4)
            .map(|l| u32::from_le_bytes([l[0] as u8, l[1] as u8, l[2] as u8, l[3] as u8]))
            .collect();
        Ok(Int8Gemv {
            pipeline,
            words,
            descales: scales.descales.clone(),
            uploaded: None,
        })
    }

    /// Uploads the kernel and the descales.
    pub(super) fn upload(&mut self, gpu: GpuSetup<'_>) -> Result<()> {
        let weights = gpu.ctx.upload(bytemuck::cast_slice(&self.words))?;
        let descales = gpu.ctx.upload(bytemuck::cast_slice(&self.descales))?;
        self.uploaded = Some((weights, descales));
        self.words = Vec::new();
        Ok(())
    }

    /// Records the GEMV of each of the `m` rows of `rows` (the input as rows of `k / 4` vec4s,
    /// one after another) into `top` (pack1, rows of `n` values), `bias` its bias.
    pub(super) fn record(
        &self,
        rec: &mut Recorder<'_>,
        rows: &GpuMat,
        top: &GpuMat,
        bias: &GpuMat,
        (m, k, n): (usize, usize, usize),
    ) -> Result<()> {
        let (weights, descales) = self.uploaded.as_ref().ok_or(Error::NotLoaded {
            what: "the int8 weights on the device",
        })?;
        let words = [(k / 4) as u32, n as u32];
        // one workgroup of the shader's 64 invocations per output, along y (and on along z
        // past the device's limit), and per row along x
        let grid = [64 * m as u32, n as u32, 1];
        let grid = fold_into_z(rec.context(), &self.pipeline, grid, 1);
        rec.dispatch(
            &self.pipeline,
            &[
                Resource::from(rows),
                top.into(),
                weights.into(),
                bias.into(),
                descales.into(),
            ],
            &words,
            grid,
        )
    }
}

impl InnerProduct {
    /// The int8 GEMV of a flat input of vec4 rows, or of several rows of them (ncnn's gemm
    /// path); `None` for inputs it does not take (the fallback fake-quantizes).
    pub(super) fn forward_gpu_int8(
        &self,
        int8: &Int8Gemv,
        bottom: &GpuMat,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<GpuMat>> {
        let state = self.gpu.ready()?;
        let (k, n) = (self.num_input(), self.num_output);
        let [w, rows, ..] = bottom.shape();
        let Some(bias) = &state.bias else {
            return Ok(None);
        };
        let ctx = rec.context();
        if bottom.dims == 2 && rows > 1 && w == k {
            // rows of pack1 values, one after another: rows of vec4s where the storage is
            // pack4's (a row a workgroup along x, within the device's grid)
            let fits = bottom.elempack == 1
                && bottom.buffer().is_some()
                && bottom.cstep == w
                && bottom.format == StorageFormat::of(bottom.options, 4)
                && rows <= ctx.limits().max_compute_workgroups_per_dimension as usize;
            if !fits {
                return Ok(None);
            }
            let top = GpuMat::alloc(ctx, 2, [n, 1, rows], 1, state.rows.options())?;
            int8.record(rec, bottom, &top, bias, (rows, k, n))?;
            return Ok(Some(top));
        }
        let values: usize = bottom.shape().iter().product();
        if values != k {
            return Ok(None);
        }
        let Some(x) = vec4_rows((&state.flatten, &state.unpack), bottom, rec)? else {
            return Ok(None);
        };
        let top = GpuMat::alloc(ctx, 1, [1, 1, n], 1, state.rows.options())?;
        int8.record(rec, &x, &top, bias, (1, k, n))?;
        let one_row = bottom.dims == 2 && bottom.w == k;
        Ok(Some(as_row(top, one_row)))
    }
}
