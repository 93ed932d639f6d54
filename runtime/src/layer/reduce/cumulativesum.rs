//! CumulativeSum: `0=axis` (negative from the end; 1-D blobs ignore it). Running sums along
//! the axis.

use crate::error::Result;
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::group_pipeline::GroupPipeline;
use crate::layer::shared::groups::{self, GroupExtras, GroupOp, Groups};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::strided_copy::alloc_numpy;
use crate::layer::shared::view::{numpy_shape, positive_axis_or_only};
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat};

/// Running sums.
#[derive(Default)]
pub struct CumulativeSum {
    axis: i32,
    gpu: Option<GroupPipeline>,
}

impl CumulativeSum {
    /// One group per line along the axis.
    fn lines(&self, np: &[usize]) -> Result<Groups> {
        let axis = positive_axis_or_only(self.axis, np.len())?;
        let along: Vec<bool> = (0..np.len()).map(|a| a == axis).collect();
        Ok(Groups::over(np, &along))
    }
}

impl Layer for CumulativeSum {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some()).gpu_4d()
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.axis = pd.int(0, 0);
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = gpu
            .map(|g| GroupPipeline::create(g, GroupOp::Scan))
            .transpose()?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms
            .iter()
            .all(|BlobShape { dims, shape: s }| self.lines(&numpy_shape(*dims, *s)).is_ok())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let np = bottom.numpy_shape();
        let sums = groups::scan(&bottom.to_values(), &self.lines(&np)?);
        Mat::from_numpy(&np, &sums)
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let np = numpy_shape(bottom.dims, bottom.shape());
        let lines = self.lines(&np)?;
        let top = alloc_numpy(rec, &np, bottom)?;
        self.gpu
            .ready()?
            .record(rec, (bottom, &top, bottom), &lines, GroupExtras::default())?;
        Ok(top)
    }
}
