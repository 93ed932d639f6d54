//! Layers that only give their input a new shape (Squeeze, ExpandDims): a [`ShapeRule`] says
//! which, [`ShapeLayer`] runs it on the CPU (a reshape of the mat) and on the GPU (the gather
//! family's reshape, 1-D to 4-D).

use crate::error::Result;
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shape::gather::{Gather, GatherMap, gather_for, reshape_numpy};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::view::from_numpy_shape;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat};

/// The new numpy shape of a blob, from the layer's params.
pub trait ShapeRule: Default + Send + Sync + 'static {
    /// The rule with its parameters (ncnn's ids).
    fn from_params(pd: &ParamDict) -> Result<Self>;

    /// The numpy shape (outermost first) the blob of `dims` and `[w, h, d, c]` takes.
    fn shape(&self, dims: u8, shape: [usize; 4]) -> Vec<usize>;
}

/// The layer applying shape rule `R`.
#[derive(Default)]
pub struct ShapeLayer<R> {
    rule: R,
    gpu: Option<Gather>,
}

impl<R: ShapeRule> Layer for ShapeLayer<R> {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some()).gpu_4d()
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.rule = R::from_params(pd)?;
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = gather_for(gpu, GatherMap::Reshape)?;
        Ok(())
    }

    /// GPU mats are 1-D to 4-D, before and after.
    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms
            .iter()
            .all(|BlobShape { dims, shape }| self.rule.shape(*dims, *shape).len() <= 4)
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let BlobShape { dims, shape } =
            from_numpy_shape(&self.rule.shape(bottom.dims, bottom.shape()))?;
        bottom.reshape(dims, shape)
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let np = self.rule.shape(bottom.dims, bottom.shape());
        reshape_numpy(rec, self.gpu.ready()?, bottom, &np)
    }
}

/// `axis` (negative from the end) of `n` axes, when there is such an axis.
pub(crate) fn in_range(axis: i32, n: usize) -> Option<usize> {
    let a = if axis < 0 { axis + n as i32 } else { axis };
    usize::try_from(a).ok().filter(|a| *a < n)
}
