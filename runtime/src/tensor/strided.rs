//! Strided views of unpacked values: what slicing, cropping, permuting and channel shuffles
//! read, as an offset plus a stride per output axis (numpy's `as_strided`).

use rayon::prelude::*;

use crate::error::{Result, TensorError};
use crate::tensor::BlobShape;
use crate::tensor::{COPY_GRAIN, ElemType, Mat};

/// A view of a flat value array: `shape` and `strides` per axis (outermost first), from `offset`.
/// Strides may be zero (an axis repeated: Tile) or negative (an axis read backwards: Flip).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Strided {
    /// Where element `[0, 0, …]` is.
    pub offset: usize,
    /// Extents, outermost first.
    pub shape: Vec<usize>,
    /// Value strides per axis.
    pub strides: Vec<isize>,
}

/// Row-major strides of a contiguous array of `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1] as isize;
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
        self.offset = self.at(axis, start);
        self.shape[axis] = len;
        self
    }

    /// Every `step`-th value of `axis` from the first (`shape[axis]` becomes `len`).
    pub fn step(mut self, axis: usize, step: usize, len: usize) -> Strided {
        self.strides[axis] *= step as isize;
        self.shape[axis] = len;
        self
    }

    /// `axis` read backwards.
    pub fn flip(mut self, axis: usize) -> Strided {
        self.offset = self.at(axis, self.shape[axis].saturating_sub(1));
        self.strides[axis] = -self.strides[axis];
        self
    }

    /// A new axis of `times` at position `at` that repeats the view (stride 0).
    pub fn repeat(mut self, at: usize, times: usize) -> Strided {
        self.shape.insert(at, times);
        self.strides.insert(at, 0);
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

    /// `axis` split into `outer × (shape / outer)` (row-major).
    pub fn split(mut self, axis: usize, outer: usize) -> Strided {
        let inner = self.shape[axis] / outer.max(1);
        let stride = self.strides[axis];
        self.shape[axis] = inner;
        self.shape.insert(axis, outer);
        self.strides.insert(axis, stride * inner as isize);
        self
    }

    /// The offset of index `i` along `axis` from the view's first element.
    fn at(&self, axis: usize, i: usize) -> usize {
        (self.offset as isize + i as isize * self.strides[axis]) as usize
    }

    /// The number of values it shows.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether it shows nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The lowest and one past the highest index it reaches (`(0, 0)` when empty).
    pub fn span(&self) -> (isize, isize) {
        if self.is_empty() {
            return (0, 0);
        }
        let (mut lo, mut hi) = (self.offset as isize, self.offset as isize);
        for (n, s) in self.shape.iter().zip(&self.strides) {
            let reach = (*n as isize - 1) * s;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        (lo, hi + 1)
    }

    /// The largest index it reads, plus one (0 when empty): what `values` must hold.
    pub fn extent(&self) -> usize {
        self.span().1.max(0) as usize
    }

    fn check(&self, len: usize) -> Result<()> {
        let (lo, hi) = self.span();
        if lo < 0 || hi > len as isize {
            return Err(TensorError::View {
                shape: self.shape.to_vec(),
                extent: hi.max(0) as usize,
                len,
            }
            .into());
        }
        Ok(())
    }

    /// The same view with axes of one value dropped and neighbours that walk memory as one
    /// axis merged (at least one axis kept): what a shader with a few axes takes. `other`,
    /// a view of the same shape walked alongside, merges where both allow; both come back.
    pub fn simplified_with(&self, other: &Strided) -> (Strided, Strided) {
        let mut a = Strided {
            offset: self.offset,
            shape: Vec::new(),
            strides: Vec::new(),
        };
        let mut b = Strided {
            offset: other.offset,
            shape: Vec::new(),
            strides: Vec::new(),
        };
        for k in 0..self.shape.len() {
            let n = self.shape[k];
            if n == 1 {
                continue;
            }
            let (sa, sb) = (self.strides[k], other.strides[k]);
            if let Some(last) = a.shape.len().checked_sub(1)
                && a.strides[last] == sa * n as isize
                && b.strides[last] == sb * n as isize
            {
                a.shape[last] *= n;
                b.shape[last] *= n;
                a.strides[last] = sa;
                b.strides[last] = sb;
                continue;
            }
            a.shape.push(n);
            a.strides.push(sa);
            b.shape.push(n);
            b.strides.push(sb);
        }
        if a.shape.is_empty() {
            a.shape.push(1);
            a.strides.push(1);
            b.shape.push(1);
            b.strides.push(1);
        }
        (a, b)
    }

    /// The values it shows as an unpacked fp32 mat of its shape (1 to 4 axes).
    pub fn gather_mat(&self, values: &[f32]) -> Result<Mat> {
        Mat::from_numpy(&self.shape, &self.gather(values)?)
    }

    /// The index of its `i`-th value (row-major order of its shape).
    pub fn index(&self, i: usize) -> usize {
        let (mut rest, mut at) = (i, self.offset as isize);
        for a in (0..self.shape.len()).rev() {
            at += (rest % self.shape[a]) as isize * self.strides[a];
            rest /= self.shape[a];
        }
        at as usize
    }

    /// The values it shows, contiguous, in parallel over rows; an error if it reaches past
    /// the end of `values`.
    pub fn gather(&self, values: &[f32]) -> Result<Vec<f32>> {
        self.check(values.len())?;
        let mut out = vec![0.0f32; self.len()];
        self.gather_rows(values, &mut out);
        Ok(out)
    }

    /// The view over an unpacked mat's storage: numpy's axes, channel planes `cstep` apart.
    /// With [`Strided::gather_into_mat`], a permutation or crop of a mat reads its values
    /// where they lie, without a contiguous copy first.
    pub fn of_mat(m: &Mat) -> Strided {
        let shape = m.numpy_shape();
        let mut strides = contiguous_strides(&shape);
        if m.dims >= 3 {
            strides[0] = m.cstep as isize;
        }
        Strided {
            offset: 0,
            shape,
            strides,
        }
    }

    /// The values it shows as an unpacked fp32 mat of its shape (1 to 4 axes), gathered in
    /// parallel straight into the mat's channels (recycled memory, no contiguous copy between).
    pub fn gather_into_mat(&self, values: &[f32]) -> Result<Mat> {
        self.check(values.len())?;
        let BlobShape { dims, shape } = Mat::numpy_dims(&self.shape)?;
        let mut out = Mat::for_writing(dims, shape, 1, ElemType::F32)?;
        if self.is_empty() {
            return Ok(out);
        }
        let cstep = out.cstep;
        let data = out.f32_mut()?;
        if dims <= 2 {
            self.gather_rows(values, data);
        } else {
            // one view per output channel: the channel axis dropped, its offset moved
            let plane = self.len() / self.shape[0];
            data.par_chunks_mut(cstep)
                .enumerate()
                .for_each(|(q, channel)| {
                    let at = self.offset as isize + q as isize * self.strides[0];
                    let sub = Strided {
                        offset: at as usize,
                        shape: self.shape[1..].to_vec(),
                        strides: self.strides[1..].to_vec(),
                    };
                    sub.gather_rows(values, &mut channel[..plane]);
                });
        }
        Ok(out)
    }

    /// Writes the values it shows into `out` (its length), in parallel over rows of the last
    /// axis. The caller has checked the view against `values`.
    fn gather_rows(&self, values: &[f32], out: &mut [f32]) {
        if out.is_empty() {
            return;
        }
        let (shape, strides) = (&self.shape, &self.strides);
        let last = shape.len() - 1;
        let (row, row_stride) = (shape[last], strides[last]);
        // rows of a few values each go in runs, so that a task is worth its scheduling
        let rows_per_task = (COPY_GRAIN / row.max(1)).max(1);
        out.par_chunks_mut(row * rows_per_task)
            .enumerate()
            .for_each(|(t, dst)| {
                for (k, dst) in dst.chunks_mut(row).enumerate() {
                    let r = t * rows_per_task + k;
                    // the offset of row `r`: its index in every axis but the last
                    let (mut rest, mut at) = (r, self.offset as isize);
                    for a in (0..last).rev() {
                        at += (rest % shape[a]) as isize * strides[a];
                        rest /= shape[a];
                    }
                    if row_stride == 1 {
                        let at = at as usize;
                        dst.copy_from_slice(&values[at..at + row]);
                    } else {
                        for (i, d) in dst.iter_mut().enumerate() {
                            *d = values[(at + i as isize * row_stride) as usize];
                        }
                    }
                }
            });
    }

    /// Writes `src` (row-major over its shape) to the places it shows in `values`.
    pub fn scatter(&self, values: &mut [f32], src: &[f32]) -> Result<()> {
        self.check(values.len())?;
        if src.len() != self.len() {
            return Err(TensorError::View {
                shape: self.shape.to_vec(),
                extent: self.len(),
                len: src.len(),
            }
            .into());
        }
        for (i, v) in src.iter().enumerate() {
            values[self.index(i)] = *v;
        }
        Ok(())
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

    #[test]
    fn flips_repeats_scatters_and_merges_axes() {
        let values: Vec<f32> = (0..6).map(|x| x as f32).collect();
        let v = Strided::contiguous(&[2, 3]);
        assert_eq!(
            v.clone().flip(1).gather(&values).unwrap(),
            [2.0, 1.0, 0.0, 5.0, 4.0, 3.0]
        );
        assert_eq!(
            v.clone().repeat(0, 2).gather(&values).unwrap(),
            [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        );
        let mut out = vec![0.0; 9];
        let diagonal = Strided {
            offset: 0,
            shape: vec![3],
            strides: vec![4],
        };
        diagonal.scatter(&mut out, &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(out, [1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0]);
        // reaching before the start or past the end is an error, not a panic
        let before = Strided {
            offset: 0,
            shape: vec![2],
            strides: vec![-1],
        };
        assert!(before.gather(&values).is_err());
        assert!(diagonal.scatter(&mut [0.0; 8], &[1.0, 2.0, 3.0]).is_err());
        // contiguous on both sides: one axis; a flipped side keeps its axes
        let (a, b) = v.simplified_with(&Strided::contiguous(&[2, 3]));
        assert_eq!((a.shape, b.strides), (vec![6], vec![1]));
        let (a, _) = v.clone().flip(0).simplified_with(&v);
        assert_eq!(a.shape, vec![2, 3]);
    }
}
