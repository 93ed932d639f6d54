//! Reshape: `0=w 1=h 11=d 2=c` (-1 inferred, 0 kept): a new shape for the same values.

use crate::error::{Error, Result, TensorError};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::gather::{Gather, GatherMap, gather_for, reshape};
use crate::layer::params::ParamDict;
use crate::layer::pipelines::DeviceSide;
use crate::layer::run_options::RunOptions;
use crate::layer::view::{count, to_view};
use crate::tensor::{GpuMat, Mat};

/// A new shape for the same values (ncnn's Reshape: `0=w 1=h 11=d 2=c`, -1 inferred, 0 kept).
#[derive(Default)]
pub struct Reshape {
    target: [i32; 4],
    dims: u8,
    gpu: Option<Gather>,
}

impl Layer for Reshape {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        // GPU mats are at most 3-D
        self.gpu = if self.dims <= 3 {
            gather_for(gpu, GatherMap::Reshape)?
        } else {
            None
        };
        Ok(())
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let gather = self.gpu.ready()?;
        let [w, h, _, c] = self.target_shape(bottom.shape())?;
        let numpy = match self.dims {
            1 => vec![w],
            2 => vec![h, w],
            _ => vec![c, h, w],
        };
        reshape(
            rec,
            gather,
            bottom,
            self.dims,
            to_view(self.dims, &numpy, 1),
        )
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.target = [
            pd.int(0, -233),
            pd.int(1, -233),
            pd.int(11, -233),
            pd.int(2, -233),
        ];
        self.dims = match self.target {
            [_, -233, _, -233] => 1,
            [_, _, _, -233] => 2,
            [_, _, -233, _] => 3,
            _ => 4,
        };
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let shape = self.target_shape(bottom.shape())?;
        bottom.reshape(self.dims, shape)
    }
}

impl Reshape {
    /// The `[w, h, d, c]` a blob of `src` becomes (0 keeps an extent, -1 infers one).
    fn target_shape(&self, src: [usize; 4]) -> Result<[usize; 4]> {
        let total = count(src);
        let mut shape = [1usize; 4];
        let mut infer = None;
        let used: &[usize] = match self.dims {
            1 => &[0],
            2 => &[0, 1],
            3 => &[0, 1, 3],
            _ => &[0, 1, 2, 3],
        };
        for &i in used {
            shape[i] = match self.target[i] {
                -1 => {
                    infer = Some(i);
                    1
                }
                0 => src[i],
                v if v > 0 => v as usize,
                v => {
                    return Err(Error::BadParam {
                        id: [0, 1, 11, 2][i],
                        value: v.to_string(),
                        allowed: "an extent of at least -1 (-1 inferred, 0 kept)",
                    });
                }
            };
        }
        let known: usize = shape.iter().product();
        if let Some(i) = infer {
            if known == 0 || !total.is_multiple_of(known) {
                return Err(TensorError::Reshape {
                    values: total,
                    dims: self.dims,
                    shape: shape.to_vec(),
                }
                .into());
            }
            shape[i] = total / known;
        }
        Ok(shape)
    }
}
