//! Elementwise activations: ReLU (leaky), Sigmoid, TanH, Clip, Swish, HardSwish, HardSigmoid,
//! GELU, Dropout (a scale at inference) and Noop. In place, any packing, fp32/fp16/bf16 on the
//! CPU; on the GPU every one through the built-in `unaryop` shaders (pack 1/4/8).

use rayon::prelude::*;

use crate::error::Result;
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::contract::{GpuSetup, Implements, Layer, Support};
use crate::layer::gpu_util::{PackPipelines, no_device, unary};
use crate::layer::kernels;
use crate::layer::option::Option;
use crate::layer::params::ParamDict;
use crate::shaders::Shader;
use crate::tensor::{GpuMat, Mat, MatData};

/// Which function an [`Activation`] applies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    /// `x < 0 ? x * slope : x` (param 0 = slope).
    Relu {
        /// Negative slope.
        slope: f32,
    },
    /// `1 / (1 + e^-x)`.
    Sigmoid,
    /// `tanh(x)`.
    TanH,
    /// `clamp(x, min, max)` (params 0, 1).
    Clip {
        /// Lower bound.
        min: f32,
        /// Upper bound.
        max: f32,
    },
    /// `x * sigmoid(x)`.
    Swish,
    /// `x * clamp(x * alpha + beta, 0, 1)` (params 0, 1; defaults 0.2, 0.5).
    HardSwish {
        /// Slope.
        alpha: f32,
        /// Offset.
        beta: f32,
    },
    /// `clamp(x * alpha + beta, 0, 1)` (params 0, 1; defaults 0.2, 0.5).
    HardSigmoid {
        /// Slope.
        alpha: f32,
        /// Offset.
        beta: f32,
    },
    /// `0.5 x (1 + erf(x / √2))`, or the tanh approximation with param 0 = 1.
    Gelu {
        /// The tanh approximation.
        fast: bool,
    },
    /// `x * scale` (Dropout at inference; param 0, default 1).
    Scale {
        /// The factor.
        scale: f32,
    },
    /// `x` (Noop).
    Identity,
}

impl Op {
    /// The function on one value.
    #[inline]
    pub fn apply(self, x: f32) -> f32 {
        match self {
            Op::Relu { slope } => {
                if x < 0.0 {
                    x * slope
                } else {
                    x
                }
            }
            Op::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            Op::TanH => x.tanh(),
            Op::Clip { min, max } => x.max(min).min(max),
            Op::Swish => x / (1.0 + (-x).exp()),
            Op::HardSwish { alpha, beta } => x * (x * alpha + beta).clamp(0.0, 1.0),
            Op::HardSigmoid { alpha, beta } => (x * alpha + beta).clamp(0.0, 1.0),
            Op::Gelu { fast: false } => {
                0.5 * x * (1.0 + libm::erff(x * std::f32::consts::FRAC_1_SQRT_2))
            }
            Op::Gelu { fast: true } => {
                let c = (2.0 / std::f32::consts::PI).sqrt();
                0.5 * x * (1.0 + (c * (x + 0.044_715 * x * x * x)).tanh())
            }
            Op::Scale { scale } => x * scale,
            Op::Identity => x,
        }
    }
}

/// Shaders by elempack, and the specialization values they share.
type GpuShaders = (Vec<(usize, Shader)>, Vec<(u32, SpecValue)>);

/// One elementwise activation layer.
pub struct Activation {
    op: Op,
    kind: &'static str,
    gpu: core::option::Option<PackPipelines>,
}

impl Activation {
    /// The layer of ncnn type `kind` with its default parameters.
    pub fn new(kind: &'static str) -> Self {
        let op = match kind {
            "ReLU" => Op::Relu { slope: 0.0 },
            "Sigmoid" => Op::Sigmoid,
            "TanH" => Op::TanH,
            "Clip" => Op::Clip {
                min: -f32::MAX,
                max: f32::MAX,
            },
            "Swish" => Op::Swish,
            "HardSwish" => Op::HardSwish {
                alpha: 0.2,
                beta: 0.5,
            },
            "HardSigmoid" => Op::HardSigmoid {
                alpha: 0.2,
                beta: 0.5,
            },
            "GELU" => Op::Gelu { fast: false },
            "Dropout" => Op::Scale { scale: 1.0 },
            _ => Op::Identity,
        };
        Activation {
            op,
            kind,
            gpu: None,
        }
    }

    /// The function it applies.
    pub fn op(&self) -> Op {
        self.op
    }

    /// The op code and parameters of `shaders/include/unary_op.comp` for this function.
    fn unary_spec(&self) -> (i32, f32, f32) {
        match self.op {
            Op::Scale { scale } => (0, scale, 0.0),
            Op::Identity => (0, 1.0, 0.0),
            Op::Relu { slope } => (1, slope, 0.0),
            Op::Sigmoid => (2, 0.0, 0.0),
            Op::TanH => (3, 0.0, 0.0),
            Op::Clip { min, max } => (4, min, max),
            Op::Swish => (5, 0.0, 0.0),
            Op::HardSwish { alpha, beta } => (6, alpha, beta),
            Op::HardSigmoid { alpha, beta } => (7, alpha, beta),
            Op::Gelu { fast: false } => (8, 0.0, 0.0),
            Op::Gelu { fast: true } => (9, 0.0, 0.0),
        }
    }

    fn shaders(&self) -> GpuShaders {
        let (op, p0, p1) = self.unary_spec();
        (
            vec![
                (1, Shader::Unaryop),
                (4, Shader::UnaryopPack4),
                (8, Shader::UnaryopPack8),
            ],
            vec![
                (0, SpecValue::I32(op)),
                (1, SpecValue::F32(p0)),
                (2, SpecValue::F32(p1)),
            ],
        )
    }
}

/// Applies `f` to every value of `m` in place, in parallel chunks.
pub(crate) fn map_inplace(m: &mut Mat, f: impl Fn(f32) -> f32 + Sync) {
    const CHUNK: usize = 1 << 14;
    match &mut m.data {
        MatData::F32(v) => v.par_chunks_mut(CHUNK).for_each(|c| kernels::map(c, &f)),
        MatData::F16(v) => v.par_chunks_mut(CHUNK).for_each(|c| {
            c.iter_mut()
                .for_each(|x| *x = half::f16::from_f32(f(x.to_f32())))
        }),
        MatData::Bf16(v) => v.par_chunks_mut(CHUNK).for_each(|c| {
            c.iter_mut()
                .for_each(|x| *x = half::bf16::from_f32(f(x.to_f32())))
        }),
        MatData::I8(v) => v.iter_mut().for_each(|x| {
            *x = f(f32::from(*x)).round().clamp(-127.0, 127.0) as i8;
        }),
    }
}

impl Layer for Activation {
    fn support(&self) -> Support {
        Support {
            one_blob_only: true,
            inplace: true,
            vulkan: true,
            packing: true,
            any_packing: true,
            vulkan_packing: true,
            vulkan_any_packing: false,
            bf16_storage: true,
            fp16_storage: true,
            int8_storage: false,
        }
    }

    fn implements(&self) -> Implements {
        Implements {
            forward_inplace: true,
            forward_gpu_inplace: true,
            ..Implements::default()
        }
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.op = match self.op {
            Op::Relu { .. } => Op::Relu {
                slope: pd.float(0, 0.0),
            },
            Op::Clip { .. } => Op::Clip {
                min: pd.float(0, -f32::MAX),
                max: pd.float(1, f32::MAX),
            },
            Op::HardSwish { .. } => Op::HardSwish {
                alpha: pd.float(0, 0.2),
                beta: pd.float(1, 0.5),
            },
            Op::HardSigmoid { .. } => Op::HardSigmoid {
                alpha: pd.float(0, 0.2),
                beta: pd.float(1, 0.5),
            },
            Op::Gelu { .. } => Op::Gelu {
                fast: pd.int(0, 0) != 0,
            },
            Op::Scale { .. } => Op::Scale {
                scale: pd.float(0, 1.0),
            },
            other => other,
        };
        Ok(())
    }

    fn create_pipeline(
        &mut self,
        _opt: &Option,
        gpu: core::option::Option<GpuSetup<'_>>,
    ) -> Result<()> {
        self.gpu = match gpu {
            Some(gpu) => {
                let (shaders, values) = self.shaders();
                let modules: Vec<_> = shaders.iter().map(|(p, s)| (*p, s.module())).collect();
                Some(PackPipelines::create(gpu, &modules, &values)?.with_flat(
                    gpu,
                    Shader::UnaryopFlat.module(),
                    &values,
                )?)
            }
            None => None,
        };
        Ok(())
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &Option) -> Result<()> {
        // one loop per function, so each inner loop is branch-free and vectorizes
        match self.op {
            Op::Identity => {}
            Op::Relu { slope } => map_inplace(blob, move |x| if x < 0.0 { x * slope } else { x }),
            Op::Clip { min, max } => map_inplace(blob, move |x| x.max(min).min(max)),
            Op::Scale { scale } => map_inplace(blob, move |x| x * scale),
            Op::Sigmoid => map_inplace(blob, kernels::sigmoid),
            Op::Swish => map_inplace(blob, |x| x * kernels::sigmoid(x)),
            op => map_inplace(blob, move |x| op.apply(x)),
        }
        Ok(())
    }

    fn forward_gpu_inplace(
        &self,
        blob: &mut GpuMat,
        rec: &mut Recorder<'_>,
        _opt: &Option,
    ) -> Result<()> {
        let pipelines = self.gpu.as_ref().ok_or_else(|| no_device(self.kind))?;
        *blob = unary(rec, pipelines, blob)?;
        Ok(())
    }
}
