//! The products' kernel on x86: AVX-512, or AVX2 with FMA.

use std::arch::x86_64::*;

use super::{Kernel, Operands};

/// One block of `n` tiles by one panel: `out[t · ots + (j / 8) · ogs + j % 8] =
/// bias[j] + Σ_ci w[ci · width + j] · v[(ci / G) · vrs + t · its + ci % G]` for `t < n`,
/// `j < valid` (`G` = `ops.group`; a null `bias` is zero).
///
/// # Safety
/// `w` holds `cin · width` values, `bias` (unless null) `width`, `v` every value the sum
/// reads, `out` every value written; `kernel` runs on this CPU, `n` is at most its block,
/// `ops.group` is 1 or 8 and divides `cin`.
pub(super) unsafe fn block(
    kernel: Kernel,
    n: usize,
    [w, v, bias, out]: [*const f32; 4],
    cin: usize,
    ops: Operands,
    valid: usize,
) {
    let out = out.cast_mut();
    macro_rules! by_count {
        ($f:ident, $g:literal, $($n:literal)*) => {
            match n {
                $($n => unsafe { $f::<$n, $g>(w, v, bias, out, cin, ops, valid) },)*
                _ => unreachable!("a block of {n} tiles"),
            }
        };
    }
    match (kernel, ops.group) {
        (Kernel::Avx512, 1) => by_count!(avx512, 1, 1 2 3 4 5 6 7 8 9 10 11 12),
        (Kernel::Avx512, _) => by_count!(avx512, 8, 1 2 3 4 5 6 7 8 9 10 11 12),
        (Kernel::Avx2, 1) => by_count!(avx2, 1, 1 2 3 4 5 6),
        (Kernel::Avx2, _) => by_count!(avx2, 8, 1 2 3 4 5 6),
        (Kernel::Crate, _) => unreachable!("the crate has no blocks"),
    }
}

/// Output channels `8g..8g + 8` of one tile at `o`, the first `valid - 8g` of them.
///
/// # Safety
/// `o` holds those channels' values; AVX runs on this CPU.
#[target_feature(enable = "avx")]
unsafe fn store8(o: *mut f32, x: __m256, lanes: usize) {
    if lanes >= 8 {
        // SAFETY: the caller's eight values
        unsafe { _mm256_storeu_ps(o, x) };
    } else if lanes > 0 {
        let mut tmp = [0.0f32; 8];
        // SAFETY: a local array of 8, then the caller's `lanes` values
        unsafe {
            _mm256_storeu_ps(tmp.as_mut_ptr(), x);
            std::ptr::copy_nonoverlapping(tmp.as_ptr(), o, lanes);
        }
    }
}

/// [`block`] on AVX-512: 32 output channels as two vectors, `T` tiles broadcast.
#[target_feature(enable = "avx512f")]
unsafe fn avx512<const T: usize, const G: usize>(
    w: *const f32,
    v: *const f32,
    bias: *const f32,
    out: *mut f32,
    cin: usize,
    ops: Operands,
    valid: usize,
) {
    let init = if bias.is_null() {
        [_mm512_setzero_ps(); 2]
    } else {
        // SAFETY: the panel's bias, `width` values
        unsafe { [_mm512_loadu_ps(bias), _mm512_loadu_ps(bias.add(16))] }
    };
    let mut acc = [init; T];
    for cg in 0..cin / G {
        // SAFETY: inside the panel and the tiles, as the caller promises
        unsafe {
            let group = v.add(cg * ops.vrs);
            for k in 0..G {
                let ci = cg * G + k;
                let a0 = _mm512_loadu_ps(w.add(ci * 32));
                let a1 = _mm512_loadu_ps(w.add(ci * 32 + 16));
                for (t, acc) in acc.iter_mut().enumerate() {
                    let x = _mm512_set1_ps(*group.add(t * ops.its + k));
                    acc[0] = _mm512_fmadd_ps(a0, x, acc[0]);
                    acc[1] = _mm512_fmadd_ps(a1, x, acc[1]);
                }
            }
        }
    }
    let mask = |from: usize| -> __mmask16 {
        let lanes = valid.saturating_sub(from).min(16);
        ((1u32 << lanes) - 1) as __mmask16
    };
    for (t, acc) in acc.iter().enumerate() {
        let o = out.wrapping_add(t * ops.ots);
        if ops.ogs == 8 {
            // SAFETY: masked stores touch only the `valid` channels of tile t
            unsafe {
                _mm512_mask_storeu_ps(o, mask(0), acc[0]);
                _mm512_mask_storeu_ps(o.wrapping_add(16), mask(16), acc[1]);
            }
            continue;
        }
        for (h, x) in acc.iter().enumerate() {
            // SAFETY: the halves of a 512-bit vector; each group's values of tile t
            unsafe {
                let lo = _mm512_castps512_ps256(*x);
                let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(*x), 1));
                for (k, half) in [lo, hi].into_iter().enumerate() {
                    let g = 2 * h + k;
                    let o = o.wrapping_add(g * ops.ogs);
                    store8(o, half, valid.saturating_sub(8 * g));
                }
            }
        }
    }
}

/// [`block`] on AVX2: 16 output channels as two vectors, `T` tiles broadcast.
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2<const T: usize, const G: usize>(
    w: *const f32,
    v: *const f32,
    bias: *const f32,
    out: *mut f32,
    cin: usize,
    ops: Operands,
    valid: usize,
) {
    let init = if bias.is_null() {
        [_mm256_setzero_ps(); 2]
    } else {
        // SAFETY: the panel's bias, `width` values
        unsafe { [_mm256_loadu_ps(bias), _mm256_loadu_ps(bias.add(8))] }
    };
    let mut acc = [init; T];
    for cg in 0..cin / G {
        // SAFETY: inside the panel and the tiles, as the caller promises
        unsafe {
            let group = v.add(cg * ops.vrs);
            for k in 0..G {
                let ci = cg * G + k;
                let a0 = _mm256_loadu_ps(w.add(ci * 16));
                let a1 = _mm256_loadu_ps(w.add(ci * 16 + 8));
                for (t, acc) in acc.iter_mut().enumerate() {
                    let x = _mm256_set1_ps(*group.add(t * ops.its + k));
                    acc[0] = _mm256_fmadd_ps(a0, x, acc[0]);
                    acc[1] = _mm256_fmadd_ps(a1, x, acc[1]);
                }
            }
        }
    }
    for (t, acc) in acc.iter().enumerate() {
        let o = out.wrapping_add(t * ops.ots);
        for (g, x) in acc.iter().enumerate() {
            // SAFETY: each group's values of tile t, as the caller promises
            unsafe { store8(o.wrapping_add(g * ops.ogs), *x, valid.saturating_sub(8 * g)) };
        }
    }
}
