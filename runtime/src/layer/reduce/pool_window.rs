//! What Pooling1D and Pooling3D both compute per axis: where the bordered axis starts against
//! the input, the windows along it, and the steps an average leaving out the padding counts,
//! from ncnn's four pad modes (0 full: the tail padded to a whole stride, 1 valid, 2 / 3
//! "same" upper / lower, where ncnn pads every axis by the signed amount the stride needs as
//! soon as one axis needs some, cutting an axis that needs less).

use crate::error::{InputError, Result};
use crate::gpu::specialize::SpecValue;

/// One axis' kernel, stride and the params' padding before and after it, and whether the
/// "same lower" mode puts the odd step before it (ncnn's Pooling3D puts it after along d).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct AxisParams {
    pub kernel: usize,
    pub stride: usize,
    pub pad: [usize; 2],
    pub lower_first: bool,
}

/// One axis of windows over a bordered input axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Axis {
    /// The bordered axis' step 0 is input step `-left` (negative: steps cut).
    pub left: i64,
    /// Windows along it.
    pub out: usize,
    /// The bordered steps `[from, to)` an average leaving out the padding counts.
    pub counted: [i64; 2],
}

/// The axes for an input of `extents` (with `params` each) in pad mode `mode`; an error
/// where a bordered axis is shorter than its kernel.
pub(crate) fn axes(extents: &[usize], params: &[AxisParams], mode: i32) -> Result<Vec<Axis>> {
    let same: Vec<i64> = (extents.iter().zip(params))
        .map(|(&n, a)| {
            let (k, s, n) = (a.kernel as i64, a.stride as i64, n as i64);
            k + (n.max(1) - 1) / s * s - n
        })
        .collect();
    let pads_some = same.iter().any(|&p| p > 0);
    (extents.iter().zip(params).zip(&same))
        .map(|((&n, a), &need)| {
            let [pl, pr] = a.pad.map(|p| p as i64);
            let (k, s, n) = (a.kernel as i64, a.stride as i64, n as i64);
            let (left, right, tail) = match mode {
                0 => {
                    let over = (n + pl + pr - k) % s;
                    (pl, pr, if over > 0 { s - over } else { 0 })
                }
                1 => (pl, pr, 0),
                // C's division toward zero, as ncnn splits a negative amount
                2 if pads_some => (need / 2, need - need / 2, 0),
                3 if pads_some && a.lower_first => (need - need / 2, need / 2, 0),
                3 if pads_some => (need / 2, need - need / 2, 0),
                _ => (0, 0, 0),
            };
            let bordered = n + left + right + tail;
            if bordered < k {
                return Err(InputError::Mismatch {
                    a: vec![bordered.max(0) as usize],
                    b: vec![k as usize],
                    why: "(the padded axis) is shorter than the kernel",
                }
                .into());
            }
            Ok(Axis {
                left,
                out: ((bordered - k) / s + 1) as usize,
                counted: [pl, bordered - pr - if mode == 0 { tail } else { 0 }],
            })
        })
        .collect()
}

/// The specialization of the pooling1d and pooling3d shaders: constant 0 average, 1 the mode
/// (0 windows over the bordered input, 1 global, 2 adaptive), 2 whether an average counts the
/// padding.
pub(crate) fn spec_values(
    average: bool,
    global: bool,
    adaptive: bool,
    include_pad: bool,
) -> [(u32, SpecValue); 3] {
    let mode = match (global, adaptive) {
        (true, _) => 1,
        (false, true) => 2,
        (false, false) => 0,
    };
    [
        (0, SpecValue::I32(i32::from(average))),
        (1, SpecValue::I32(mode)),
        (2, SpecValue::I32(i32::from(include_pad))),
    ]
}
