//! Squeeze: `0=squeeze_w 1=squeeze_h 11=squeeze_d 2=squeeze_c` (flags), or `3=axes` (numpy
//! axes, negative from the end; as in ncnn, axes the blob does not have are ignored): those
//! axes of size 1 go; squeezing every axis leaves `[1]`.

use crate::error::Result;
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::gather::{Gather, GatherMap, gather_for, reshape_numpy};
use crate::layer::params::ParamDict;
use crate::layer::pipelines::DeviceSide;
use crate::layer::run_options::RunOptions;
use crate::layer::view::{from_numpy_shape, numpy_shape};
use crate::tensor::{GpuMat, Mat};

/// Drops axes of size 1.
#[derive(Default)]
pub struct Squeeze {
    /// w, h, d, c flags (used when `axes` is empty).
    flags: [bool; 4],
    axes: Vec<i32>,
    gpu: Option<Gather>,
}

impl Squeeze {
    /// The numpy shape after squeezing one of `dims` and `[w, h, d, c]`.
    fn squeezed(&self, dims: u8, shape: [usize; 4]) -> Vec<usize> {
        let np = numpy_shape(dims, shape);
        let n = np.len();
        let mut drop = vec![false; n];
        if self.axes.is_empty() {
            // the flags name w, h, d, c: numpy axes from the end
            let [w, h, d, c] = self.flags;
            let named: &[bool] = match dims {
                1 => &[w],
                2 => &[h, w],
                3 => &[c, h, w],
                _ => &[c, d, h, w],
            };
            drop.copy_from_slice(named);
        } else {
            for a in self.axes.iter().filter_map(|&a| in_range(a, n)) {
                drop[a] = true;
            }
        }
        let kept: Vec<usize> = np
            .iter()
            .zip(&drop)
            .filter(|(size, d)| !(**d && **size == 1))
            .map(|(size, _)| *size)
            .collect();
        if kept.is_empty() { vec![1] } else { kept }
    }
}

/// `axis` (negative from the end) of `n` axes, when there is such an axis.
pub(crate) fn in_range(axis: i32, n: usize) -> Option<usize> {
    let a = if axis < 0 { axis + n as i32 } else { axis };
    usize::try_from(a).ok().filter(|a| *a < n)
}

impl Layer for Squeeze {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some())
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.flags = [0, 1, 11, 2].map(|id| pd.int(id, 0) != 0);
        self.axes = pd.ints(3);
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = gather_for(gpu, GatherMap::Reshape)?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[(u8, [usize; 4])]) -> bool {
        bottoms.iter().all(|(dims, _)| *dims <= 3)
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let (dims, shape) = from_numpy_shape(&self.squeezed(bottom.dims, bottom.shape()))?;
        bottom.reshape(dims, shape)
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let np = self.squeezed(bottom.dims, bottom.shape());
        reshape_numpy(rec, self.gpu.ready()?, bottom, &np)
    }
}
