//! What every elementwise activation layer shares: the [`Activation`] trait (one function of
//! one value, its parameters and its op in the built-in `unaryop` shaders) and the layer that
//! runs one, [`ActivationLayer`]: in place, any packing, fp32/fp16/bf16 on the CPU; on the GPU
//! the `unaryop` shaders (pack 1/4/8, and the flat one over buffers).
//!
//! A new activation is a file with a type implementing [`Activation`] and a line in the
//! registry (the README's "Adding a layer" walks through one).

pub mod absval;
pub mod bnll;
pub mod celu;
pub mod clip;
pub mod dropout;
pub mod elu;
pub mod erf;
pub mod exp;
pub mod fused;
pub mod gelu;
pub mod hardsigmoid;
pub mod hardswish;
pub mod log;
pub mod mish;
pub mod noop;
pub mod params;
pub mod power;
pub mod prelu;
pub mod relu;
pub mod selu;
pub mod shrink;
pub mod sigmoid;
pub mod softplus;
pub mod swish;
pub mod tanh;
pub mod threshold;

use rayon::prelude::*;

use crate::error::Result;
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::epilogue::FusedActivation;
use crate::layer::params::ParamDict;
use crate::layer::rows::Rows;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::flat::unary;
use crate::layer::shared::grain::GRAIN;
use crate::layer::shared::kernels;
use crate::layer::shared::pipelines::{DeviceSide, PackPipelines};
use crate::shaders::Shader;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat, MatData};

/// One elementwise function: an activation layer's math.
pub trait Activation: Copy + Default + Send + Sync + 'static {
    /// The function with its parameters read from the layer's params (ncnn's ids); a function
    /// without parameters is its `Default`. Parameters out of ncnn's range are a `BadParam`.
    fn from_params(_pd: &ParamDict) -> Result<Self> {
        Ok(Self::default())
    }

    /// The function of one value.
    fn apply(self, x: f32) -> f32;

    /// The op code and three parameters of `shaders/include/unary_op.comp`.
    fn shader_op(self) -> (i32, [f32; 3]);

    /// The same function as the fused activation of the layer before it on the device (its
    /// epilogue's `activation_type` and two parameters), where the epilogue has it.
    fn fused(self) -> Option<FusedActivation> {
        None
    }

    /// The CPU pass over a blob; a function whose `apply` branches may give a branch-free
    /// loop here so that it vectorizes.
    fn forward_cpu(self, blob: &mut Mat) {
        map_inplace(blob, move |x| self.apply(x));
    }
}

/// The layer running activation `A`.
#[derive(Default)]
pub struct ActivationLayer<A> {
    f: A,
    gpu: Option<PackPipelines>,
}

impl<A: Activation> ActivationLayer<A> {
    /// The function it applies.
    pub fn function(&self) -> A {
        self.f
    }
}

/// The `unaryop` shader family (pack 1/4/8 and flat) specialized for op `(code, params)`.
pub(crate) fn unaryop_pipelines(
    gpu: GpuSetup<'_>,
    (op, [p0, p1, p2]): (i32, [f32; 3]),
) -> Result<PackPipelines> {
    let values = [
        (0, SpecValue::I32(op)),
        (1, SpecValue::F32(p0)),
        (2, SpecValue::F32(p1)),
        (3, SpecValue::F32(p2)),
    ];
    PackPipelines::create(
        gpu,
        &[
            (1, Shader::Unaryop.module()),
            (4, Shader::UnaryopPack4.module()),
            (8, Shader::UnaryopPack8.module()),
        ],
        &values,
    )?
    .with_flat(gpu, Shader::UnaryopFlat.module(), &values)
}

/// Applies `f` to every value of `m` in place, in parallel chunks.
pub(crate) fn map_inplace(m: &mut Mat, f: impl Fn(f32) -> f32 + Sync) {
    match &mut m.data {
        MatData::F32(v) => v.par_chunks_mut(GRAIN).for_each(|c| kernels::map(c, &f)),
        // 16-bit values widened a chunk at a time, so that `f` runs in the vector loop (the
        // kernels' functions are written for it)
        MatData::F16(v) => v.par_chunks_mut(GRAIN).for_each(|c| {
            let mut wide: Vec<f32> = c.iter().map(|x| x.to_f32()).collect();
            kernels::map(&mut wide, &f);
            c.iter_mut()
                .zip(&wide)
                .for_each(|(x, w)| *x = half::f16::from_f32(*w));
        }),
        MatData::Bf16(v) => v.par_chunks_mut(GRAIN).for_each(|c| {
            let mut wide: Vec<f32> = c.iter().map(|x| x.to_f32()).collect();
            kernels::map(&mut wide, &f);
            c.iter_mut()
                .zip(&wide)
                .for_each(|(x, w)| *x = half::bf16::from_f32(*w));
        }),
        MatData::I8(v) => v.iter_mut().for_each(|x| {
            *x = f(f32::from(*x)).round().clamp(-127.0, 127.0) as i8;
        }),
    }
}

impl<A: Activation> Layer for ActivationLayer<A> {
    fn support(&self) -> Support {
        // any packing on the GPU as well: a shader per pack and the flat one, so that an
        // activation between pack1 layers (GELU between Gemms) is not packed and unpacked
        Support::any_layout_inplace()
            .gpu(true)
            .gpu_any_packing()
            .images()
            .gpu_4d()
            .gpu_writes_new()
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.f = A::from_params(pd)?;
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = gpu
            .map(|gpu| unaryop_pipelines(gpu, self.f.shader_op()))
            .transpose()?;
        Ok(())
    }

    fn gpu_rows(&self, blob: BlobShape) -> Option<Rows> {
        let (dims, [w, h, _, c]) = (blob.dims, blob.shape);
        (dims == 3).then(|| Rows::same([w, h, c]))
    }

    fn gpu_activation(&self) -> Option<FusedActivation> {
        self.f.fused()
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &RunOptions) -> Result<()> {
        self.f.forward_cpu(blob);
        Ok(())
    }

    fn forward_gpu_inplace(&self, blob: &mut GpuMat, rec: &mut Recorder<'_>) -> Result<()> {
        let pipelines = self.gpu.ready()?;
        *blob = unary(rec, pipelines, blob)?;
        Ok(())
    }
}
