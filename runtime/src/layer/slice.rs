//! Slice: one blob into several along an axis (`0=slices` sizes, -233 an equal share of the
//! rest; `1=axis`; `2=indices`, one per output, each output ending at its index but the last,
//! which takes the rest).

use crate::error::{Error, InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::gather::{Gather, GatherMap, gather_for, record_box};
use crate::layer::params::ParamDict;
use crate::layer::pipelines::DeviceSide;
use crate::layer::run_options::RunOptions;
use crate::layer::view::{numpy_shape, positive_axis};
use crate::tensor::{GpuMat, Mat, Strided};

/// Slice: `0=slices` (sizes, -233 = an equal share of the rest), `1=axis`, `2=indices`
/// (boundaries, the alternative to sizes).
#[derive(Default)]
pub struct Slice {
    slices: Vec<i32>,
    indices: Vec<i32>,
    axis: i32,
    gpu: Option<Gather>,
}

impl Slice {
    /// `(start, len)` of each part along an axis of `extent`.
    fn parts(&self, extent: usize) -> Result<Vec<(usize, usize)>> {
        let n = extent as i64;
        let mut out = Vec::new();
        if !self.indices.is_empty() {
            // one output per index: each ends at its index but the last, which takes the rest
            let mut start = 0i64;
            let last = self.indices.len() - 1;
            let bounds = self.indices[..last].iter().map(|&i| {
                let i = i64::from(i);
                if i < 0 { i + n } else { i.min(n) }
            });
            for end in bounds.chain([n]) {
                if end < start {
                    return Err(InputError::Range {
                        what: "slice",
                        start,
                        len: end - start,
                        extent,
                    }
                    .into());
                }
                out.push((start as usize, (end - start) as usize));
                start = end;
            }
            return Ok(out);
        }
        let mut start = 0i64;
        let count = self.slices.len() as i64;
        for (i, &s) in self.slices.iter().enumerate() {
            let len = if s == -233 {
                (n - start) / (count - i as i64)
            } else {
                i64::from(s)
            };
            if len < 0 || start + len > n {
                return Err(InputError::Range {
                    what: "slice",
                    start,
                    len,
                    extent,
                }
                .into());
            }
            out.push((start as usize, len as usize));
            start += len;
        }
        Ok(out)
    }
}

impl Layer for Slice {
    fn support(&self) -> Support {
        Support::MANY.gpu_pack1(self.gpu.is_some())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = gather_for(gpu, GatherMap::shift([0; 3]))?;
        Ok(())
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let gather = self.gpu.ready()?;
        let [bottom] = bottoms else {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "1",
            }
            .into());
        };
        let shape = numpy_shape(bottom.dims, bottom.shape());
        let axis = positive_axis(self.axis, shape.len())?;
        let whole: Vec<(usize, usize)> = shape.iter().map(|&n| (0, n)).collect();
        self.parts(shape[axis])?
            .into_iter()
            .map(|part| {
                let mut roi = whole.clone();
                roi[axis] = part;
                record_box(rec, gather, bottom, &roi)
            })
            .collect()
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.slices = pd.ints(0);
        self.axis = pd.int(1, 0);
        self.indices = pd.ints(2);
        if self.slices.is_empty() && self.indices.is_empty() {
            return Err(Error::BadParam {
                id: 0,
                value: "[]".into(),
                allowed: "slices (0) or indices (2), one of them not empty",
            });
        }
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let [bottom] = bottoms else {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "1",
            }
            .into());
        };
        let shape = bottom.numpy_shape();
        let axis = positive_axis(self.axis, shape.len())?;
        let all = Strided::contiguous(&shape);
        let values = bottom.to_values();
        self.parts(shape[axis])?
            .into_iter()
            .map(|(start, len)| all.clone().narrow(axis, start, len).gather_mat(&values))
            .collect()
    }
}
