//! Strided views of unpacked values: what slicing, cropping, permuting and channel shuffles
//! read, as an offset plus a stride per output axis (numpy's `as_strided`).

use rayon::prelude::*;

use crate::error::{Result, TensorError};
use crate::tensor::Mat;

/// A view of a flat value array: `shape` and `strides` per axis (outermost first), from `offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Strided {
    /// Where element `[0, 0, …]` is.
    pub offset: usize,
    /// Extents, outermost first.
    pub shape: Vec<usize>,
    /// Value strides per axis.
    pub strides: Vec<usize>,
}

/// Row-major strides of a contiguous array of `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    strides
}

impl Strided {
    /// The whole contiguous array of `shape`.
    pub fn contiguous(shape: &[usize]) -> Strided {
        Strided {
            offset: 0,
            shape: shape.to_vec(),
            strides: contiguous_strides(shape),
        }
    }

    /// The values `start..start + len` of `axis`.
    pub fn narrow(mut self, axis: usize, start: usize, len: usize) -> Strided {
        self.offset += start * self.strides[axis];
        self.shape[axis] = len;
        self
    }

    /// Axes reordered: output axis `k` is input axis `perm[k]`.
    pub fn permute(&self, perm: &[usize]) -> Strided {
        Strided {
            offset: self.offset,
            shape: perm.iter().map(|&a| self.shape[a]).collect(),
            strides: perm.iter().map(|&a| self.strides[a]).collect(),
        }
    }

    /// The number of values it shows.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether it shows nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The largest index it reads, plus one (0 when empty): what `values` must hold.
    pub fn extent(&self) -> usize {
        if self.is_empty() {
            return 0;
        }
        self.offset
            + self
                .shape
                .iter()
                .zip(&self.strides)
                .map(|(n, s)| (n - 1) * s)
                .sum::<usize>()
            + 1
    }

    /// The values it shows as an unpacked fp32 mat of its shape (1 to 4 axes).
    pub fn gather_mat(&self, values: &[f32]) -> Result<Mat> {
        Mat::from_numpy(&self.shape, &self.gather(values)?)
    }

    /// The values it shows, contiguous, in parallel over rows; an error if it reaches past
    /// the end of `values`.
    pub fn gather(&self, values: &[f32]) -> Result<Vec<f32>> {
        if values.len() < self.extent() {
            return Err(TensorError::View {
                shape: self.shape.to_vec(),
                extent: self.extent(),
                len: values.len(),
            }
            .into());
        }
        let n = self.len();
        let mut out = vec![0.0f32; n];
        if n == 0 {
            return Ok(out);
        }
        let (shape, strides) = (&self.shape, &self.strides);
        let last = shape.len() - 1;
        let (row, row_stride) = (shape[last], strides[last]);
        out.par_chunks_mut(row).enumerate().for_each(|(r, dst)| {
            // the offset of row `r`: its index in every axis but the last
            let (mut rest, mut at) = (r, self.offset);
            for a in (0..last).rev() {
                at += (rest % shape[a]) * strides[a];
                rest /= shape[a];
            }
            if row_stride == 1 {
                dst.copy_from_slice(&values[at..at + row]);
            } else {
                for (i, d) in dst.iter_mut().enumerate() {
                    *d = values[at + i * row_stride];
                }
            }
        });
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_and_permute_read_what_numpy_reads() {
        let values: Vec<f32> = (0..24).map(|x| x as f32).collect();
        let v = Strided::contiguous(&[2, 3, 4]);
        // a[:, 1:3, ::] then transposed to (w, c, h)
        let got = v
            .clone()
            .narrow(1, 1, 2)
            .permute(&[2, 0, 1])
            .gather(&values)
            .unwrap();
        let mut want = Vec::new();
        for x in 0..4 {
            for c in 0..2 {
                for y in 1..3 {
                    want.push((c * 12 + y * 4 + x) as f32);
                }
            }
        }
        assert_eq!(got, want);
        assert_eq!(v.extent(), 24);
        assert!(v.clone().narrow(0, 1, 2).gather(&values).is_err());
        assert_eq!(
            v.narrow(2, 3, 0).gather(&values).unwrap(),
            Vec::<f32>::new()
        );
    }
}
