//! BatchNorm: `0=channels 1=eps`; weights slope, mean, var, bias, folded into one affine
//! per channel at load.

use crate::error::Result;
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::channel_affine::{AffineGpu, affine_support, per_channel, upload_affine};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::weights::Weights;
use crate::tensor::{GpuMat, Mat};

/// BatchNorm: `0=channels 1=eps`; weights slope, mean, var, bias.
#[derive(Default)]
pub struct BatchNorm {
    channels: usize,
    eps: f32,
    a: Vec<f32>,
    b: Vec<f32>,
    gpu: Option<AffineGpu>,
}

impl Layer for BatchNorm {
    fn support(&self) -> Support {
        affine_support(self.gpu.is_some())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = AffineGpu::create(gpu)?;
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        upload_affine(&mut self.gpu, gpu, &self.a, &self.b)
    }

    fn forward_gpu_inplace(&self, blob: &mut GpuMat, rec: &mut Recorder<'_>) -> Result<()> {
        self.gpu.ready()?.record(rec, blob)
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.channels = pd.int(0, 0).max(0) as usize;
        self.eps = pd.float(1, 0.0);
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        let n = self.channels;
        let slope = weights.load(n, 1)?;
        let mean = weights.load(n, 1)?;
        let var = weights.load(n, 1)?;
        let bias = weights.load(n, 1)?;
        // y = (x - mean) / sqrt(var + eps) * slope + bias, folded into x * a + b
        self.a = (0..n)
            .map(|i| slope[i] / (var[i] + self.eps).sqrt())
            .collect();
        self.b = (0..n).map(|i| bias[i] - mean[i] * self.a[i]).collect();
        Ok(())
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &RunOptions) -> Result<()> {
        per_channel(blob, &self.a, &self.b)
    }
}
