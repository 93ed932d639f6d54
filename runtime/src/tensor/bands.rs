//! A 3-D device blob in bands of rows, each in a buffer of its own: what a blob past one
//! buffer or binding of the device is (the net's banded forwards make and read them).

use std::ops::Range;

use crate::error::Result;
use crate::gpu::{Context, Recorder};
use crate::tensor::{ElemType, GpuMat, Mat, gpu_cstep};

/// A 3-D blob on the device as bands of rows, each in a buffer of its own.
#[derive(Clone, Debug)]
pub struct Bands {
    /// `[w, h, c]`, channels unpacked.
    pub shape: [usize; 3],
    parts: Vec<BandPart>,
}

/// One band: a forward's output, some of whose rows are the blob's.
#[derive(Clone, Debug)]
pub struct BandPart {
    /// The band's mat.
    pub mat: GpuMat,
    /// The rows of `mat` that are the blob's...
    pub keep: Range<usize>,
    /// ...and which rows of the blob they are.
    pub rows: Range<usize>,
}

impl Bands {
    /// The bands of a blob of `shape` (`[w, h, c]`, channels unpacked).
    pub fn new(shape: [usize; 3], parts: Vec<BandPart>) -> Bands {
        Bands { shape, parts }
    }

    /// How many bands it has.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Whether it has no band.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Its rows `rows` as one new mat (recorded copies), `None` where its bands' rows cannot
    /// be copied (an image, fp16 rows off 4 bytes).
    pub fn record_rows(
        &self,
        rec: &mut Recorder<'_>,
        rows: Range<usize>,
    ) -> Result<Option<GpuMat>> {
        let Some(first) = self.parts.first().map(|p| &p.mat) else {
            return Ok(None);
        };
        if !self.parts.iter().all(|p| p.mat.rows_copyable()) {
            return Ok(None);
        }
        let [w, _, c] = self.shape;
        let p = first.elempack;
        let space = [w, rows.len(), 1, c / p];
        let dst = GpuMat::alloc_format(rec.context(), 3, space, p, (first.options, first.format))?;
        self.record_copy_rows(rec, rows, &dst, 0)?;
        Ok(Some(dst))
    }

    /// A 3-D device mat as one band of all its rows.
    pub fn whole(mat: GpuMat) -> Bands {
        Bands {
            shape: [mat.w, mat.h, mat.c * mat.elempack],
            parts: vec![BandPart {
                keep: 0..mat.h,
                rows: 0..mat.h,
                mat,
            }],
        }
    }

    /// The packing its bands have.
    pub fn elempack(&self) -> usize {
        self.parts.first().map_or(1, |p| p.mat.elempack)
    }

    /// Puts it together on the host (fp32, its packing), band by band.
    pub fn to_host(&self, ctx: &Context) -> Result<Mat> {
        let [w, h, c] = self.shape;
        let pack = self.elempack();
        let mut out = Mat::zeros(3, [w, h, 1, c / pack], pack, ElemType::F32)?;
        for p in &self.parts {
            let band = p.mat.download(ctx)?;
            out.write_rows(&band, p.keep.clone(), p.rows.start)?;
        }
        Ok(out)
    }

    /// Records copying its rows `rows` into `dst` (of its width, channels, packing and
    /// format) from row `at` on.
    pub fn record_copy_rows(
        &self,
        rec: &mut Recorder<'_>,
        rows: Range<usize>,
        dst: &GpuMat,
        at: usize,
    ) -> Result<()> {
        for p in &self.parts {
            let (start, end) = (rows.start.max(p.rows.start), rows.end.min(p.rows.end));
            if start < end {
                let from = p.keep.start + start - p.rows.start;
                p.mat.record_copy_rows(
                    rec,
                    from..from + end - start,
                    dst,
                    at + start - rows.start,
                )?;
            }
        }
        Ok(())
    }
    /// The bands put together in one device mat (recorded copies), where it fits one buffer
    /// and binding of the device.
    pub fn record_one(&self, rec: &mut Recorder<'_>) -> Result<Option<GpuMat>> {
        let bands = self;
        let Some(first) = bands.parts.first().map(|p| &p.mat) else {
            return Ok(None);
        };
        let [w, h, _] = bands.shape;
        let limit = rec.context().largest_mat_bytes();
        let cstep = gpu_cstep(3, w, h, first.elempack) as u64;
        let bytes = first.c as u64 * cstep * (first.elempack * first.format.size()) as u64;
        if bytes > limit {
            return Ok(None);
        }
        let whole = GpuMat::alloc_format(
            rec.context(),
            3,
            [w, h, 1, first.c],
            first.elempack,
            (first.options, first.format),
        )?;
        bands.record_copy_rows(rec, 0..h, &whole, 0)?;
        Ok(Some(whole))
    }
}
