//! Cast: `0=type_from 1=type_to` (1 fp32, 2 fp16, 3 int8, 4 bf16): the element type changed.
//! GPU mats hold floats in the net's storage type: there a cast rounds values to the target.

use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::layer::activation::unaryop_pipelines;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::flat::unary;
use crate::layer::shared::pipelines::PackPipelines;
use crate::tensor::{ElemType, GpuMat, Mat};

/// Cast: `0=type_from 1=type_to` (1 fp32, 2 fp16, 3 int8, 4 bf16). The source is whatever
/// the blob holds, so a model's `type_from` that the net has already changed still works.
#[derive(Default)]
pub struct Cast {
    from: Option<ElemType>,
    to: Option<ElemType>,
    /// The rounding shaders (`unaryop` ops 10 and 11) for 16-bit targets.
    gpu: Option<PackPipelines>,
    on_device: bool,
}

impl Layer for Cast {
    fn support(&self) -> Support {
        let any = Support::any_layout(self.on_device).images();
        // a cast from fp32 must see the fp32 values: the net's 16-bit storage would round
        // them once before the cast rounds them again (1.1206706 → fp16 1.1210938 → bf16
        // 1.125, where bf16 of the value itself is 1.1171875)
        if self.from == Some(ElemType::F32) {
            Support {
                fp16_storage: false,
                bf16_storage: false,
                ..any
            }
        } else {
            any
        }
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.from = pd.cast_type(0)?;
        self.to = pd.cast_type(1)?;
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        // GPU mats hold floats in the net's storage type: a cast there rounds values to the
        // target type; int8 stays on the CPU
        let int8 = self.from == Some(ElemType::I8) || self.to == Some(ElemType::I8);
        let op = match self.to {
            Some(ElemType::F16) => Some(10),
            Some(ElemType::Bf16) => Some(11),
            _ => None,
        };
        self.gpu = match (gpu, op) {
            (Some(gpu), Some(op)) if !int8 => Some(unaryop_pipelines(gpu, (op, [0.0; 3]))?),
            _ => None,
        };
        self.on_device = gpu.is_some() && !int8;
        Ok(())
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        if !self.on_device {
            return Err(Error::NoDevice {
                what: "a GPU forward (create_pipeline had no device)",
            });
        }
        match &self.gpu {
            Some(pipelines) => unary(rec, pipelines, bottom),
            None => Ok(bottom.clone()),
        }
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        Ok(match self.to {
            Some(t) => bottom.cast(t),
            None => bottom.clone(),
        })
    }
}
