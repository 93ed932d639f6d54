//! Layout and precision changes as layers: Packing (elempack, with an optional cast) and Cast
//! (element type). Both take any layout and storage the net has, and the net converts their
//! outputs for whatever reads them next.

use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::contract::{GpuSetup, Implements, Layer, Support};
use crate::layer::gpu_util::{PackPipelines, no_device, unary};
use crate::layer::option::Option;
use crate::layer::params::ParamDict;
use crate::shaders::Shader;
use crate::tensor::{ElemType, GpuMat, Mat};

/// ncnn's cast type codes: 1 fp32, 2 fp16, 3 int8, 4 bf16 (0: unchanged).
fn elemtype(code: i32) -> Result<core::option::Option<ElemType>> {
    Ok(match code {
        0 => None,
        1 => Some(ElemType::F32),
        2 => Some(ElemType::F16),
        3 => Some(ElemType::I8),
        4 => Some(ElemType::Bf16),
        t => return Err(Error::Shape(format!("cast type {t} (0..=4)"))),
    })
}

/// Takes every layout and storage as it comes.
const ANY: Support = Support {
    packing: true,
    any_packing: true,
    bf16_storage: true,
    fp16_storage: true,
    int8_storage: true,
    ..Support::ONE_BLOB
};

/// Packing: `0=out_elempack 1=use_padding 2=cast_type_from 3=cast_type_to`. Channels that do
/// not divide by `out_elempack` stay as they are, or with `use_padding` grow with zeros.
#[derive(Default)]
pub struct Packing {
    out_elempack: usize,
    use_padding: bool,
    cast_to: core::option::Option<ElemType>,
    on_device: bool,
}

/// [`ANY`], on the GPU too when `gpu` (any GPU packing: these layers set it themselves).
fn any_support(gpu: bool) -> Support {
    Support {
        vulkan: gpu,
        vulkan_packing: true,
        vulkan_any_packing: true,
        ..ANY
    }
}

/// The channels (values along the packed axis) of a blob of `dims` and `[w, h, d, c]`.
fn channels(dims: u8, [w, h, _, c]: [usize; 4]) -> usize {
    match dims {
        1 => w,
        2 => h,
        _ => c,
    }
}

impl Layer for Packing {
    fn support(&self) -> Support {
        any_support(self.on_device)
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD_CPU_GPU
    }

    fn create_pipeline(
        &mut self,
        _opt: &Option,
        gpu: core::option::Option<GpuSetup<'_>>,
    ) -> Result<()> {
        // the device keeps the net's storage type: casting packings stay on the CPU, as do
        // image nets (their packing is the texel's)
        self.on_device = gpu.is_some_and(|g| !g.options.contains(crate::Opt::Image))
            && matches!(self.cast_to, None | Some(ElemType::F32));
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[(u8, [usize; 4])]) -> bool {
        // padding channels up is a CPU job
        bottoms
            .iter()
            .all(|&(dims, shape)| channels(dims, shape).is_multiple_of(self.out_elempack))
    }

    fn forward_gpu(
        &self,
        bottom: &GpuMat,
        rec: &mut Recorder<'_>,
        _opt: &Option,
    ) -> Result<GpuMat> {
        rec.context().record_packing(rec, bottom, self.out_elempack)
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.out_elempack = match pd.int(0, 1) {
            p @ (1 | 4 | 8) => p as usize,
            p => return Err(Error::Shape(format!("Packing out_elempack {p}"))),
        };
        self.use_padding = pd.int(1, 0) != 0;
        elemtype(pd.int(2, 0))?;
        self.cast_to = elemtype(pd.int(3, 0))?;
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &Option) -> Result<Mat> {
        let m = match self.cast_to {
            Some(t) => bottom.cast(t),
            None => bottom.clone(),
        };
        let channels = m.outer() * m.elempack;
        if channels.is_multiple_of(self.out_elempack) {
            return m.to_packing(self.out_elempack);
        }
        if !self.use_padding {
            return Ok(m);
        }
        // zero channels up to the next multiple, as ncnn's padded packing does
        let mut shape = m.numpy_shape();
        let padded = channels.next_multiple_of(self.out_elempack);
        let mut values = m.to_values();
        values.resize(values.len() / channels * padded, 0.0);
        shape[0] = padded;
        Mat::from_numpy(&shape, &values)?
            .cast(m.elemtype())
            .to_packing(self.out_elempack)
    }
}

/// Cast: `0=type_from 1=type_to` (1 fp32, 2 fp16, 3 int8, 4 bf16). The source is whatever
/// the blob holds, so a model's `type_from` that the net has already changed still works.
#[derive(Default)]
pub struct Cast {
    from: core::option::Option<ElemType>,
    to: core::option::Option<ElemType>,
    /// The rounding shaders (`unaryop` ops 10 and 11) for 16-bit targets.
    gpu: core::option::Option<PackPipelines>,
    on_device: bool,
}

impl Layer for Cast {
    fn support(&self) -> Support {
        any_support(self.on_device)
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD_CPU_GPU
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.from = elemtype(pd.int(0, 0))?;
        self.to = elemtype(pd.int(1, 0))?;
        Ok(())
    }

    fn create_pipeline(
        &mut self,
        _opt: &Option,
        gpu: core::option::Option<GpuSetup<'_>>,
    ) -> Result<()> {
        // GPU mats hold floats in the net's storage type: a cast there rounds values to the
        // target type; int8 stays on the CPU
        let int8 = self.from == Some(ElemType::I8) || self.to == Some(ElemType::I8);
        let op = match self.to {
            Some(ElemType::F16) => Some(10),
            Some(ElemType::Bf16) => Some(11),
            _ => None,
        };
        self.gpu = match (gpu, op) {
            (Some(gpu), Some(op)) if !int8 => {
                let values = [
                    (0, SpecValue::I32(op)),
                    (1, SpecValue::F32(0.0)),
                    (2, SpecValue::F32(0.0)),
                ];
                Some(
                    PackPipelines::create(
                        gpu,
                        &[
                            (1, Shader::Unaryop.module()),
                            (4, Shader::UnaryopPack4.module()),
                            (8, Shader::UnaryopPack8.module()),
                        ],
                        &values,
                    )?
                    .with_flat(gpu, Shader::UnaryopFlat.module(), &values)?,
                )
            }
            _ => None,
        };
        self.on_device = gpu.is_some() && !int8;
        Ok(())
    }

    fn forward_gpu(
        &self,
        bottom: &GpuMat,
        rec: &mut Recorder<'_>,
        _opt: &Option,
    ) -> Result<GpuMat> {
        if !self.on_device {
            return Err(no_device("Cast"));
        }
        match &self.gpu {
            Some(pipelines) => unary(rec, pipelines, bottom),
            None => Ok(bottom.clone()),
        }
    }

    fn forward(&self, bottom: &Mat, _opt: &Option) -> Result<Mat> {
        Ok(match self.to {
            Some(t) => bottom.cast(t),
            None => bottom.clone(),
        })
    }
}
