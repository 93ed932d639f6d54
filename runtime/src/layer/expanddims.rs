//! ExpandDims: `3=axes` (numpy axes of the output, negative from its end): an axis of size 1
//! inserted at each. As in ncnn, axes outside the output are ignored (the input's axes fill
//! the other places from the innermost, ones before them), and a blob that would pass 4 dims
//! stays as it is.

use crate::error::Result;
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::gather::{Gather, GatherMap, gather_for, reshape_numpy};
use crate::layer::params::ParamDict;
use crate::layer::pipelines::DeviceSide;
use crate::layer::run_options::RunOptions;
use crate::layer::squeeze::in_range;
use crate::layer::view::{from_numpy_shape, numpy_shape};
use crate::tensor::{GpuMat, Mat};

/// Inserts axes of size 1.
#[derive(Default)]
pub struct ExpandDims {
    axes: Vec<i32>,
    gpu: Option<Gather>,
}

impl ExpandDims {
    /// The numpy shape after inserting the axes into one of `dims` and `[w, h, d, c]`.
    fn expanded(&self, dims: u8, shape: [usize; 4]) -> Vec<usize> {
        let np = numpy_shape(dims, shape);
        let out = np.len() + self.axes.len();
        if out > 4 {
            return np;
        }
        let mut new = vec![false; out];
        for a in self.axes.iter().filter_map(|&a| in_range(a, out)) {
            new[a] = true;
        }
        let slots = new.iter().filter(|n| !**n).count();
        let mut rest = std::iter::repeat_n(1, slots.saturating_sub(np.len())).chain(np);
        new.iter()
            .map(|n| if *n { 1 } else { rest.next().unwrap_or(1) })
            .collect()
    }
}

impl Layer for ExpandDims {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some())
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.axes = pd.ints(3);
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = gather_for(gpu, GatherMap::Reshape)?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[(u8, [usize; 4])]) -> bool {
        bottoms
            .iter()
            .all(|(dims, shape)| *dims <= 3 && self.expanded(*dims, *shape).len() <= 3)
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let (dims, shape) = from_numpy_shape(&self.expanded(bottom.dims, bottom.shape()))?;
        bottom.reshape(dims, shape)
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let np = self.expanded(bottom.dims, bottom.shape());
        reshape_numpy(rec, self.gpu.ready()?, bottom, &np)
    }
}
