//! PReLU: `0=num_slope`; weights: the slopes. `x < 0 ? x * slope[ch] : x` per channel (w of a
//! 1-D blob, h of a 2-D one, c otherwise), or with one slope shared by every value.

use crate::error::Result;
use crate::gpu::Recorder;
use crate::layer::activation::fused::leaky;
use crate::layer::activation::{map_inplace, unaryop_pipelines};
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::channel_affine::{AffineGpu, affine_support, map_channels};
use crate::layer::shared::flat::unary;
use crate::layer::shared::pipelines::{DeviceSide, PackPipelines};
use crate::layer::weights::Weights;
use crate::tensor::{GpuMat, Mat};

/// The device side: a shared slope is leaky ReLU (the `unaryop` family), per-channel slopes
/// the `channel_affine` family in its PReLU mode.
enum PreluGpu {
    Shared(PackPipelines),
    PerChannel(AffineGpu),
}

/// Parametric ReLU.
#[derive(Default)]
pub struct PReLU {
    num_slope: usize,
    slope: Vec<f32>,
    gpu: Option<PreluGpu>,
}

fn prelu(x: f32, slope: f32) -> f32 {
    leaky(x, slope)
}

impl Layer for PReLU {
    fn support(&self) -> Support {
        affine_support(self.gpu.is_some())
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.num_slope = pd.int_in(0, 0, 1..=i32::MAX, "at least one slope")? as usize;
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.slope = weights.load(self.num_slope, 1)?;
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match (gpu, self.slope.as_slice()) {
            (None, _) => None,
            (Some(gpu), [slope]) => Some(PreluGpu::Shared(unaryop_pipelines(
                gpu,
                (1, [*slope, 0.0, 0.0]),
            )?)),
            (gpu, _) => AffineGpu::create_prelu(gpu)?.map(PreluGpu::PerChannel),
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        if let Some(PreluGpu::PerChannel(g)) = &mut self.gpu {
            g.upload(gpu, &self.slope, &[])?;
        }
        Ok(())
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &RunOptions) -> Result<()> {
        match self.slope.as_slice() {
            [slope] => {
                let slope = *slope;
                map_inplace(blob, move |x| prelu(x, slope));
                Ok(())
            }
            slopes => map_channels(blob, slopes, &[], |x, a, _| prelu(x, a)),
        }
    }

    fn forward_gpu_inplace(&self, blob: &mut GpuMat, rec: &mut Recorder<'_>) -> Result<()> {
        match self.gpu.ready()? {
            PreluGpu::Shared(pipelines) => {
                *blob = unary(rec, pipelines, blob)?;
                Ok(())
            }
            PreluGpu::PerChannel(g) => g.record(rec, blob),
        }
    }
}
