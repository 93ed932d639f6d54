//! Reshapes of host mats: the values in ncnn's order under another shape, copied once in
//! parallel, or the mat itself relabelled where its values already lie as the new shape needs.

use super::mat::{ElemType, Mat, MatData};
use super::runs::copy_runs;
use crate::error::{Result, TensorError};

impl Mat {
    /// The same values reinterpreted as another shape with the same total (pack1 only), like
    /// ncnn's `Mat::reshape`: channels are re-aligned to `cstep`.
    pub fn reshape(&self, dims: u8, shape: [usize; 4]) -> Result<Mat> {
        if self.elempack != 1 {
            return Err(TensorError::Packed {
                operation: "reshape",
                elempack: self.elempack,
            }
            .into());
        }
        let have = self.outer() * self.inner();
        let want: usize = match dims {
            1 => shape[0],
            2 => shape[0] * shape[1],
            3 => shape[0] * shape[1] * shape[3],
            _ => shape.iter().product(),
        };
        if want != have {
            return Err(TensorError::Reshape {
                values: have,
                dims,
                shape: shape.to_vec(),
            }
            .into());
        }
        let MatData::F32(src) = &self.data else {
            let values = self.to_values();
            return Mat::from_shape_values(dims, shape, &values).map(|m| m.cast(self.elemtype()));
        };
        // fp32 (every CPU blob on x86): one parallel copy of the value runs into recycled
        // memory; the copy through `to_values` and a zeroed mat was two serial passes over
        // fresh pages (ConvNeXt's reshapes around each Gemm took 1–2 ms at 16 threads)
        let mut out = Mat::for_writing(dims, shape, 1, ElemType::F32)?;
        let dst_runs = out.runs();
        copy_runs(src, self.runs(), out.f32_mut()?, dst_runs);
        Ok(out)
    }

    /// [`Mat::reshape`] of this mat itself: where both layouts are one run of values (no
    /// gaps between channels, as after most layers) only its shape changes, as ncnn's reshape
    /// shares its data; else the values are copied.
    pub fn reshape_in_place(&mut self, dims: u8, shape: [usize; 4]) -> Result<()> {
        let (target, n) = Mat::layout(dims, shape, 1, ElemType::F32)?;
        let one_run = |m: &Mat| {
            let [len, step] = m.runs();
            len == step || m.outer() <= 1
        };
        let relabel = self.elempack == 1
            && matches!(self.data, MatData::F32(_))
            && target.outer() * target.inner() == self.outer() * self.inner()
            && one_run(self)
            && one_run(&target)
            && self.data.len() == n;
        if relabel {
            let data = std::mem::replace(&mut self.data, MatData::F32(Vec::new()));
            *self = target.with_data(data);
        } else {
            *self = self.reshape(dims, shape)?;
        }
        Ok(())
    }

    /// Where an unpacked mat's values lie: runs of `[length, step]` (a channel's plane and
    /// the channel step for 3-D/4-D mats, one run of every value for 1-D/2-D ones).
    pub(crate) fn runs(&self) -> [usize; 2] {
        match self.dims {
            1 | 2 => {
                let all = self.outer() * self.inner();
                [all, all]
            }
            _ => [self.inner(), self.cstep],
        }
    }
}
