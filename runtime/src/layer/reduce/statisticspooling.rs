//! StatisticsPooling: `0=include_stddev`. A 1-D blob of each channel's mean (ncnn's channels:
//! a 1-D or 2-D blob is one), followed by each channel's standard deviation with
//! `include_stddev`.

use crate::error::Result;
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::norm::norm_rule::channels;
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::group_pipeline::GroupPipeline;
use crate::layer::shared::groups::{self, GroupExtras, GroupOp, Groups};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::strided_copy::alloc_numpy;
use crate::layer::shared::view::numpy_shape;
use crate::tensor::{GpuMat, Mat};

/// Reduction op numbers of the mean and the standard deviation.
const MEAN: i32 = 3;
const STD: i32 = 11;

/// Per-channel mean (and standard deviation).
#[derive(Default)]
pub struct StatisticsPooling {
    stddev: bool,
    /// The mean and the standard deviation pipelines.
    gpu: Option<(GroupPipeline, GroupPipeline)>,
}

impl StatisticsPooling {
    fn plan(&self, np: &[usize]) -> (Groups, Vec<usize>) {
        let (c, size) = channels(np);
        let out = c * if self.stddev { 2 } else { 1 };
        (Groups::runs(c * size, size), vec![out])
    }
}

impl Layer for StatisticsPooling {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some()).gpu_4d()
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.stddev = pd.int(0, 0) != 0;
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(g) => Some((
                GroupPipeline::create(g, GroupOp::Reduce(MEAN))?,
                GroupPipeline::create(g, GroupOp::Reduce(STD))?,
            )),
            None => None,
        };
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let (groups, out) = self.plan(&bottom.numpy_shape());
        let values = bottom.to_values();
        let mut stats = groups::reduce(&values, &groups, MEAN, 1.0);
        if self.stddev {
            stats.extend(groups::reduce(&values, &groups, STD, 1.0));
        }
        Mat::from_numpy(&out, &stats)
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let (mean, std) = self.gpu.ready()?;
        let (groups, out) = self.plan(&numpy_shape(bottom.dims, bottom.shape()));
        let top = alloc_numpy(rec, &out, bottom)?;
        // nothing is read from the affine binding of a reduction
        mean.record(rec, (bottom, &top, bottom), &groups, GroupExtras::default())?;
        if self.stddev {
            let extras = GroupExtras {
                dst_offset: groups.count(),
                ..GroupExtras::default()
            };
            std.record(rec, (bottom, &top, bottom), &groups, extras)?;
        }
        Ok(top)
    }
}
