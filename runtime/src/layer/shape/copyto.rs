//! CopyTo: `0=woffset 1=hoffset 13=doffset 2=coffset`, or `9=starts 11=axes` (numpy axes; a
//! start of -233 is 0, negative ones count from the end). The first blob with the second
//! written into it at those offsets; the second counts its missing axes as 1 along ncnn's
//! `w, h, d, c` (a 2-D blob lands in one channel). A second blob of the first's shape is the
//! output itself.

use crate::error::{InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::strided_copy::{CopyExtras, CopyMode, StridedCopy};
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat, Strided};

/// One blob written into another.
#[derive(Default)]
pub struct CopyTo {
    /// Offsets along w, h, d, c.
    offset: [i32; 4],
    starts: Vec<i32>,
    axes: Vec<i32>,
    gpu: Option<StridedCopy>,
}

impl CopyTo {
    /// The offsets (c, d, h, w) in the first blob of `dims` and `[w, h, d, c]`.
    fn offsets(&self, dims: u8, [w, h, d, c]: [usize; 4]) -> [i64; 4] {
        let [wo, ho, d_o, co] = self.offset.map(i64::from);
        if self.starts.is_empty() {
            return [co, d_o, ho, wo];
        }
        // numpy axis k of this blob as a place in (c, d, h, w), and its extent
        let places: &[(usize, usize)] = match dims {
            1 => &[(3, w)],
            2 => &[(2, h), (3, w)],
            3 => &[(0, c), (2, h), (3, w)],
            _ => &[(0, c), (1, d), (2, h), (3, w)],
        };
        let mut out = [0i64; 4];
        for (i, start) in self.starts.iter().enumerate() {
            let axis = match self.axes.get(i) {
                Some(&a) if a < 0 => a + i32::from(dims),
                Some(&a) => a,
                None => i as i32,
            };
            if let Some(&(place, extent)) = usize::try_from(axis).ok().and_then(|a| places.get(a)) {
                let s = i64::from(if *start == -233 { 0 } else { *start });
                out[place] = if s >= 0 { s } else { extent as i64 + s };
            }
        }
        out
    }

    /// The view of the second blob's place in the first (both of `[w, h, d, c]` with their
    /// dims), checked to lie inside it.
    fn place(&self, a: BlobShape, b: [usize; 4]) -> Result<Strided> {
        let [w, h, d, c] = a.shape;
        let off = self.offsets(a.dims, a.shape);
        let full = [c, d, h, w];
        let part = [b[3], b[2], b[1], b[0]];
        let mut view = Strided::contiguous(&full);
        for k in 0..4 {
            if off[k] < 0 || off[k] + part[k] as i64 > full[k] as i64 {
                return Err(InputError::Range {
                    what: "CopyTo's second blob",
                    start: off[k],
                    len: part[k] as i64,
                    extent: full[k],
                }
                .into());
            }
            view = view.narrow(k, off[k] as usize, part[k]);
        }
        Ok(view)
    }
}

fn two<T>(bottoms: &[T]) -> Result<(&T, &T)> {
    match bottoms {
        [a, b] => Ok((a, b)),
        _ => Err(InputError::Count {
            got: bottoms.len(),
            expected: "2 (the blob and what goes into it)",
        }
        .into()),
    }
}

impl Layer for CopyTo {
    fn support(&self) -> Support {
        Support::MANY.gpu_pack1(self.gpu.is_some()).gpu_4d()
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.offset = [pd.int(0, 0), pd.int(1, 0), pd.int(13, 0), pd.int(2, 0)];
        self.starts = pd.ints(9);
        self.axes = pd.ints(11);
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = StridedCopy::when(gpu, CopyMode::Copy)?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        two(bottoms).is_ok_and(|(a, b)| a == b || self.place(*a, b.shape).is_ok())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let (a, b) = two(bottoms)?;
        if a.dims == b.dims && a.shape() == b.shape() {
            return Ok(vec![b.clone()]);
        }
        let view = self.place(a.blob_shape(), b.shape())?;
        let mut values = a.to_values();
        view.scatter(&mut values, &b.to_values())?;
        Ok(vec![Mat::from_numpy(&a.numpy_shape(), &values)?])
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let (a, b) = two(bottoms)?;
        if a.dims == b.dims && a.shape() == b.shape() {
            return Ok(vec![b.clone()]);
        }
        let to = self.place(a.blob_shape(), b.shape())?;
        let top = a.record_copy(rec)?;
        // the second blob's values in order, over the box's shape
        let from = Strided::contiguous(&to.shape);
        self.gpu
            .ready()?
            .record(rec, (b, &from), (&top, &to), CopyExtras::default())?;
        Ok(vec![top])
    }
}
