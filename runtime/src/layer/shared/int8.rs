//! ncnn's int8 matrix products (Gemm, SDPA and MultiHeadAttention with `18=int8_scale_term`):
//! each operand rounded to its int8 levels with ncnn's dynamic scales (`127 / absmax` of a row,
//! or of the whole operand; 1 where all are zero; levels clamped to ±127). The levels stay in
//! fp32 (or fp16 storage, which holds them exactly), so the fp32 GEMM sums their products
//! exactly as ncnn's int32 one does, and the descales (`1 / scale`) multiply the sums after.
//! Where an exact sum does not matter (the attention's fp32 path) an operand is held as
//! `level / scale` instead (`fake_*`). int8 weights in the model are taken at their stored
//! levels with their scales.

use crate::error::{Error, Result};
use crate::layer::params::ParamDict;

/// ncnn's scale for values whose largest magnitude is `absmax`.
pub(crate) fn scale_for(absmax: f32) -> f32 {
    if absmax == 0.0 { 1.0 } else { 127.0 / absmax }
}

/// `x`'s int8 level under `scale` (halves away from zero, as C's `round`).
fn level(x: f32, scale: f32) -> f32 {
    (x * scale).round().clamp(-127.0, 127.0)
}

/// Every value replaced by its level under one scale, the operand's (ncnn's
/// `dynamic_quantize_2d`); the descale `1 / scale`.
pub(crate) fn per_tensor(values: &mut [f32]) -> f32 {
    let s = scale_for(values.iter().fold(0.0f32, |m, v| m.max(v.abs())));
    values.iter_mut().for_each(|v| *v = level(*v, s));
    1.0 / s
}

/// Each row of a `rows × cols` matrix (value `(i, j)` at `i·rs + j·cs`) replaced by its levels
/// under its own scale (ncnn's per-row dynamic quantization of Gemm's A and the attention
/// scores); the rows' descales.
pub(crate) fn per_row(
    values: &mut [f32],
    rows: usize,
    cols: usize,
    rs: usize,
    cs: usize,
) -> Vec<f32> {
    (0..rows)
        .map(|i| {
            let at = |j: usize| i * rs + j * cs;
            let absmax = (0..cols).fold(0.0f32, |m, j| m.max(values[at(j)].abs()));
            let s = scale_for(absmax);
            for j in 0..cols {
                values[at(j)] = level(values[at(j)], s);
            }
            1.0 / s
        })
        .collect()
}

/// [`per_tensor`] with the levels scaled back (`level / scale`): an operand whose fp32
/// products are the int8 ones up to rounding.
pub(crate) fn fake_per_tensor(values: &mut [f32]) {
    let d = per_tensor(values);
    values.iter_mut().for_each(|v| *v *= d);
}

/// [`per_row`] with the levels scaled back, as [`fake_per_tensor`].
pub(crate) fn fake_per_row(values: &mut [f32], rows: usize, cols: usize, rs: usize, cs: usize) {
    let d = per_row(values, rows, cols, rs, cs);
    for (i, d) in d.iter().enumerate() {
        for j in 0..cols {
            values[i * rs + j * cs] *= d;
        }
    }
}

/// ncnn's `18=` of Gemm and MultiHeadAttention: whether the layer is int8 (any term but 0, the
/// unused 4-6, and weight-block quantization from 400, which is not supported).
pub(crate) fn quantize_term(pd: &ParamDict) -> Result<bool> {
    match pd.int(18, 0) {
        0 => Ok(false),
        t if !(1..400).contains(&t) || (4..=6).contains(&t) => Err(Error::BadParam {
            id: 18,
            value: t.to_string(),
            allowed: "0 (fp32) or an int8 term (1-3, 7-399); weight-block quantization \
                      (4xx, 6xx, 8xx) is not supported yet",
        }),
        _ => Ok(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_round_half_away_from_zero_and_clamp() {
        // absmax 2: scale 63.5; 1.0 is level 63.5 → 64, -1.0 → -64
        let mut v = [2.0, 1.0, -1.0, -2.0, 0.0];
        assert_eq!(per_tensor(&mut v), 2.0 / 127.0);
        assert_eq!(v, [127.0, 64.0, -64.0, -127.0, 0.0]);
        let mut zeros = [0.0; 3];
        assert_eq!(per_tensor(&mut zeros), 1.0);
        assert_eq!(zeros, [0.0; 3]);
    }

    #[test]
    fn rows_take_their_own_scale_in_either_layout() {
        // 2 × 3 stored by columns: rows (1, 2, 4) and (8, 0.5, -20)
        let mut v = [1.0, 8.0, 2.0, 0.5, 4.0, -20.0];
        let d = per_row(&mut v, 2, 3, 1, 2);
        assert_eq!(v, [32.0, 51.0, 64.0, 3.0, 127.0, -127.0]);
        assert_eq!(d, [1.0 / (127.0 / 4.0), 1.0 / (127.0 / 20.0)]);
        let mut f = [1.0, 8.0, 2.0, 0.5, 4.0, -20.0];
        fake_per_row(&mut f, 2, 3, 1, 2);
        for (g, (l, i)) in f.iter().zip(v.iter().zip([0, 1, 0, 1, 0, 1])) {
            assert_eq!(*g, l * d[i]);
        }
    }
}
