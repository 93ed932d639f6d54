//! The host tensor, ncnn's `Mat`: 1–4 dims, fp32/fp16/bf16/int8 elements, elempack 1/4/8.
//!
//! Layout as in ncnn: the packed dimension is `w` for 1-D, `h` for 2-D and `c` for 3-D/4-D mats;
//! value `k` of element `i` of packed channel `q` sits at `(q * cstep + i) * elempack + k`, and
//! for 3-D/4-D mats `cstep` rounds a channel up to 16 bytes.

use half::{bf16, f16};
use rayon::prelude::*;

use crate::error::{Result, TensorError};
use crate::tensor::BlobShape;

pub use crate::tensor::elem::{ElemType, MatData};

/// A host tensor like ncnn's `Mat`.
#[derive(Clone, Debug, PartialEq)]
pub struct Mat {
    /// 1, 2, 3 or 4.
    pub dims: u8,
    /// Width (in packed elements for 1-D mats).
    pub w: usize,
    /// Height (in packed elements for 2-D mats).
    pub h: usize,
    /// Depth (4-D mats).
    pub d: usize,
    /// Channels (in packed elements for 3-D/4-D mats; 1 for 1-D/2-D).
    pub c: usize,
    /// Values per element: 1, 4 or 8.
    pub elempack: usize,
    /// Elements from one channel's start to the next.
    pub cstep: usize,
    /// The values, `c * cstep * elempack` of them.
    pub data: MatData,
}

/// Elements per channel once `elements` of `elemsize` bytes are aligned to 16 bytes (ncnn's
/// `alignSize(w * h * d * elemsize, 16) / elemsize`).
pub(crate) fn cstep_for(elements: usize, elemsize: usize) -> usize {
    (elements * elemsize).div_ceil(16) * 16 / elemsize
}

pub(super) fn check_pack(elempack: usize) -> Result<()> {
    // 16: ncnn's AVX-512 layout, which Packing may ask for on the CPU
    if [1, 4, 8, 16].contains(&elempack) {
        Ok(())
    } else {
        Err(TensorError::Elempack { elempack }.into())
    }
}

impl Mat {
    /// A zeroed mat of `dims` (1–4) with extents `[w, h, d, c]` (the packed one in packed
    /// elements, unused ones 1).
    pub fn zeros(dims: u8, shape: [usize; 4], elempack: usize, elemtype: ElemType) -> Result<Mat> {
        Mat::allocate(dims, shape, elempack, elemtype, MatData::zeros)
    }

    /// A mat of `dims` with extents `[w, h, d, c]` whose every value (each channel's `w·h·d`
    /// packed elements) the caller writes before anything reads it: its buffer comes recycled
    /// with old values, and only the gaps between channels are zeroed. For layer outputs, where
    /// zeroing first is a whole serial pass over memory the layer then overwrites in parallel.
    pub(crate) fn for_writing(
        dims: u8,
        shape: [usize; 4],
        elempack: usize,
        elemtype: ElemType,
    ) -> Result<Mat> {
        let mut m = Mat::allocate(dims, shape, elempack, elemtype, MatData::for_writing)?;
        let used = m.w * m.h * m.d * m.elempack;
        let step = m.cstep * m.elempack;
        if step > used
            && let MatData::F32(v) = &mut m.data
        {
            for ch in v.chunks_mut(step) {
                ch[used..].fill(0.0);
            }
        }
        Ok(m)
    }

    /// A copy made on the current thread pool: a blob an in-place layer must not change while
    /// another layer still reads it. One thread's `memcpy` of a large blob is as long as the
    /// layer that follows on all of them.
    pub(crate) fn parallel_clone(&self) -> Mat {
        let MatData::F32(src) = &self.data else {
            return self.clone();
        };
        let n = src.len();
        let mut v = super::pool::any(n);
        super::runs::copy_runs(src, [n, n], &mut v, [n, n]);
        self.with_data(MatData::F32(v))
    }

    fn allocate(
        dims: u8,
        shape: [usize; 4],
        elempack: usize,
        elemtype: ElemType,
        data: impl FnOnce(ElemType, usize) -> MatData,
    ) -> Result<Mat> {
        let (header, n) = Mat::layout(dims, shape, elempack, elemtype)?;
        Ok(Mat {
            data: data(elemtype, n),
            ..header
        })
    }

    /// The header of a mat of `dims` with extents `[w, h, d, c]` (those past its dims taken
    /// as 1), its channels aligned as ncnn's, with no values, and how many values it holds.
    pub(crate) fn layout(
        dims: u8,
        [w, h, d, c]: [usize; 4],
        elempack: usize,
        elemtype: ElemType,
    ) -> Result<(Mat, usize)> {
        check_pack(elempack)?;
        let (h, d, c) = match dims {
            1 => (1, 1, 1),
            2 => (h, 1, 1),
            3 => (h, 1, c),
            4 => (h, d, c),
            _ => {
                return Err(TensorError::Dims {
                    dims: dims.into(),
                    takes: "mats are 1-D to 4-D",
                }
                .into());
            }
        };
        let too_large = || TensorError::TooLarge {
            shape: [w, h, d, c],
        };
        let plane = w
            .checked_mul(h)
            .and_then(|p| p.checked_mul(d))
            .ok_or_else(too_large)?;
        let cstep = if dims <= 2 {
            plane
        } else {
            // cstep_for's product, checked first
            (plane.checked_mul(elemtype.size() * elempack))
                .and_then(|b| b.checked_add(16))
                .ok_or_else(too_large)?;
            cstep_for(plane, elemtype.size() * elempack)
        };
        let n = c
            .checked_mul(cstep)
            .and_then(|n| n.checked_mul(elempack))
            .filter(|n| n.checked_mul(elemtype.size()).is_some())
            .ok_or_else(too_large)?;
        crate::host::check((n * elemtype.size()) as u64)?;
        let header = Mat {
            dims,
            w,
            h,
            d,
            c,
            elempack,
            cstep,
            data: MatData::F32(Vec::new()),
        };
        Ok((header, n))
    }

    /// A zeroed fp32 1-D mat.
    pub fn new_1d(w: usize, elempack: usize) -> Result<Mat> {
        Mat::zeros(1, [w, 1, 1, 1], elempack, ElemType::F32)
    }

    /// A zeroed fp32 2-D mat.
    pub fn new_2d(w: usize, h: usize, elempack: usize) -> Result<Mat> {
        Mat::zeros(2, [w, h, 1, 1], elempack, ElemType::F32)
    }

    /// A zeroed fp32 3-D mat (`c` in packed elements).
    pub fn new_3d(w: usize, h: usize, c: usize, elempack: usize) -> Result<Mat> {
        Mat::zeros(3, [w, h, 1, c], elempack, ElemType::F32)
    }

    /// A zeroed fp32 4-D mat (`c` in packed elements).
    pub fn new_4d(w: usize, h: usize, d: usize, c: usize, elempack: usize) -> Result<Mat> {
        Mat::zeros(4, [w, h, d, c], elempack, ElemType::F32)
    }

    /// A zeroed mat of the same shape, packing and element type.
    pub fn zeros_like(&self) -> Mat {
        self.with_data(MatData::zeros(self.elemtype(), self.data.len()))
    }

    /// A mat of this shape and packing holding `data` (as many values as this one).
    pub(crate) fn with_data(&self, data: MatData) -> Mat {
        Mat {
            dims: self.dims,
            w: self.w,
            h: self.h,
            d: self.d,
            c: self.c,
            elempack: self.elempack,
            cstep: self.cstep,
            data,
        }
    }

    /// A mat with no values (ncnn's empty `Mat`): a 1-D fp32 mat of width 0.
    pub fn empty() -> Mat {
        Mat {
            dims: 1,
            w: 0,
            h: 1,
            d: 1,
            c: 1,
            elempack: 1,
            cstep: 0,
            data: MatData::F32(Vec::new()),
        }
    }

    /// Whether it holds no values.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// An unpacked fp32 mat of `dims` with `shape = [w, h, d, c]`, filled from `values` in
    /// ncnn's order (channel after channel, rows of `w`).
    pub fn from_shape_values(dims: u8, shape: [usize; 4], values: &[f32]) -> Result<Mat> {
        // every channel's values written below, the gaps between channels zeroed
        let mut m = Mat::for_writing(dims, shape, 1, ElemType::F32)?;
        let plane = m.w * m.h * m.d;
        if values.len() != plane * m.c {
            return Err(TensorError::Values {
                got: values.len(),
                expected: plane * m.c,
                dims,
                shape: m.shape(),
            }
            .into());
        }
        // in parallel pieces: a layer's output copied serially (a ViT-B MLP's 2.4 MB) cost as
        // much as its product at 16 threads
        let runs = m.runs();
        let all = values.len();
        super::runs::copy_runs(values, [all, all], m.f32_mut()?, runs);
        Ok(m)
    }

    /// numpy's shape of the same values: `[w]`, `[h, w]`, `[c, h, w]` or `[c, d, h, w]`.
    pub fn numpy_shape(&self) -> Vec<usize> {
        let [w, h, d, c] = self.shape();
        match self.dims {
            1 => vec![w],
            2 => vec![h, w],
            3 => vec![c, h, w],
            _ => vec![c, d, h, w],
        }
    }

    /// An unpacked fp32 mat of numpy shape `shape` (1 to 4 axes, outermost first).
    pub fn from_numpy(shape: &[usize], values: &[f32]) -> Result<Mat> {
        let BlobShape { dims, shape: s } = Mat::numpy_dims(shape)?;
        Mat::from_shape_values(dims, s, values)
    }

    /// The dims and `[w, h, d, c]` of numpy shape `shape` (1 to 4 axes, outermost first).
    pub fn numpy_dims(shape: &[usize]) -> Result<BlobShape> {
        Ok(match *shape {
            [w] => BlobShape {
                dims: 1,
                shape: [w, 1, 1, 1],
            },
            [h, w] => BlobShape::new(2, [w, h, 1, 1]),
            [c, h, w] => BlobShape::new(3, [w, h, 1, c]),
            [c, d, h, w] => BlobShape::new(4, [w, h, d, c]),
            _ => {
                return Err(TensorError::Dims {
                    dims: shape.len(),
                    takes: "mats are 1-D to 4-D",
                }
                .into());
            }
        })
    }

    /// A pack1 3-D fp32 mat filled from `values` laid out channel after channel (`w*h*c`).
    pub fn from_values(w: usize, h: usize, c: usize, values: &[f32]) -> Result<Mat> {
        Mat::from_shape_values(3, [w, h, 1, c], values)
    }

    /// Its dims and shape together, as layers are asked about blobs.
    pub fn blob_shape(&self) -> crate::tensor::BlobShape {
        crate::tensor::BlobShape::new(self.dims, self.shape())
    }

    /// `[w, h, d, c]` in unpacked values along the packed dimension.
    pub fn shape(&self) -> [usize; 4] {
        let p = self.elempack;
        match self.dims {
            1 => [self.w * p, 1, 1, 1],
            2 => [self.w, self.h * p, 1, 1],
            _ => [self.w, self.h, self.d, self.c * p],
        }
    }

    /// The element type.
    pub fn elemtype(&self) -> ElemType {
        self.data.elemtype()
    }

    /// ncnn's `elembits()`.
    pub fn elembits(&self) -> usize {
        self.elemtype().bits()
    }

    /// Packed "channels": what elempack packs (w for 1-D, h for 2-D, c otherwise).
    pub fn outer(&self) -> usize {
        match self.dims {
            1 => self.w,
            2 => self.h,
            _ => self.c,
        }
    }

    /// Elements per packed channel (1 for 1-D, w for 2-D, w·h·d otherwise).
    pub fn inner(&self) -> usize {
        match self.dims {
            1 => 1,
            2 => self.w,
            _ => self.w * self.h * self.d,
        }
    }

    /// Where packed channel `q` starts, in values.
    pub(super) fn outer_offset(&self, q: usize) -> usize {
        match self.dims {
            1 | 2 => q * self.inner() * self.elempack,
            _ => q * self.cstep * self.elempack,
        }
    }

    /// Value `k` (0..elempack) of element `i` (0..inner) in packed channel `q`, as fp32.
    pub fn at(&self, q: usize, i: usize, k: usize) -> f32 {
        self.data.get(self.outer_offset(q) + i * self.elempack + k)
    }

    /// [`Mat::to_values`] without the copy where the mat already holds them so (fp32, one
    /// value per element, no padding between channels): what a reader of the values alone
    /// (a detection head over a few hundred thousand scores) wants.
    pub fn values(&self) -> std::borrow::Cow<'_, [f32]> {
        let contiguous = self.elempack == 1 && (self.dims <= 2 || self.cstep == self.inner());
        match &self.data {
            MatData::F32(v) if contiguous => {
                std::borrow::Cow::Borrowed(&v[..(self.outer() * self.inner()).min(v.len())])
            }
            _ => std::borrow::Cow::Owned(self.to_values()),
        }
    }

    /// Every real value in unpacked ncnn order (channel after channel, no padding), as fp32.
    pub fn to_values(&self) -> Vec<f32> {
        let (outer, inner, p) = (self.outer(), self.inner(), self.elempack);
        let widened;
        let data = match &self.data {
            MatData::F32(v) => v,
            _ => {
                widened = self.cast(ElemType::F32);
                return widened.to_values();
            }
        };
        let mut out = vec![0.0f32; outer * p * inner];
        // one packed channel (p unpacked channels) at a time: slices, no per-value dispatch
        for (q, dst) in out.chunks_mut((p * inner).max(1)).enumerate() {
            let start = self.outer_offset(q);
            let src = &data[start..start + p * inner];
            if p == 1 {
                dst.copy_from_slice(src);
            } else {
                for (i, values) in src.chunks_exact(p).enumerate() {
                    for (k, v) in values.iter().enumerate() {
                        dst[k * inner + i] = *v;
                    }
                }
            }
        }
        out
    }

    /// The fp32 values (error if the mat holds another type).
    pub fn f32(&self) -> Result<&[f32]> {
        match &self.data {
            MatData::F32(v) => Ok(v),
            other => Err(TensorError::ElemType {
                expected: "fp32",
                got: format!("{:?}", other.elemtype()),
            }
            .into()),
        }
    }

    /// The fp32 values, mutable.
    pub fn f32_mut(&mut self) -> Result<&mut [f32]> {
        match &mut self.data {
            MatData::F32(v) => Ok(v),
            other => Err(TensorError::ElemType {
                expected: "fp32",
                got: format!("{:?}", other.elemtype()),
            }
            .into()),
        }
    }

    /// Packed channel `q` of an fp32 mat (`inner * elempack` values, padding excluded).
    pub fn channel(&self, q: usize) -> Result<&[f32]> {
        let start = self.outer_offset(q);
        let n = self.inner() * self.elempack;
        Ok(&self.f32()?[start..start + n])
    }

    /// The same values converted to `to` (fp32 widening is exact; int8 rounds and saturates).
    pub fn cast(&self, to: ElemType) -> Mat {
        if self.elemtype() == to {
            return self.clone();
        }
        let n = self.data.len();
        let data = match (&self.data, to) {
            (MatData::F32(v), ElemType::F16) => {
                MatData::F16(v.iter().map(|x| f16::from_f32(*x)).collect())
            }
            (MatData::F32(v), ElemType::Bf16) => {
                MatData::Bf16(v.iter().map(|x| bf16::from_f32(*x)).collect())
            }
            // int8 blobs between int8 layers: one pass each way, no per-value dispatch
            (MatData::I8(v), ElemType::F32) => MatData::F32(
                v.par_iter()
                    .with_min_len(1 << 14)
                    .map(|&x| x as f32)
                    .collect(),
            ),
            (MatData::F32(v), ElemType::I8) => MatData::I8(
                (v.par_iter().with_min_len(1 << 14))
                    .map(|&x| super::elem::to_i8(x))
                    .collect(),
            ),
            (src, ElemType::F32) => MatData::F32((0..n).map(|i| src.get(i)).collect()),
            (src, to) => {
                let mut out = MatData::zeros(to, n);
                for i in 0..n {
                    out.set(i, src.get(i));
                }
                out
            }
        };
        self.with_data(data)
    }

    /// Whether `other` stores its values at the same places (dims, extents, packing and
    /// channel step agree), so that the two line up value for value, padding included.
    pub fn same_layout(&self, other: &Mat) -> bool {
        (
            self.dims,
            self.w,
            self.h,
            self.d,
            self.c,
            self.elempack,
            self.cstep,
        ) == (
            other.dims,
            other.w,
            other.h,
            other.d,
            other.c,
            other.elempack,
            other.cstep,
        ) && self.data.len() == other.data.len()
    }

    /// Whether the shapes (dims and extents, in unpacked values) agree.
    pub fn same_shape(&self, other: &Mat) -> bool {
        self.dims == other.dims && self.shape() == other.shape()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cstep_is_16_byte_aligned_for_3d_only() {
        let m = Mat::new_3d(3, 3, 2, 1).unwrap();
        assert_eq!(m.cstep, 12);
        let m = Mat::zeros(3, [3, 3, 1, 2], 1, ElemType::F16).unwrap();
        assert_eq!(m.cstep, 16);
        let m = Mat::new_2d(3, 5, 1).unwrap();
        assert_eq!(m.cstep, 15);
        let m = Mat::new_3d(3, 3, 2, 4).unwrap();
        assert_eq!(m.cstep, 9);
    }

    #[test]
    fn packing_round_trips_in_every_dims_and_type() {
        for dims in 1..=4u8 {
            let shape = [3, 16, 2, 16];
            let n: usize = match dims {
                1 => 16,
                2 => 48,
                3 => 3 * 16 * 16,
                _ => 3 * 16 * 2 * 16,
            };
            let values: Vec<f32> = (0..n).map(|i| i as f32 - 7.0).collect();
            let shape = match dims {
                1 => [16, 1, 1, 1],
                _ => shape,
            };
            let m = Mat::from_shape_values(dims, shape, &values).unwrap();
            for ty in [ElemType::F32, ElemType::F16, ElemType::Bf16, ElemType::I8] {
                let m = m.cast(ty);
                for p in [4, 8] {
                    let packed = m.to_packing(p).unwrap();
                    assert_eq!(packed.elempack, p);
                    assert_eq!(packed.shape(), m.shape());
                    assert_eq!(
                        packed.to_values(),
                        m.to_values(),
                        "dims {dims} {ty:?} pack {p}"
                    );
                    assert_eq!(packed.to_packing(1).unwrap(), m, "dims {dims} {ty:?}");
                }
            }
        }
    }

    #[test]
    fn casts_round_and_saturate() {
        let m = Mat::from_values(4, 1, 1, &[1.0, -300.0, 0.5, 65504.0]).unwrap();
        assert_eq!(m.cast(ElemType::I8).to_values(), [1.0, -127.0, 1.0, 127.0]);
        assert_eq!(
            m.cast(ElemType::F16).cast(ElemType::F32).to_values(),
            [1.0, -300.0, 0.5, 65504.0]
        );
        assert_eq!(m.cast(ElemType::Bf16).elembits(), 16);
    }

    #[test]
    fn bad_shapes_are_errors() {
        assert!(Mat::new_3d(1, 1, 1, 3).is_err());
        assert!(Mat::zeros(5, [1; 4], 1, ElemType::F32).is_err());
        assert!(Mat::new_3d(1, 1, 3, 1).unwrap().to_packing(4).is_err());
        assert!(Mat::from_values(2, 2, 1, &[0.0; 3]).is_err());
        assert!(Mat::new_3d(usize::MAX / 2, 4, 4, 1).is_err());
    }

    #[test]
    fn a_mat_for_writing_has_zero_gaps_between_its_channels_and_a_clone_its_values() {
        // 5×3 planes: cstep rounds 15 up, so every channel is followed by a gap
        for _ in 0..3 {
            let mut m = Mat::for_writing(3, [5, 3, 1, 40_000], 1, ElemType::F32).unwrap();
            assert!(m.cstep > 15);
            let cstep = m.cstep;
            let v = m.f32_mut().unwrap();
            for ch in v.chunks(cstep) {
                assert!(ch[15..].iter().all(|x| *x == 0.0), "a gap holds old values");
            }
            // the whole storage written, gaps too (as a flat elementwise layer writes it)
            v.fill(3.5);
            let copy = m.parallel_clone();
            assert_eq!(copy, m);
            // dropped: its buffer serves the next round with 3.5s everywhere
        }
    }
}
