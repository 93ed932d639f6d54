//! Layers whose output is a strided view of their input (PixelShuffle, Reorg, Tile, Flip,
//! DeepCopy): a [`ViewRule`] says which view and which output shape, [`ViewLayer`] reads it on
//! the CPU ([`Strided::gather`]) and on the GPU (the strided copy shader).

use crate::error::Result;
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::strided_copy::{CopyMode, StridedCopy};
use crate::layer::shared::view::numpy_shape;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat, Strided};

/// The view of a blob's values (numpy order) that a layer outputs.
pub trait ViewRule: Default + Send + Sync + 'static {
    /// The rule with its parameters (ncnn's ids); out-of-range values are errors here.
    fn from_params(pd: &ParamDict) -> Result<Self>;

    /// The view over the values of a blob of numpy shape `np`, and the numpy shape the
    /// output gives its values; an error for a blob the rule does not fit.
    fn view(&self, np: &[usize]) -> Result<(Strided, Vec<usize>)>;
}

/// The layer applying view rule `R`.
#[derive(Default)]
pub struct ViewLayer<R> {
    rule: R,
    gpu: Option<StridedCopy>,
}

impl<R: ViewRule> Layer for ViewLayer<R> {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some()).gpu_4d()
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.rule = R::from_params(pd)?;
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = StridedCopy::when(gpu, CopyMode::Copy)?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms
            .iter()
            .all(|BlobShape { dims, shape }| self.rule.view(&numpy_shape(*dims, *shape)).is_ok())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let (view, out) = self.rule.view(&bottom.numpy_shape())?;
        Mat::from_numpy(&out, &view.gather(&bottom.to_values())?)
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let (view, out) = self.rule.view(&numpy_shape(bottom.dims, bottom.shape()))?;
        self.gpu.ready()?.gather(rec, bottom, &view, &out)
    }
}
