//! Crop: a box of a blob, given by offsets and sizes, by numpy-style starts/ends (numbers, or
//! shape expressions over the inputs), or by a reference blob's shape.

use crate::error::{Error, InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::Packs;
use crate::layer::contract::{GpuSetup, Implements, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shape::gather::{Gather, box_packs, record_box};
use crate::layer::shared::expression::{Extents, eval_list, inputs_read};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::view::{numpy_shape, positive_axis};
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat, Strided};

/// Crop: offsets `0=w 1=h 13=d 2=c`, sizes `3=w 4=h 14=d 5=c` (0 or -233: the rest) and end
/// margins `6=w 7=h 15=d 8=c`; or numpy-style `9=starts 10=ends 11=axes`, or the same as
/// expressions `19=starts 20=ends 21=axes` over the inputs' extents (`"2,-(0w,2)"`; inputs
/// after the first only give extents); or, with no sizes, a second input whose shape is the
/// output's.
#[derive(Default)]
pub struct Crop {
    /// Offsets, sizes and end margins per axis, as `[w, h, d, c]`.
    offset: [i32; 4],
    size: [i32; 4],
    margin: [i32; 4],
    starts: Vec<i32>,
    ends: Vec<i32>,
    axes: Vec<i32>,
    /// `19=`, `20=`, `21=`: starts, ends and axes as expressions.
    exprs: Option<[String; 3]>,
    reference: bool,
    gpu: Option<Gather>,
}

/// numpy axis `k` of a `dims`-D blob as an index into `[w, h, d, c]`.
fn whdc_index(dims: usize, k: usize) -> usize {
    match (dims, k) {
        (1, _) => 0,
        (2, 0) => 1,
        (2, _) => 0,
        (3, 0) => 3,
        (3, 1) => 1,
        (3, _) => 0,
        (_, k) => 3 - k,
    }
}

impl Crop {
    /// `(start, len)` per numpy axis of a blob of `shape`.
    fn roi(
        &self,
        shape: &[usize],
        inputs: &[Extents],
        reference: Option<BlobShape>,
    ) -> Result<Vec<(usize, usize)>> {
        let dims = shape.len();
        let mut roi: Vec<(usize, usize)> = shape.iter().map(|&n| (0, n)).collect();
        let evaluated;
        let (starts, ends, axes) = match &self.exprs {
            Some([s, e, a]) => {
                let axes = if a.is_empty() {
                    Vec::new()
                } else {
                    eval_list(a, inputs)?
                };
                evaluated = (eval_list(s, inputs)?, eval_list(e, inputs)?, axes);
                (&evaluated.0, &evaluated.1, &evaluated.2)
            }
            None => (&self.starts, &self.ends, &self.axes),
        };
        if !starts.is_empty() && !ends.is_empty() {
            let axes: Vec<i32> = if axes.is_empty() {
                (0..dims as i32).collect()
            } else {
                axes.clone()
            };
            for (i, &a) in axes.iter().enumerate() {
                let axis = positive_axis(a, dims)?;
                let n = shape[axis] as i64;
                let (mut s, mut e) = (
                    i64::from(*starts.get(i).unwrap_or(&0)),
                    i64::from(*ends.get(i).unwrap_or(&-233)),
                );
                if s == -233 {
                    s = 0;
                }
                if e == -233 {
                    e = n;
                }
                let start = if s >= 0 { s } else { n + s }.clamp(0, n);
                let end = n.min(if e > 0 { e } else { n + e });
                roi[axis] = (start as usize, (end - start).max(0) as usize);
            }
            return Ok(roi);
        }
        for (k, r) in roi.iter_mut().enumerate() {
            let j = whdc_index(dims, k);
            let n = shape[k] as i64;
            let off = i64::from(self.offset[j]);
            if off < 0 || off > n {
                return Err(InputError::Range {
                    what: "crop",
                    start: off,
                    len: 0,
                    extent: n as usize,
                }
                .into());
            }
            let rest = n - off - i64::from(self.margin[j]);
            let len = match reference {
                Some(BlobShape {
                    dims: rdims,
                    shape: rshape,
                }) if usize::from(rdims) == dims || j < 3 => rshape[j] as i64,
                Some(_) => rest,
                None => match self.size[j] {
                    0 | -233 => rest,
                    s => i64::from(s).min(rest),
                },
            };
            if len < 0 || off + len > n {
                return Err(InputError::Range {
                    what: "crop",
                    start: off,
                    len,
                    extent: n as usize,
                }
                .into());
            }
            *r = (off as usize, len as usize);
        }
        Ok(roi)
    }

    /// The reference blob's shape where the second input is one (not an expression's).
    fn reference_of<'m, M>(&self, rest: &'m [M]) -> Option<&'m M> {
        rest.first().filter(|_| self.exprs.is_none())
    }

    fn crop(&self, bottoms: &[Mat]) -> Result<Mat> {
        let (bottom, rest) = bottoms.split_first().ok_or(InputError::Count {
            got: 0,
            expected: "1 or more",
        })?;
        let shape = bottom.numpy_shape();
        let mut view = Strided::contiguous(&shape);
        let inputs: Vec<Extents> = bottoms.iter().map(Mat::shape).collect();
        let reference = self.reference_of(rest).map(|m| m.blob_shape());
        for (axis, (start, len)) in self
            .roi(&shape, &inputs, reference)?
            .into_iter()
            .enumerate()
        {
            view = view.narrow(axis, start, len);
        }
        view.gather_mat(&bottom.to_values())
    }
}

impl Crop {
    fn crop_gpu(&self, rec: &mut Recorder<'_>, bottoms: &[GpuMat]) -> Result<GpuMat> {
        let gather = self.gpu.ready()?;
        let (bottom, rest) = bottoms.split_first().ok_or(InputError::Count {
            got: 0,
            expected: "1 or more",
        })?;
        let shape = numpy_shape(bottom.dims, bottom.shape());
        let inputs: Vec<Extents> = bottoms.iter().map(GpuMat::shape).collect();
        let reference = self.reference_of(rest).map(|m| m.blob_shape());
        let roi = self.roi(&shape, &inputs, reference)?;
        record_box(rec, gather, bottom, &roi)
    }
}

impl Layer for Crop {
    fn support(&self) -> Support {
        Support {
            one_blob_only: !self.reference,
            ..Support::ONE_BLOB.gpu(self.gpu.is_some()).gpu_4d()
        }
    }

    fn gpu_packs(&self, bottoms: &[BlobShape]) -> Option<Packs> {
        // packed where the box cuts the packed axis at whole blocks
        let (&BlobShape { dims, shape }, rest) = bottoms.split_first()?;
        let inputs: Vec<Extents> = bottoms.iter().map(|b| b.shape).collect();
        let reference = self.reference_of(rest).copied();
        let roi = self
            .roi(&numpy_shape(dims, shape), &inputs, reference)
            .ok()?;
        // or any packing of 3-D and 4-D inputs where the gather reads packed mats: a cut
        // inside a block then reads them as they are into a pack1 output
        let packs = box_packs(&roi[..1]);
        let gathers_packed = dims >= 3 && self.gpu.as_ref().is_some_and(Gather::takes_packed);
        Some(match packs {
            Packs::ONE if gathers_packed => Packs::UP_TO_4,
            packs => packs,
        })
    }

    fn implements(&self) -> Implements {
        Implements {
            forward: true,
            forward_many: true,
            forward_gpu: true,
            forward_gpu_many: true,
            ..Implements::default()
        }
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = Gather::for_boxes(gpu)?;
        Ok(())
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        self.crop_gpu(rec, std::slice::from_ref(bottom))
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        Ok(vec![self.crop_gpu(rec, bottoms)?])
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.offset = [pd.int(0, 0), pd.int(1, 0), pd.int(13, 0), pd.int(2, 0)];
        self.size = [pd.int(3, 0), pd.int(4, 0), pd.int(14, 0), pd.int(5, 0)];
        self.margin = [pd.int(6, 0), pd.int(7, 0), pd.int(15, 0), pd.int(8, 0)];
        self.starts = pd.ints(9);
        self.ends = pd.ints(10);
        self.axes = pd.ints(11);
        if self.offset.iter().chain(&self.margin).any(|&v| v < 0) {
            return Err(Error::BadParam {
                id: 0,
                value: format!("offsets {:?}, margins {:?}", self.offset, self.margin),
                allowed: "offsets and margins of at least 0",
            });
        }
        let expr = |id| pd.string(id).unwrap_or("").to_string();
        let exprs = [expr(19), expr(20), expr(21)];
        let numpy = !self.starts.is_empty() && !self.ends.is_empty();
        let numpy_exprs = !exprs[0].is_empty() && !exprs[1].is_empty();
        // ncnn reads more than one input when an expression names input 1 or later
        let expr_inputs = exprs.iter().map(|e| inputs_read(e)).max().unwrap_or(0);
        self.reference = (!numpy && !numpy_exprs && self.size == [0; 4] && self.margin == [0; 4])
            || expr_inputs > 1;
        self.exprs = numpy_exprs.then_some(exprs);
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        self.crop(std::slice::from_ref(bottom))
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        Ok(vec![self.crop(bottoms)?])
    }
}
