//! ncnn's static int8 inference (`8=int8_scale_term` of Convolution, ConvolutionDepthWise and
//! InnerProduct; the Quantize and Requantize layers): activations quantized with the model's
//! calibrated scales, int8 kernels, products summed exactly, and each output dequantized
//! (`sum / (input scale · weight scale) + bias`, the fused activation) or requantized to int8
//! with the output's scale (`int8_scale_term > 100`: ncnn's fusion of a following Requantize).
//!
//! The layers sum their products in int32 ([`super::int8_gemm`]) and hand the sums here as
//! fp32, as ncnn converts them before its scales. Blobs between int8 layers are int8 mats, as
//! ncnn's.

use multiversion::multiversion;
use rayon::prelude::*;

use crate::error::{InputError, Result};
use crate::layer::activation::fused::activate_all;
use crate::layer::activation::unaryop_pipelines;
use crate::layer::contract::GpuSetup;
use crate::layer::shared::pipelines::PackPipelines;
use crate::layer::weights::Weights;
use crate::tensor::{ElemType, Mat};

/// ncnn's `float2int8`: `v` rounded half away from zero and clamped to ±127, as a level. As
/// ncnn's SIMD forms (x86 and Arm) round it: `±0.5` added, then truncated (0.49999997 goes up,
/// where `round` keeps it down).
#[inline(always)]
pub(crate) fn level(v: f32) -> f32 {
    (v + 0.5f32.copysign(v)).trunc().clamp(-127.0, 127.0)
}

/// The fake quantization `level(x · scale) / scale` on the device (`unaryop` op 20): an int8
/// layer's input (and a requantizing one's output) where the GPU has no int8 arithmetic.
pub(crate) fn fake_quantization(gpu: GpuSetup<'_>, scale: f32) -> Result<PackPipelines> {
    let inverse = if scale == 0.0 { 0.0 } else { 1.0 / scale };
    unaryop_pipelines(gpu, (20, [scale, inverse, 0.0]))
}

/// The levels of `m` under `scale`: an int8 mat's own values, any other's quantized.
pub(crate) fn levels_of(m: &Mat, scale: f32) -> Vec<f32> {
    let mut v = m.to_values();
    if m.elemtype() != ElemType::I8 {
        v.par_chunks_mut(CHUNK).for_each(|c| quantize(c, scale));
    }
    v
}

/// `src` quantized with `scale` into the levels `dst`.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
pub(crate) fn quantize_into(src: &[f32], dst: &mut [i8], scale: f32) {
    for (d, &x) in dst.iter_mut().zip(src) {
        // through int32: a whole number in ±127 converts exactly, and in vectors
        *d = level(x * scale) as i32 as i8;
    }
}

/// Values per task of the passes below.
const CHUNK: usize = 1 << 14;

/// Every value of `v` replaced by its level under `scale` (compiled with SSE4.1 and FMA,
/// where `trunc` and `mul_add` are instructions, not library calls).
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn quantize(v: &mut [f32], scale: f32) {
    v.iter_mut().for_each(|x| *x = level(*x * scale));
}

/// One output's sums `v` dequantized (`sum · descale + bias` in one rounding, as ncnn's fused
/// multiply-add).
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn dequantize(v: &mut [f32], descale: f32, bias: f32) {
    v.iter_mut().for_each(|x| *x = x.mul_add(descale, bias));
}

/// A batch row's sums `v` dequantized, each output its own descale and bias.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn dequantize_row(v: &mut [f32], descales: &[f32], bias: &[f32]) {
    for (i, x) in v.iter_mut().enumerate() {
        *x = x.mul_add(descales[i], bias.get(i).copied().unwrap_or(0.0));
    }
}

/// `v` requantized with `scale`: levels, or (`!levels`) the levels over the scale.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn requantize(v: &mut [f32], scale: f32, levels: bool) {
    let inverse = if scale == 0.0 { 0.0 } else { 1.0 / scale };
    for x in v.iter_mut() {
        *x = level(*x * scale);
        if !levels {
            *x *= inverse;
        }
    }
}

/// An int8 layer's scales and its kernel's levels, as its weights give them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Int8Scales {
    /// Each output's `1 / (input scale · weight scale)`; 0 where the weight scale is 0.
    pub descales: Vec<f32>,
    /// The input's scale.
    pub input: f32,
    /// The output's scale where the layer requantizes.
    pub output: Option<f32>,
    /// Each output's weight scale (to dequantize the kernel for a float run).
    pub weight: Vec<f32>,
}

impl Int8Scales {
    /// Reads what follows the kernel and bias of a layer of `term` (`int8_scale_term`): `rows`
    /// weight scales (1 per output, per group, or one for all), the input's scale, and the
    /// output's with `term > 100`; each of the `outputs` outputs takes its row's.
    pub(crate) fn load(
        weights: &mut Weights<'_>,
        term: i32,
        rows: usize,
        outputs: usize,
    ) -> Result<Int8Scales> {
        let row_scales = weights.load(rows, 1)?;
        let input = weights.load(1, 1)?[0];
        let output = if term > 100 {
            Some(weights.load(1, 1)?[0])
        } else {
            None
        };
        let per_row = outputs / rows.max(1);
        let weight: Vec<f32> = (0..outputs)
            .map(|p| row_scales[(p / per_row.max(1)).min(rows.saturating_sub(1))])
            .collect();
        let descales = weight
            .iter()
            .map(|&w| if w == 0.0 { 0.0 } else { 1.0 / (input * w) })
            .collect();
        Ok(Int8Scales {
            descales,
            input,
            output,
            weight,
        })
    }

    /// The kernel's levels from its loaded values (`stored_int8`: the levels themselves; else
    /// fp32 weights, quantized with their output's scale as ncnn does on load): `outputs` rows.
    pub(crate) fn kernel_levels(&self, values: Vec<f32>, stored_int8: bool) -> Vec<f32> {
        if stored_int8 {
            return values;
        }
        let per = values.len() / self.weight.len().max(1);
        let mut v = values;
        for (row, s) in v.chunks_mut(per.max(1)).zip(&self.weight) {
            row.iter_mut().for_each(|w| *w = level(*w * s));
        }
        v
    }

    /// The kernel's levels over their scales: the float weights of a run without int8.
    pub(crate) fn dequantized(&self, levels: &[f32]) -> Vec<f32> {
        let per = levels.len() / self.weight.len().max(1);
        let mut v = levels.to_vec();
        for (row, s) in v.chunks_mut(per.max(1)).zip(&self.weight) {
            let inv = if *s == 0.0 { 0.0 } else { 1.0 / s };
            row.iter_mut().for_each(|w| *w *= inv);
        }
        v
    }

    /// Output `p`'s sums `v` finished in place, in the order ncnn applies them: dequantized,
    /// biased, activated, requantized where the layer has an output scale (to levels with
    /// `levels`, else to the levels over the scale).
    pub(crate) fn finish_output(
        &self,
        p: usize,
        v: &mut [f32],
        bias: &[f32],
        (activation, params): (i32, &[f32]),
        levels: bool,
    ) {
        dequantize(v, self.descales[p], bias.get(p).copied().unwrap_or(0.0));
        activate_all(activation, params, v);
        if let Some(s) = self.output {
            requantize(v, s, levels);
        }
    }

    /// The layer's output from the level sums `sums` (fp32; output `p`'s values are the
    /// `p`th run of `sums.len() / outputs`, or with `rows` every `outputs`th from `p`: a batch
    /// of rows): dequantized, biased, activated, and requantized where the layer has an output
    /// scale: to an int8 mat with `levels`, else to the levels over the scale in fp32 (what a
    /// GPU net's int8 layers pass each other).
    pub(crate) fn finish(
        &self,
        sums: Mat,
        rows: bool,
        levels: bool,
        bias: &[f32],
        (activation, params): (i32, &[f32]),
    ) -> Result<Mat> {
        let mut values = sums.to_values();
        let outputs = self.descales.len();
        if outputs == 0 || !values.len().is_multiple_of(outputs) {
            return Err(InputError::Values {
                what: "int8 sums for the layer's outputs",
                got: values.len(),
                expected: outputs,
            }
            .into());
        }
        // one output's run (or one batch row) per task
        let per = if rows {
            outputs
        } else {
            values.len() / outputs
        };
        values
            .par_chunks_mut(per.max(1))
            .enumerate()
            .for_each(|(p, v)| {
                if rows {
                    dequantize_row(v, &self.descales, bias);
                    activate_all(activation, params, v);
                    if let Some(s) = self.output {
                        requantize(v, s, levels);
                    }
                } else {
                    self.finish_output(p, v, bias, (activation, params), levels);
                }
            });
        let [w, h, d, c] = sums.shape();
        let out = Mat::from_shape_values(sums.dims, [w, h, d, c], &values)?;
        Ok(match self.output {
            Some(_) if levels => out.cast(ElemType::I8),
            _ => out,
        })
    }
}
