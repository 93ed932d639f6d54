//! Element types and a mat's storage of them: fp32, fp16, bf16, int8.

use half::{bf16, f16};

/// The scalar type of a mat's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    /// 32-bit float.
    F32,
    /// IEEE half (fp16 storage).
    F16,
    /// bfloat16 (bf16 storage).
    Bf16,
    /// Signed 8-bit integer (int8 storage).
    I8,
}

impl ElemType {
    /// Bytes per value (ncnn's `elemsize / elempack`).
    pub fn size(self) -> usize {
        match self {
            ElemType::F32 => 4,
            ElemType::F16 | ElemType::Bf16 => 2,
            ElemType::I8 => 1,
        }
    }

    /// Bits per value (ncnn's `elembits()`).
    pub fn bits(self) -> usize {
        self.size() * 8
    }
}

/// The values of a mat, typed.
#[derive(Clone, Debug, PartialEq)]
pub enum MatData {
    /// fp32 values.
    F32(Vec<f32>),
    /// fp16 values.
    F16(Vec<f16>),
    /// bf16 values.
    Bf16(Vec<bf16>),
    /// int8 values.
    I8(Vec<i8>),
}

/// fp32 storage goes back to the buffer pool, for the next blob of about its size.
impl Drop for MatData {
    fn drop(&mut self) {
        if let MatData::F32(v) = self {
            super::pool::give(std::mem::take(v));
        }
    }
}

impl MatData {
    pub(crate) fn zeros(elemtype: ElemType, n: usize) -> MatData {
        match elemtype {
            ElemType::F32 => MatData::F32(super::pool::zeros(n)),
            ElemType::F16 => MatData::F16(vec![f16::ZERO; n]),
            ElemType::Bf16 => MatData::Bf16(vec![bf16::ZERO; n]),
            ElemType::I8 => MatData::I8(vec![0; n]),
        }
    }

    /// `n` values for a caller that writes every one of them before anything reads them: fp32
    /// in a recycled buffer with its old values (no zeroing pass, which on a large output is
    /// a serial `memset` as long as the layer's own parallel work); other types zeroed.
    pub(crate) fn for_writing(elemtype: ElemType, n: usize) -> MatData {
        match elemtype {
            ElemType::F32 => MatData::F32(super::pool::any(n)),
            _ => MatData::zeros(elemtype, n),
        }
    }

    /// The element type.
    pub fn elemtype(&self) -> ElemType {
        match self {
            MatData::F32(_) => ElemType::F32,
            MatData::F16(_) => ElemType::F16,
            MatData::Bf16(_) => ElemType::Bf16,
            MatData::I8(_) => ElemType::I8,
        }
    }

    /// How many values.
    pub fn len(&self) -> usize {
        match self {
            MatData::F32(v) => v.len(),
            MatData::F16(v) => v.len(),
            MatData::Bf16(v) => v.len(),
            MatData::I8(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `i` widened to fp32 (int8 values as their integer value).
    pub fn get(&self, i: usize) -> f32 {
        match self {
            MatData::F32(v) => v[i],
            MatData::F16(v) => v[i].to_f32(),
            MatData::Bf16(v) => v[i].to_f32(),
            MatData::I8(v) => f32::from(v[i]),
        }
    }

    /// Stores `x` at `i`, rounded to the element type (int8 saturates and rounds to nearest).
    pub fn set(&mut self, i: usize, x: f32) {
        match self {
            MatData::F32(v) => v[i] = x,
            MatData::F16(v) => v[i] = f16::from_f32(x),
            MatData::Bf16(v) => v[i] = bf16::from_f32(x),
            MatData::I8(v) => v[i] = to_i8(x),
        }
    }
}

/// `x` rounded half away from zero and clamped to ±127 (NaN to 0): `trunc(x ± 0.5)` through
/// int32, which the portable build compiles inline where `round` is a library call.
#[inline]
pub(crate) fn to_i8(x: f32) -> i8 {
    if x.is_nan() {
        return 0;
    }
    let c = x.clamp(-127.0, 127.0);
    // SAFETY: in ±127.5, so the truncation fits (and vectorizes, unlike saturating `as`)
    unsafe { (c + 0.5f32.copysign(c)).to_int_unchecked::<i32>() as i8 }
}
