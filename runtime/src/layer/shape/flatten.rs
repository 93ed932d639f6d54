//! Flatten: every value into one row, in order.

use crate::error::Result;
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::run_options::RunOptions;
use crate::layer::shape::gather::{Gather, GatherMap, gather_for, reshape};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::view::count;
use crate::tensor::{GpuMat, Mat};

/// Everything into one row (ncnn's Flatten: `w * h * d * c` values, 1-D).
#[derive(Default)]
pub struct Flatten {
    gpu: Option<Gather>,
}

impl Layer for Flatten {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some()).gpu_4d()
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = gather_for(gpu, GatherMap::Reshape)?;
        Ok(())
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let gather = self.gpu.ready()?;
        let n = count(bottom.shape());
        reshape(rec, gather, bottom, 1, [1, 1, 1, n])
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let n = bottom.to_values().len();
        bottom.reshape(1, [n, 1, 1, 1])
    }
}
