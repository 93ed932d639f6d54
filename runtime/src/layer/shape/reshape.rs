//! Reshape: `0=w 1=h 11=d 2=c` (-1 inferred, 0 kept), or `6=` the same as a shape expression
//! over the inputs' extents (`"0w,0h,*(0d,2),-1"`, ncnn's w, h, d, c order): a new shape for the
//! same values.

use crate::error::{Error, InputError, Result, TensorError};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shape::gather::{Gather, GatherMap, gather_for, reshape};
use crate::layer::shared::expression::{Extents, eval_list, inputs_read};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::view::{count, to_space};
use crate::tensor::{GpuMat, Mat};

/// A new shape for the same values (ncnn's Reshape: `0=w 1=h 11=d 2=c`, -1 inferred, 0 kept,
/// or `6=` a shape expression).
#[derive(Default)]
pub struct Reshape {
    target: [i32; 4],
    dims: u8,
    /// `6=`: the shape as an expression, and how many inputs it reads.
    expr: Option<(String, usize)>,
    gpu: Option<Gather>,
}

/// `[w, h, d, c]` (-233 absent) from an expression's list in ncnn's order.
fn whdc(list: &[i32]) -> [i32; 4] {
    match *list {
        [w] => [w, -233, -233, -233],
        [w, h] => [w, h, -233, -233],
        [w, h, c] => [w, h, -233, c],
        [w, h, d, c] => [w, h, d, c],
        _ => [-233; 4],
    }
}

impl Layer for Reshape {
    fn support(&self) -> Support {
        let one = self.expr.as_ref().is_none_or(|(_, n)| *n <= 1);
        Support {
            one_blob_only: one,
            // one input: in place, so that a blob no other layer reads is relabelled instead
            // of copied (ConvNeXt-tiny's 73 reshapes were 15% of its CPU time at 16 threads);
            // the GPU forward writes a new mat, so the net copies nothing for it
            inplace: one,
            ..Support::ONE_BLOB
                .gpu_pack1(self.gpu.is_some())
                .gpu_4d()
                .gpu_writes_new()
        }
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let bottom = bottoms.first().ok_or(InputError::Count {
            got: 0,
            expected: "1 or more",
        })?;
        let extents: Vec<Extents> = bottoms.iter().map(Mat::shape).collect();
        let shape = self.target_shape(bottom.shape(), &extents)?;
        Ok(vec![bottom.reshape(self.dims, shape)?])
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let bottom = bottoms.first().ok_or(InputError::Count {
            got: 0,
            expected: "1 or more",
        })?;
        let extents: Vec<Extents> = bottoms.iter().map(GpuMat::shape).collect();
        Ok(vec![self.reshape_gpu(rec, bottom, &extents)?])
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = gather_for(gpu, GatherMap::Reshape)?;
        Ok(())
    }

    fn forward_gpu_inplace(&self, blob: &mut GpuMat, rec: &mut Recorder<'_>) -> Result<()> {
        *blob = self.reshape_gpu(rec, blob, &[blob.shape()])?;
        Ok(())
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.target = [
            pd.int(0, -233),
            pd.int(1, -233),
            pd.int(11, -233),
            pd.int(2, -233),
        ];
        self.expr = None;
        if let Some(expr) = pd.string(6).filter(|e| !e.is_empty()) {
            // the number of axes is the list's, as ncnn finds it over empty inputs
            let reads = inputs_read(expr);
            let list = eval_list(expr, &vec![[0; 4]; reads.max(1)])?;
            if !(1..=4).contains(&list.len()) {
                return Err(Error::BadParam {
                    id: 6,
                    value: expr.to_string(),
                    allowed: "a shape of 1 to 4 extents",
                });
            }
            self.target = whdc(&list);
            self.expr = Some((expr.to_string(), reads));
        }
        self.dims = match self.target {
            [_, -233, _, -233] => 1,
            [_, _, _, -233] => 2,
            [_, _, -233, _] => 3,
            _ => 4,
        };
        Ok(())
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &RunOptions) -> Result<()> {
        let shape = self.target_shape(blob.shape(), &[blob.shape()])?;
        blob.reshape_in_place(self.dims, shape)
    }
}

impl Reshape {
    fn reshape_gpu(
        &self,
        rec: &mut Recorder<'_>,
        bottom: &GpuMat,
        extents: &[Extents],
    ) -> Result<GpuMat> {
        let gather = self.gpu.ready()?;
        let shape = self.target_shape(bottom.shape(), extents)?;
        let numpy = crate::layer::shared::view::numpy_shape(self.dims, shape);
        reshape(
            rec,
            gather,
            bottom,
            self.dims,
            to_space(self.dims, &numpy, 1),
        )
    }
}

impl Reshape {
    /// The `[w, h, d, c]` a blob of `src` becomes (0 keeps an extent, -1 infers one), the
    /// expression evaluated over the inputs' `extents` where there is one.
    fn target_shape(&self, src: [usize; 4], extents: &[Extents]) -> Result<[usize; 4]> {
        let target = match &self.expr {
            Some((expr, _)) => whdc(&eval_list(expr, extents)?),
            None => self.target,
        };
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
            shape[i] = match target[i] {
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
