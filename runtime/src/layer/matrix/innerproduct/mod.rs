//! InnerProduct: `0=num_output 1=bias_term 2=weight_data_size 8=int8_scale_term
//! 9=activation_type 10=activation_params`; weights (type 0, fp32/fp16/int8/quantized) then
//! bias (type 1), then with `int8_scale_term` a scale per output and the input's: ncnn's int8
//! inference (the input quantized, the kernel's levels summed exactly over the CPU's dot
//! products, each output dequantized, biased and activated); on the GPU the same int8 sums
//! where the layer runs its GEMV (its `int8_gpu` module), else the input's levels over its scale
//! (`unaryop` op 20) and the float layer of the kernel's levels over theirs.
//! On the GPU, buffer storage, any input of `num_input` values (others than 1-D or 1×1×c are
//! flattened first, as ncnn's InnerProduct does with its Flatten): a GEMV over vec4 rows when
//! the input count is a multiple of 4 (a pack1 input read as such rows where it lies so, else
//! flattened straight into them), else (squeeze-excitation's small layers, and fp16 packed
//! without fp16 storage, whose pack1 blobs are fp32) the pack1 convolution shader as a 1×1
//! convolution. A 2-D input of several rows `num_input` wide is
//! that many products (ncnn's gemm path): the shared GPU GEMM with the bias as its per-column
//! addend and the activation fused.

mod int8_gpu;

use std::sync::Arc;

use rayon::prelude::*;

use crate::error::{Error, InputError, Result};
use crate::gpu::specialize::{SpecValue, Specialization};
use crate::gpu::{Pipeline, Recorder};
use crate::layer::activation::fused::{activate, activate_all};
use crate::layer::contract::{GpuSetup, Layer, Packs, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shape::gather::{
    Border, Gather, GatherMap, flatten_packed, flatten_unpacked, gather_for, reshape,
};
use crate::layer::shared::cpu_gemm::{MatMut, MatRef, gemm};
use crate::layer::shared::flat::unary;
use crate::layer::shared::gpu_gemm::{self, Addend, Form, Operand, Sizes};
use crate::layer::shared::int8_gemm::{self, Int8Kernel, Int8Rows};
use crate::layer::shared::int8_scales::{Int8Scales, fake_quantization, levels_of};
use crate::layer::shared::kernels;
use crate::layer::shared::pipelines::PackPipelines;
use crate::layer::shared::pipelines::{DeviceSide, fold_into_z};
use crate::layer::weights::Weights;
use crate::shaders::Shader;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat, StorageFormat};

/// How many values a blob holds when they lie in order on the device as one row of
/// elements, whatever the packing: 1-D blobs, and 3-D or 4-D ones of 1 value per channel
/// (after a non-global pooling to 1×1); `None` for others.
fn flat_values(dims: u8, [w, h, d, c]: [usize; 4]) -> Option<usize> {
    match dims {
        1 => Some(w),
        3 | 4 if w == 1 && h == 1 && d == 1 => Some(c),
        _ => None,
    }
}

/// A flat input as the GEMV's vec4 rows (a 1-D pack4 mat): a pack4 one as it is, a 1-D pack1
/// one read as such where its storage is pack4's, any other pack1 input gathered into them
/// and a 3-D pack4 one unpacked into them (the flatten ncnn's InnerProduct runs, written
/// packed). `None` where they cannot be written so (fp16 packed without fp16 storage).
fn vec4_rows(
    (flatten, unpack): (&Gather, &Gather),
    bottom: &GpuMat,
    rec: &mut Recorder<'_>,
) -> Result<Option<GpuMat>> {
    let flat = flat_values(bottom.dims, bottom.shape()).is_some();
    match bottom.elempack {
        4 if flat => Ok(Some(bottom.clone())),
        4 => flatten_unpacked(rec, unpack, bottom, 4),
        1 if bottom.dims == 1 && bottom.c.is_multiple_of(4) && bottom.packs_in_place(4) => {
            bottom.record_packing(rec, 4).map(Some)
        }
        1 => flatten_packed(rec, flatten, bottom, 4),
        _ => Ok(None),
    }
}

/// A 1-D output of `n` values as the 2-D `1 × n` row when `row` (the same memory).
fn as_row(top: GpuMat, row: bool) -> GpuMat {
    if !row {
        return top;
    }
    let n = top.c * top.elempack;
    GpuMat {
        dims: 2,
        w: n,
        h: 1,
        d: 1,
        c: 1,
        cstep: n,
        ..top
    }
}

/// A fully connected layer.
#[derive(Default)]
pub struct InnerProduct {
    num_output: usize,
    bias_term: bool,
    weight_data_size: usize,
    activation: i32,
    activation_params: Vec<f32>,
    weights: Vec<f32>,
    /// The weights as fp16 for single-row forwards under `use_fp16_storage` where the CPU
    /// widens fp16 in hardware (ncnn's x86 `innerproduct_fp16s`): a GEMV reads each weight
    /// once, so half the bytes is nearly half the time.
    weights_f16: Vec<half::f16>,
    bias: Vec<f32>,
    int8_scale_term: i32,
    /// With `int8_scale_term`: the scales, and under int8 inference the same layer over the
    /// kernel's levels (no bias, no activation).
    int8: Option<(Int8Scales, Option<Int8Rows>)>,
    /// With int8 inference on a device: the input's fake quantization.
    int8_gpu: Option<PackPipelines>,
    /// With int8 inference on a device whose layer has a GEMV: the int8 GEMV.
    int8_gemv: Option<int8_gpu::Int8Gemv>,
    gpu: Option<GpuInnerProduct>,
}

/// The device side: the pipeline, and the weights (pack4 rows) and bias uploaded once.
struct GpuInnerProduct {
    /// The GEMV over vec4 rows; `None` where the input count is not a multiple of 4.
    gemv: Option<Arc<Pipeline>>,
    /// The pack1 convolution as a 1×1 convolution over the values as channels, for inputs
    /// the GEMV cannot read; `None` where every input has vec4 rows.
    pointwise: Option<Arc<Pipeline>>,
    /// Flattens inputs that are not flat.
    flatten: Gather,
    /// Flattens packed 3-D inputs (a shift map that reads them through their scalar views).
    unpack: Gather,
    /// The GEMM for 2-D inputs of several rows: `x · Wᵀ + bias`, activated.
    rows: gpu_gemm::Pipelines,
    weights: Option<GpuMat>,
    /// The weights as the GEMM's pack1 rows, where `weights` are not stored so already.
    weights_pack1: Option<GpuMat>,
    bias: Option<GpuMat>,
}

impl InnerProduct {
    fn num_input(&self) -> usize {
        self.weight_data_size / self.num_output.max(1)
    }

    /// A 2-D input's rows, each a product: `h × num_output` out of the shared GEMM `rows`
    /// with the weights as pack1 rows.
    fn forward_rows_gpu(
        &self,
        rows: &gpu_gemm::Pipelines,
        (weights, bias): (&GpuMat, &GpuMat),
        bottom: &GpuMat,
        rec: &mut Recorder<'_>,
    ) -> Result<GpuMat> {
        // a 2-D GPU mat is `c` rows of `w` (pack1: gpu_packs)
        let (k, n, m) = (self.num_input(), self.num_output, bottom.c);
        if bottom.w != k || bottom.elempack != 1 {
            return Err(InputError::Values {
                what: "values in a pack1 row",
                got: bottom.w * bottom.elempack,
                expected: k,
            }
            .into());
        }
        let top = GpuMat::alloc(rec.context(), 2, [n, 1, m], 1, rows.options())?;
        let bias = self.bias_term.then_some(Addend {
            mat: bias,
            broadcast: 4,
            rs: 0,
        });
        gpu_gemm::record(
            rec,
            rows,
            Sizes::batched(m, n, k, 1),
            Operand::rows(bottom),
            Operand::dense(weights, k),
            bias,
            Operand::rows(&top),
            None,
        )?;
        Ok(top)
    }
}

impl Layer for InnerProduct {
    fn support(&self) -> Support {
        if self.int8.is_some() && self.int8_gpu.is_none() {
            // int8 blobs from the layer before as they are
            return Support {
                int8_storage: true,
                ..Support::ONE_BLOB
            };
        }
        Support::ONE_BLOB.gpu(self.gpu.is_some()).gpu_4d()
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.prepare_int8(opt, gpu.is_some());
        if let (Some(g), Some((scales, _))) = (gpu, &self.int8) {
            self.int8_gpu = Some(fake_quantization(g, scales.input)?);
        }
        // a CPU net's (a GPU net keeps only what the device reads)
        let cpu = gpu.is_none();
        self.weights_f16 = if cpu && opt.use_fp16_storage && kernels::has_fp16_conversion() {
            self.weights
                .iter()
                .map(|&w| half::f16::from_f32(w))
                .collect()
        } else {
            Vec::new()
        };
        // the shader reads rows of vec4 from buffers; images and ragged rows stay on the CPU
        self.gpu = match gpu {
            Some(gpu) => {
                let p = |i: usize| self.activation_params.get(i).copied().unwrap_or(0.0);
                let mut values = vec![
                    (0, SpecValue::I32(i32::from(self.bias_term))),
                    (1, SpecValue::I32(self.activation)),
                    (2, SpecValue::F32(p(0))),
                    (3, SpecValue::F32(p(1))),
                ];
                let ragged = !self.num_input().is_multiple_of(4);
                self.int8_gemv = match &self.int8 {
                    Some((scales, Some(kernel))) if !ragged => {
                        Some(int8_gpu::Int8Gemv::new(gpu, kernel, scales, &values)?)
                    }
                    _ => None,
                };
                // pack4 values lie as pack1 ones unless pack1 keeps fp32 where pack4 packs fp16
                let same_bytes =
                    StorageFormat::of(gpu.options, 1) == StorageFormat::of(gpu.options, 4);
                let gemv = (!ragged)
                    .then(|| gpu.pipeline(Shader::Innerproduct.module(), &values))
                    .transpose()?;
                let pointwise = if ragged || !same_bytes {
                    // kernel, dilation, stride 1; one group; one output per invocation along z
                    values.extend((4..11).map(|id| (id, SpecValue::I32(1))));
                    values.push((11, SpecValue::I32(0)));
                    let spec = Specialization {
                        values,
                        local_size: Some([1, 1, 64]),
                    };
                    let module = Shader::Convolution.module();
                    Some(gpu.ctx.pipeline(module, gpu.options, &spec)?)
                } else {
                    None
                };
                let flatten =
                    gather_for(Some(gpu), GatherMap::Reshape)?.ok_or(Error::NotLoaded {
                        what: "the flatten gather",
                    })?;
                let unpack = Gather::create(gpu, GatherMap::shift([0; 4]), Border::Constant)?;
                let rows = Form {
                    trans_b: true,
                    activation: (self.activation, [p(0), p(1)]),
                    ..Form::PLAIN
                }
                .pipeline(gpu, opt)?;
                Some(GpuInnerProduct {
                    gemv,
                    pointwise,
                    flatten,
                    unpack,
                    rows,
                    weights: None,
                    weights_pack1: None,
                    bias: None,
                })
            }
            _ => None,
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        let Some(state) = self.gpu.as_mut() else {
            return Ok(());
        };
        if let Some(int8) = self.int8_gemv.as_mut() {
            int8.upload(gpu)?;
        }
        let pack = if state.gemv.is_some() { 4 } else { 1 };
        state.weights = Some(gpu.upload_values(&self.weights, pack)?);
        // pack4 and pack1 values lie alike unless pack1 keeps fp32 where pack4 packs fp16
        let format = |pack| StorageFormat::of(state.rows.options(), pack);
        state.weights_pack1 = (format(pack) != format(1))
            .then(|| gpu.upload_values(&self.weights, 1))
            .transpose()?;
        // a bias binding exists even without a bias term
        let bias: &[f32] = if self.bias.is_empty() {
            &[0.0]
        } else {
            &self.bias
        };
        state.bias = Some(gpu.upload_values(bias, 1)?);
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        match bottoms {
            [
                BlobShape {
                    dims: 2,
                    shape: [w, h, ..],
                },
            ] if *h > 1 && *w == self.num_input() => true,
            // one workgroup per output along y: within every device's dispatch limit
            [BlobShape { shape, .. }] => {
                self.num_output <= 65535 && shape.iter().product::<usize>() == self.num_input()
            }
            _ => false,
        }
    }

    fn gpu_packs(&self, bottoms: &[BlobShape]) -> Option<Packs> {
        // the GEMV reads flat vec4 rows, and 3-D packed inputs unpacked into them where the
        // storage has scalar views; the gather that flattens, the ragged 1×1 convolution and
        // the GEMM of several rows read pack1
        let flat =
            matches!(bottoms, [BlobShape { dims, shape }] if flat_values(*dims, *shape).is_some());
        let unpacks = matches!(bottoms, [BlobShape { dims: 3, .. }])
            && self.gpu.as_ref().is_some_and(|g| g.unpack.takes_packed());
        let ragged = self.gpu.as_ref().is_none_or(|g| g.gemv.is_none());
        Some(if (flat || unpacks) && !ragged {
            Packs::UP_TO_4
        } else {
            Packs::ONE
        })
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        if let Some(int8) = &self.int8_gemv
            && let Some(top) = self.forward_gpu_int8(int8, bottom, rec)?
        {
            return Ok(top);
        }
        match &self.int8_gpu {
            Some(quantize) => {
                let x = unary(rec, quantize, bottom)?;
                self.forward_gpu_float(&x, rec)
            }
            None => self.forward_gpu_float(bottom, rec),
        }
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.num_output = pd.int(0, 0).max(0) as usize;
        self.bias_term = pd.int(1, 0) != 0;
        self.weight_data_size = pd.int(2, 0).max(0) as usize;
        // ncnn makes no activation of another type (7, swish, is the net's own fusion)
        self.activation = match pd.int(9, 0) {
            a @ 0..=6 => a,
            _ => 0,
        };
        self.activation_params = pd.floats(10);
        self.int8_scale_term = pd.int(8, 0);
        if self.num_output == 0 || !self.weight_data_size.is_multiple_of(self.num_output) {
            return Err(Error::BadParam {
                id: 2,
                value: self.weight_data_size.to_string(),
                allowed: "weight_data_size: a multiple of num_output (0)",
            });
        }
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        let kernel = weights.load_stored(self.weight_data_size, 0)?;
        if self.bias_term {
            self.bias = weights.load(self.num_output, 1)?;
        }
        if self.int8_scale_term != 0 {
            let term = self.int8_scale_term;
            let scales = Int8Scales::load(weights, term, self.num_output, self.num_output)?;
            let levels = scales.kernel_levels(kernel.0, kernel.1);
            self.weights = levels;
            self.int8 = Some((scales, None));
        } else {
            self.weights = kernel.0;
        }
        Ok(())
    }

    fn forward(&self, bottom: &Mat, opt: &RunOptions) -> Result<Mat> {
        if let Some((scales, Some(rows))) = &self.int8 {
            return self.forward_int8(bottom, scales, rows);
        }
        let num_input = self.weight_data_size / self.num_output;
        let x = bottom.to_values();
        let rows = input_rows(bottom, x.len(), num_input)?;
        let mut out = vec![0.0f32; rows * self.num_output];
        if rows >= GEMM_ROWS {
            // a batch of rows: one GEMM against the weight rows (as stored, transposed)
            if !self.bias.is_empty() {
                for o in out.chunks_mut(self.num_output.max(1)) {
                    o.copy_from_slice(&self.bias);
                }
            }
            let a = MatRef::rows(&x, rows, num_input, num_input);
            let w = MatRef::rows(&self.weights, self.num_output, num_input, num_input).t();
            let nout = self.num_output;
            gemm(a, w, MatMut::rows(&mut out, rows, nout, nout), true);
            if self.activation != 0 {
                out.par_chunks_mut(nout.max(1))
                    .for_each(|o| activate_all(self.activation, &self.activation_params, o));
            }
        } else {
            let f16 = opt.use_fp16_storage && !self.weights_f16.is_empty();
            self.forward_rows(&x, num_input, &mut out, f16);
        }
        if bottom.dims == 2 && bottom.w == num_input {
            Mat::from_shape_values(2, [self.num_output, rows, 1, 1], &out)
        } else {
            Mat::from_shape_values(1, [self.num_output, 1, 1, 1], &out)
        }
    }
}

impl InnerProduct {
    /// With int8 inference, the same layer over the kernel's levels (and on a device the
    /// kernel's levels over their scales as the float weights); without, those float weights
    /// alone.
    fn prepare_int8(&mut self, opt: &RunOptions, device: bool) {
        let Some((scales, run)) = self.int8.as_mut() else {
            return;
        };
        let dequantized =
            (device || !opt.use_int8_inference).then(|| scales.dequantized(&self.weights));
        if !opt.use_int8_inference {
            self.weights = dequantized.unwrap_or_default();
            self.int8 = None;
            return;
        }
        let k = self.weight_data_size / self.num_output.max(1);
        *run = Some(Int8Rows::new(&self.weights, self.num_output, k));
        self.weights = dequantized.unwrap_or_default();
    }
}

impl InnerProduct {
    /// The int8 forward: the input's levels (an int8 blob's own), each row's int32 dot
    /// products with the kernel's levels, dequantized or requantized.
    fn forward_int8(&self, bottom: &Mat, scales: &Int8Scales, kernel: &Int8Rows) -> Result<Mat> {
        let x = levels_of(bottom, scales.input);
        let k = kernel.k;
        let n = input_rows(bottom, x.len(), k)?;
        let batch = bottom.dims == 2 && bottom.w == k;
        let x: Vec<i8> = x.iter().map(|&v| v as i8).collect();
        let mut sums = vec![0i32; n * kernel.rows];
        for (y, x) in sums.chunks_mut(kernel.rows.max(1)).zip(x.chunks(k.max(1))) {
            int8_gemm::gemv(Int8Kernel::best(), kernel, x, y);
        }
        let sums: Vec<f32> = sums.iter().map(|&v| v as f32).collect();
        let sums = match batch {
            true => Mat::from_shape_values(2, [self.num_output, n, 1, 1], &sums)?,
            false => Mat::from_shape_values(1, [self.num_output, 1, 1, 1], &sums)?,
        };
        let activation = (self.activation, &self.activation_params[..]);
        scales.finish(sums, batch, true, &self.bias, activation)
    }
}

/// The rows of `bottom` (`values` in all) as the layer reads them: a 2-D input of rows
/// `num_input` wide is a batch of rows (ncnn's gemm path), anything else one row.
fn input_rows(bottom: &Mat, values: usize, num_input: usize) -> Result<usize> {
    let rows = if bottom.dims == 2 && bottom.w == num_input {
        bottom.h * bottom.elempack
    } else {
        1
    };
    if values != rows * num_input {
        return Err(InputError::Values {
            what: "values in the input rows",
            got: values,
            expected: rows * num_input,
        }
        .into());
    }
    Ok(rows)
}

/// From this many input rows on, a GEMM (below, one dot product per output and row).
const GEMM_ROWS: usize = 4;

impl InnerProduct {
    /// Each output of each row as one vectorized dot product over its weight row (the fp16
    /// copy with `f16`), threads splitting the outputs (a single row has nothing else to split).
    fn forward_rows(&self, x: &[f32], num_input: usize, out: &mut [f32], f16: bool) {
        const OUTPUTS_PER_TASK: usize = 16;
        for (o, row) in out
            .chunks_mut(self.num_output.max(1))
            .zip(x.chunks(num_input.max(1)))
        {
            o.par_chunks_mut(OUTPUTS_PER_TASK)
                .enumerate()
                .for_each(|(t, ys)| {
                    for (i, y) in ys.iter_mut().enumerate() {
                        let p = t * OUTPUTS_PER_TASK + i;
                        let span = p * num_input..(p + 1) * num_input;
                        let dot = if f16 {
                            kernels::dot_f16(&self.weights_f16[span], row)
                        } else {
                            kernels::dot(&self.weights[span], row)
                        };
                        let sum = dot + self.bias.get(p).copied().unwrap_or(0.0);
                        *y = activate(self.activation, &self.activation_params, sum);
                    }
                });
        }
    }
}

impl InnerProduct {
    /// The float forward on the device (an int8 layer's after its input's quantization).
    fn forward_gpu_float(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let state = self.gpu.ready()?;
        let (Some(weights), Some(bias)) = (&state.weights, &state.bias) else {
            return Err(Error::NotLoaded {
                what: "the weights on the device",
            });
        };
        let ctx = rec.context();
        let [w, rows, ..] = bottom.shape();
        if bottom.dims == 2 && rows > 1 && w == self.num_input() {
            let weights = state.weights_pack1.as_ref().unwrap_or(weights);
            return self.forward_rows_gpu(&state.rows, (weights, bias), bottom, rec);
        }
        // a 2-D input of one row `num_input` wide keeps its 2-D shape (ncnn's gemm path)
        let one_row = bottom.dims == 2 && bottom.w == self.num_input();
        let values: usize = bottom.shape().iter().product();
        if values != self.num_input() {
            return Err(InputError::Values {
                what: "values in the input",
                got: values,
                expected: self.num_input(),
            }
            .into());
        }
        let n = self.num_output;
        let top = GpuMat::alloc(ctx, 1, [1, 1, n], 1, state.rows.options())?;
        if let Some(gemv) = &state.gemv
            && let Some(rows) = vec4_rows((&state.flatten, &state.unpack), bottom, rec)?
        {
            let words = [(self.num_input() / 4) as u32, n as u32];
            // one workgroup of the shader's 64 invocations per output, along y (and on along
            // z past the device's limit)
            let grid = fold_into_z(ctx, gemv, [64, n as u32, 1], 1);
            rec.dispatch(gemv, &[&rows, &top, weights, bias], &words, grid)?;
            return Ok(as_row(top, one_row));
        }
        let pointwise = state.pointwise.as_ref().ok_or(Error::NotLoaded {
            what: "the pack1 InnerProduct pipeline",
        })?;
        let flattened;
        let bottom = if flat_values(bottom.dims, bottom.shape()).is_none() {
            flattened = reshape(rec, &state.flatten, bottom, 1, [1, 1, 1, self.num_input()])?;
            &flattened
        } else {
            bottom
        };
        // a 1×1 convolution over the values as channels, one apart in a 1-D blob
        let cstep = if bottom.dims == 1 { 1 } else { bottom.cstep };
        let k = self.num_input() as u32;
        let words = [1, 1, k, cstep as u32, 1, 1, n as u32, 1, 0, 0, 0];
        let weights = state.weights_pack1.as_ref().unwrap_or(weights);
        rec.dispatch(
            pointwise,
            &[bottom, &top, weights, bias],
            &words,
            [1, 1, n as u32],
        )?;
        Ok(as_row(top, one_row))
    }
}
