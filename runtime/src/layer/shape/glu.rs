//! GLU: `0=axis` (negative from the end; 1-D blobs ignore it). The axis is halved: the first
//! half times the sigmoid of the second (an odd last value is dropped, as in ncnn).

use crate::error::{InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::grain::GRAIN;
use crate::layer::shared::kernels;
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::strided_copy::{CopyExtras, CopyMode, StridedCopy, alloc_numpy};
use crate::layer::shared::view::{numpy_shape, positive_axis_or_only};
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat, Strided};
use rayon::prelude::*;

/// Gated linear unit.
#[derive(Default)]
pub struct GLU {
    axis: i32,
    gpu: Option<StridedCopy>,
}

impl GLU {
    /// The view of the first half in a blob of numpy shape `np`, the distance to the gate
    /// values and the output's shape.
    fn plan(&self, np: &[usize]) -> Result<(Strided, isize, Vec<usize>)> {
        let axis = positive_axis_or_only(self.axis, np.len())?;
        let half = np[axis] / 2;
        if half == 0 {
            return Err(InputError::Output {
                what: "GLU halves an axis of one value",
                shape: np.to_vec(),
            }
            .into());
        }
        let all = Strided::contiguous(np);
        let second = half as isize * all.strides[axis];
        let view = all.narrow(axis, 0, half);
        let out = view.shape.clone();
        Ok((view, second, out))
    }
}

impl Layer for GLU {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some()).gpu_4d()
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.axis = pd.int(0, 0);
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = StridedCopy::when(gpu, CopyMode::Glu)?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms
            .iter()
            .all(|BlobShape { dims, shape: s }| self.plan(&numpy_shape(*dims, *s)).is_ok())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let (view, second, out) = self.plan(&bottom.numpy_shape())?;
        let values = bottom.to_values();
        let mut a = view.gather(&values)?;
        let gate = Strided {
            offset: view.offset + second as usize,
            ..view
        };
        let b = gate.gather(&values)?;
        a.par_chunks_mut(GRAIN)
            .zip(b.par_chunks(GRAIN))
            .for_each(|(x, g)| kernels::zip_with(x, g, |x, g| x / (1.0 + kernels::exp(-g))));
        Mat::from_numpy(&out, &a)
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let (view, second, out) = self.plan(&numpy_shape(bottom.dims, bottom.shape()))?;
        let top = alloc_numpy(rec, &out, bottom)?;
        let to = Strided::contiguous(&out);
        let extras = CopyExtras { second, value: 0.0 };
        self.gpu
            .ready()?
            .record(rec, (bottom, &view), (&top, &to), extras)?;
        Ok(top)
    }
}
