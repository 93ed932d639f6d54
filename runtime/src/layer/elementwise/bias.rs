//! Bias: `0=bias_data_size`; weights: the biases, one per channel `c` (a 1-D or 2-D blob is one
//! channel, as in ncnn, and takes the first).

use crate::error::Result;
use crate::gpu::Recorder;
use crate::layer::activation::map_inplace;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::channel_affine::{
    AffineGpu, affine_support, map_channels, upload_affine,
};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::weights::Weights;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat};

/// A bias added per channel.
#[derive(Default)]
pub struct Bias {
    size: usize,
    bias: Vec<f32>,
    gpu: Option<AffineGpu>,
}

impl Layer for Bias {
    fn support(&self) -> Support {
        affine_support(self.gpu.is_some())
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.size = pd.int_in(0, 0, 1..=i32::MAX, "at least one bias")? as usize;
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.bias = weights.load(self.size, 1)?;
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = AffineGpu::create(gpu)?;
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        upload_affine(&mut self.gpu, gpu, &vec![1.0; self.bias.len()], &self.bias)
    }

    /// The shaders' channel of a 1-D or 2-D blob is its w or h, not ncnn's single channel.
    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms.iter().all(|BlobShape { dims, .. }| *dims >= 3)
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &RunOptions) -> Result<()> {
        if blob.dims >= 3 {
            return map_channels(blob, &self.bias, &[], |x, b, _| x + b);
        }
        let b = self.bias[0];
        map_inplace(blob, move |x| x + b);
        Ok(())
    }

    fn forward_gpu_inplace(&self, blob: &mut GpuMat, rec: &mut Recorder<'_>) -> Result<()> {
        self.gpu.ready()?.record(rec, blob)
    }
}
