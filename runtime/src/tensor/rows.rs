//! Rows of 3-D mats: copied between device mats by transfer commands, sliced out of and
//! written into host mats. What runs a blob past a buffer of the device as bands of rows.

use std::ops::Range;

use crate::error::{Result, TensorError};
use crate::gpu::Recorder;
use crate::tensor::{ElemType, GpuMat, Mat, MatData};

/// wgpu's copy alignment (`COPY_BUFFER_ALIGNMENT`), in bytes.
const ALIGN: u64 = 4;

fn rows_error(rows: &Range<usize>, height: usize, problem: &'static str) -> TensorError {
    TensorError::Rows {
        start: rows.start,
        end: rows.end,
        height,
        problem,
    }
}

impl GpuMat {
    /// Bytes per row of one packed channel.
    fn row_bytes(&self) -> u64 {
        (self.w * self.elempack * self.format.size()) as u64
    }

    /// Whether rows of it can be copied by transfer commands: a 3-D buffer mat whose rows
    /// and channels start on 4 bytes (every packed or fp32 mat; fp16 pack1 ones of even
    /// width).
    pub fn rows_copyable(&self) -> bool {
        let value = (self.elempack * self.format.size()) as u64;
        self.dims == 3
            && self.buffer().is_some()
            && self.row_bytes().is_multiple_of(ALIGN)
            && (self.cstep as u64 * value).is_multiple_of(ALIGN)
    }

    /// Records copying its rows `rows` into `dst` from row `at` on, channel by channel
    /// (`dst` of its width, channels, packing and format).
    pub fn record_copy_rows(
        &self,
        rec: &mut Recorder<'_>,
        rows: Range<usize>,
        dst: &GpuMat,
        at: usize,
    ) -> Result<()> {
        let fits = rows.start <= rows.end && rows.end <= self.h && at + rows.len() <= dst.h;
        if !fits {
            return Err(rows_error(&rows, self.h, "past the rows of a mat").into());
        }
        let lined_up = (self.w, self.c, self.elempack, self.format)
            == (dst.w, dst.c, dst.elempack, dst.format);
        if !lined_up || !self.rows_copyable() || !dst.rows_copyable() {
            return Err(rows_error(&rows, self.h, "mats whose rows do not line up").into());
        }
        let (Some(from), Some(to)) = (self.buffer(), dst.buffer()) else {
            return Err(rows_error(&rows, self.h, "an image mat").into());
        };
        let row = self.row_bytes();
        let value = (self.elempack * self.format.size()) as u64;
        let size = row * rows.len() as u64;
        if size == 0 {
            return Ok(());
        }
        for q in 0..self.c as u64 {
            let src = q * self.cstep as u64 * value + rows.start as u64 * row;
            let into = q * dst.cstep as u64 * value + at as u64 * row;
            rec.copy_buffer_range((from, src), (to, into), size);
        }
        Ok(())
    }
}

impl Mat {
    /// Rows `rows` of a 3-D fp32 mat, a new mat of its width, channels and packing.
    pub(crate) fn rows(&self, rows: Range<usize>) -> Result<Mat> {
        let mut out = Mat::zeros(
            3,
            [self.w, rows.len(), 1, self.c],
            self.elempack,
            ElemType::F32,
        )?;
        out.write_rows(self, rows, 0)?;
        Ok(out)
    }

    /// Writes rows `rows` of `src` (a 3-D fp32 mat of its width, channels and packing) into
    /// this one from row `at` on.
    pub(crate) fn write_rows(&mut self, src: &Mat, rows: Range<usize>, at: usize) -> Result<()> {
        let fits = self.dims == 3
            && src.dims == 3
            && rows.start <= rows.end
            && rows.end <= src.h
            && at + rows.len() <= self.h
            && (self.w, self.c, self.elempack) == (src.w, src.c, src.elempack);
        if !fits {
            return Err(rows_error(&rows, src.h, "mats whose rows do not line up").into());
        }
        let (MatData::F32(to), MatData::F32(from)) = (&mut self.data, &src.data) else {
            return Err(TensorError::ElemType {
                expected: "fp32",
                got: format!("{:?} and {:?}", self.data.elemtype(), src.data.elemtype()),
            }
            .into());
        };
        let row = self.w * self.elempack;
        let n = rows.len() * row;
        for q in 0..self.c {
            let s = (q * src.cstep + rows.start * src.w) * src.elempack;
            let d = (q * self.cstep + at * self.w) * self.elempack;
            to[d..d + n].copy_from_slice(&from[s..s + n]);
        }
        Ok(())
    }
}
