//! Permute: `0=order_type`, ncnn's axis orders for 2-D, 3-D and 4-D blobs.

use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shape::gather::{Gather, GatherMap, gather_for};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::view::{numpy_shape, space_axis, to_space};
use crate::tensor::{GpuMat, Mat, MatData, Strided};

/// ncnn's 4-D `order_type`s: the output's axes innermost first, named by the input axis each
/// comes from. The 3-D orders are the first six with `c` for `d`; the 2-D ones the first two.
const ORDERS_4D: [&str; 24] = [
    "whdc", "hwdc", "wdhc", "dwhc", "hdwc", "dhwc", "whcd", "hwcd", "wchd", "cwhd", "hcwd", "chwd",
    "wdch", "dwch", "wcdh", "cwdh", "dcwh", "cdwh", "hdcw", "dhcw", "hcdw", "chdw", "dchw", "cdhw",
];

/// The numpy-axis permutation of `order_type` for a `dims`-D blob: output axis `k` reads
/// input axis `perm[k]`.
fn permutation(order_type: i32, dims: usize) -> Result<Vec<usize>> {
    let count = match dims {
        1 => 1,
        2 => 2,
        3 => 6,
        _ => 24,
    };
    if !(0..count).contains(&order_type) {
        return Err(Error::BadParam {
            id: 0,
            value: format!("{order_type} (a {dims}-D blob has {count} orders)"),
            allowed: "an order_type of the blob's dims",
        });
    }
    let order = ORDERS_4D[order_type as usize];
    // numpy axis of each named input axis
    let axis_of = |ch: char| match (dims, ch) {
        (3, 'd') => 0,
        (3, 'h') => 1,
        (3, 'w') => 2,
        (4, 'c') => 0,
        (4, 'd') => 1,
        (4, 'h') => 2,
        (4, 'w') => 3,
        (2, 'h') => 0,
        _ => dims - 1,
    };
    Ok(order
        .chars()
        .take(dims)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .map(axis_of)
        .collect())
}

/// Permute: `0=order_type`.
#[derive(Default)]
pub struct Permute {
    order_type: i32,
    gpu: Option<Gather>,
}

impl Layer for Permute {
    fn support(&self) -> Support {
        // a packed input is read where it lies (its scalar view), so no repacking before
        match &self.gpu {
            Some(g) if g.takes_packed() => Support::ONE_BLOB.gpu(true).gpu_any_packing().gpu_4d(),
            gpu => Support::ONE_BLOB.gpu_pack1(gpu.is_some()).gpu_4d(),
        }
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = gather_for(gpu, GatherMap::shift([0; 4]))?;
        Ok(())
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let gather = self.gpu.ready()?;
        let dims = bottom.dims;
        let shape = numpy_shape(dims, bottom.shape());
        let perm = permutation(self.order_type, shape.len())?;
        let out: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
        // input axis perm[k] becomes output axis k: the source mat axis of the one reads the
        // output mat coordinate of the other
        let mut space_perm = [0, 1, 2, 3];
        for (k, &a) in perm.iter().enumerate() {
            if let (Some(from), Some(to)) = (space_axis(dims, a), space_axis(dims, k)) {
                space_perm[from] = to;
            }
        }
        let map = GatherMap::Shift {
            perm: space_perm,
            offset: [0; 4],
            value: 0.0,
        };
        gather.record(rec, bottom, dims, to_space(dims, &out, 1), map)
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.order_type = pd.int_in(0, 0, 0..=23, "order_type 0 to 23")?;
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let shape = bottom.numpy_shape();
        let perm = permutation(self.order_type, shape.len())?;
        match (&bottom.data, bottom.elempack) {
            // read where the values lie, write straight into the output's channels
            (MatData::F32(values), 1) => Strided::of_mat(bottom)
                .permute(&perm)
                .gather_into_mat(values),
            _ => Strided::contiguous(&shape)
                .permute(&perm)
                .gather_mat(&bottom.to_values()),
        }
    }
}
