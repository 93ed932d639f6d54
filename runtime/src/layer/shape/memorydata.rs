//! MemoryData: a constant blob stored in the weights (`0=w 1=h 11=d 2=c`, no inputs).

use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::weights::Weights;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat};

/// `[w, h, d, c]` and dims from ncnn's `0=w 1=h 11=d 2=c` parameters (0 = absent).
fn shape_params(pd: &ParamDict) -> BlobShape {
    let g = |id, default| pd.int(id, default).max(0) as usize;
    let (w, h, d, c) = (g(0, 0), g(1, 0), g(11, 0), g(2, 0));
    let dims = if c > 0 && d > 0 {
        4
    } else if c > 0 {
        3
    } else if h > 0 {
        2
    } else {
        1
    };
    BlobShape {
        dims,
        shape: [w.max(1), h.max(1), d.max(1), c.max(1)],
    }
}

/// A constant blob stored in the weights (no inputs).
#[derive(Default)]
pub struct MemoryData {
    dims: u8,
    shape: [usize; 4],
    data: Option<Mat>,
    /// The data on the device (uploaded once), when the net runs the layer there.
    gpu: Option<GpuMat>,
    on_device: bool,
}

impl Layer for MemoryData {
    fn support(&self) -> Support {
        Support {
            // image nets keep 1- and 2-D blobs on the CPU
            vulkan_images: self.dims == 3,
            ..Support::MANY.gpu_pack1(self.on_device).gpu_4d()
        }
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.on_device = gpu.is_some();
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        if let Some(m) = &self.data {
            self.gpu = Some(GpuMat::upload(gpu.ctx, m, gpu.options)?);
        }
        Ok(())
    }

    fn forward_gpu_many(
        &self,
        _bottoms: &[GpuMat],
        _rec: &mut Recorder<'_>,
    ) -> Result<Vec<GpuMat>> {
        let m = self.gpu.ready()?.clone();
        Ok(vec![m])
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        BlobShape {
            dims: self.dims,
            shape: self.shape,
        } = shape_params(pd);
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        let [w, h, d, c] = self.shape;
        let n = match self.dims {
            1 => w,
            2 => w * h,
            3 => w * h * c,
            _ => w * h * d * c,
        };
        let values = weights.load(n, 1)?;
        self.data = Some(Mat::from_shape_values(self.dims, self.shape, &values)?);
        Ok(())
    }

    fn forward_many(&self, _bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let m = self
            .data
            .clone()
            .ok_or(Error::NotLoaded { what: "the data" })?;
        Ok(vec![m])
    }
}
