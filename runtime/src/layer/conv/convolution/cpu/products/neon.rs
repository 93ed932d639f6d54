//! The products' kernel on aarch64: NEON, panels of 16 output channels as four vectors.

use std::arch::aarch64::*;

use super::Operands;

/// One block of `n` tiles by one panel: `out[t · ots + (j / 4) · ogs + j % 4] = bias[j] +
/// Σ_ci w[ci · 16 + j] · v[(ci / G) · vrs + t · its + ci % G]` for `t < n`, `j < valid`
/// (`G` = `ops.group`; a null `bias` is zero).
///
/// # Safety
/// `w` holds `cin · 16` values, `bias` (unless null) 16, `v` every value the sum reads, `out`
/// every value written; `n` is at most 6, `ops.group` is 1 or 4 and divides `cin`.
pub(super) unsafe fn block(
    n: usize,
    [w, v, bias, out]: [*const f32; 4],
    cin: usize,
    ops: Operands,
    valid: usize,
) {
    let out = out.cast_mut();
    macro_rules! by_count {
        ($g:literal, $($n:literal)*) => {
            match n {
                $($n => unsafe { panel::<$n, $g>(w, v, bias, out, cin, ops, valid) },)*
                _ => unreachable!("a block of {n} tiles"),
            }
        };
    }
    match ops.group {
        1 => by_count!(1, 1 2 3 4 5 6),
        _ => by_count!(4, 1 2 3 4 5 6),
    }
}

/// Output channels `4g..4g + 4` of one tile at `o`, the first `lanes` of them.
///
/// # Safety
/// `o` holds those channels' values.
#[target_feature(enable = "neon")]
unsafe fn store4(o: *mut f32, x: float32x4_t, lanes: usize) {
    if lanes >= 4 {
        // SAFETY: the caller's four values
        unsafe { vst1q_f32(o, x) };
    } else if lanes > 0 {
        let mut tmp = [0.0f32; 4];
        // SAFETY: a local array of 4, then the caller's `lanes` values
        unsafe {
            vst1q_f32(tmp.as_mut_ptr(), x);
            std::ptr::copy_nonoverlapping(tmp.as_ptr(), o, lanes);
        }
    }
}

/// [`block`] for `T` tiles, each broadcast against the panel's four weight vectors (4 + 4T
/// of the 32 vector registers hold the weights and sums).
#[target_feature(enable = "neon")]
unsafe fn panel<const T: usize, const G: usize>(
    w: *const f32,
    v: *const f32,
    bias: *const f32,
    out: *mut f32,
    cin: usize,
    ops: Operands,
    valid: usize,
) {
    let init = if bias.is_null() {
        [vdupq_n_f32(0.0); 4]
    } else {
        // SAFETY: the panel's bias, 16 values
        unsafe { std::array::from_fn(|q| vld1q_f32(bias.add(4 * q))) }
    };
    let mut acc = [init; T];
    for cg in 0..cin / G {
        // SAFETY: inside the panel and the tiles, as the caller promises
        unsafe {
            let group = v.add(cg * ops.vrs);
            for k in 0..G {
                let row = w.add((cg * G + k) * 16);
                let a: [float32x4_t; 4] = std::array::from_fn(|q| vld1q_f32(row.add(4 * q)));
                for (t, acc) in acc.iter_mut().enumerate() {
                    let x = *group.add(t * ops.its + k);
                    for (s, a) in acc.iter_mut().zip(a) {
                        *s = vfmaq_n_f32(*s, a, x);
                    }
                }
            }
        }
    }
    for (t, acc) in acc.iter().enumerate() {
        let o = out.wrapping_add(t * ops.ots);
        for (g, x) in acc.iter().enumerate() {
            // SAFETY: each group's values of tile t, as the caller promises
            unsafe { store4(o.wrapping_add(g * ops.ogs), *x, valid.saturating_sub(4 * g)) };
        }
    }
}
