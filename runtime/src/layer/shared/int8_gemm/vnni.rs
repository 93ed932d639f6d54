//! The int8 products on AVX-512 VNNI: `vpdpbusd` adds four byte products into each of 16
//! int32 lanes, the activations as unsigned bytes (`x + 128`) and the weights as signed ones.

use std::arch::x86_64::*;

use super::{BLOCK, Int8Rows, PANEL, k4_of};

/// Whether this CPU has AVX-512 VNNI (and the AVX-512 F and BW it builds on).
pub(super) fn detected() -> bool {
    is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512vnni")
}

/// The `k × n` levels `b` (rows `ldb` apart) as [`block_8x32`] reads them: offset by 128
/// ([`super::pack_panels`]), whole groups of four rows interleaved with AVX-512 shuffles.
pub(super) fn pack_panels(k: usize, b: (&[i8], usize), n: usize) -> Vec<u8> {
    // SAFETY: the caller chose this kernel where `detected()` held
    let interleave = |rows: [&[i8]; 4], dst: &mut [u8]| unsafe { interleave_4(rows, dst) };
    super::pack_panels(k, b, n, 0x80, Some(&interleave))
}

/// Four rows of 32 levels into the panel's layout, each column's four bytes together,
/// offset by 128: byte interleaves within 128-bit lanes, then the lanes put in column order.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn interleave_4(rows: [&[i8]; 4], dst: &mut [u8]) {
    assert!(rows.iter().all(|r| r.len() >= PANEL) && dst.len() >= 4 * PANEL);
    let offset = _mm256_set1_epi8(-128);
    // SAFETY: 32 bytes from each row (checked above)
    let [r0, r1, r2, r3] =
        rows.map(|r| unsafe { _mm256_xor_si256(_mm256_loadu_si256(r.as_ptr().cast()), offset) });
    // lane 0 columns 0–15, lane 1 columns 16–31
    let (a, b) = (_mm256_unpacklo_epi8(r0, r1), _mm256_unpackhi_epi8(r0, r1));
    let (c, d) = (_mm256_unpacklo_epi8(r2, r3), _mm256_unpackhi_epi8(r2, r3));
    // columns 0–3 | 16–19, 4–7 | 20–23, 8–11 | 24–27, 12–15 | 28–31
    let (q0, q1) = (_mm256_unpacklo_epi16(a, c), _mm256_unpackhi_epi16(a, c));
    let (q2, q3) = (_mm256_unpacklo_epi16(b, d), _mm256_unpackhi_epi16(b, d));
    let out = [
        _mm256_permute2x128_si256::<0x20>(q0, q1),
        _mm256_permute2x128_si256::<0x20>(q2, q3),
        _mm256_permute2x128_si256::<0x31>(q0, q1),
        _mm256_permute2x128_si256::<0x31>(q2, q3),
    ];
    for (i, v) in out.into_iter().enumerate() {
        // SAFETY: 32 bytes at 32 · i, inside `dst` (checked above)
        unsafe { _mm256_storeu_si256(dst.as_mut_ptr().add(32 * i).cast(), v) };
    }
}

/// One block of rows times one packed panel: 8 × 32 sums into `out`.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub(super) fn block_8x32(words: &[i32], panel: &[u8], sums: [i32; BLOCK], out: &mut [i32]) {
    let k4 = words.len() / BLOCK;
    assert!(panel.len() >= k4 * 4 * PANEL && out.len() >= BLOCK * PANEL);
    let mut acc = [_mm512_setzero_si512(); 2 * BLOCK];
    for t in 0..k4 {
        // SAFETY: inside `panel` (checked above): 128 bytes from t · 128
        let (b0, b1) = unsafe {
            let p = panel.as_ptr().add(t * 4 * PANEL);
            (
                _mm512_loadu_si512(p.cast()),
                _mm512_loadu_si512(p.add(64).cast()),
            )
        };
        let w = &words[t * BLOCK..(t + 1) * BLOCK];
        for r in 0..BLOCK {
            let wr = _mm512_set1_epi32(w[r]);
            acc[2 * r] = _mm512_dpbusd_epi32(acc[2 * r], b0, wr);
            acc[2 * r + 1] = _mm512_dpbusd_epi32(acc[2 * r + 1], b1, wr);
        }
    }
    for r in 0..BLOCK {
        // the activations' +128 times the row's levels
        let offset = _mm512_set1_epi32(sums[r].wrapping_mul(128));
        let o = &mut out[r * PANEL..(r + 1) * PANEL];
        // SAFETY: `o` holds 32 values: two stores of 16
        unsafe {
            _mm512_storeu_si512(o.as_mut_ptr().cast(), _mm512_sub_epi32(acc[2 * r], offset));
            _mm512_storeu_si512(
                o.as_mut_ptr().add(16).cast(),
                _mm512_sub_epi32(acc[2 * r + 1], offset),
            );
        }
    }
}

/// Block `block`'s rows' dot products with `x`, into `y` (at most [`BLOCK`] long).
pub(super) fn dot_block(a: &Int8Rows, block: usize, x: &[i8], y: &mut [i32]) {
    let k4 = k4_of(a.k);
    // x as words of four offset bytes, padded with activation 0
    let mut xw = vec![i32::from_le_bytes([0x80; 4]); k4];
    for (w, four) in xw.iter_mut().zip(x[..a.k].chunks(4)) {
        let mut bytes = [0x80u8; 4];
        for (b, &v) in bytes.iter_mut().zip(four) {
            *b = v as u8 ^ 0x80;
        }
        *w = i32::from_le_bytes(bytes);
    }
    // SAFETY: `detected()` held for the caller to choose this kernel
    let sums = unsafe { dot_8(a.block(block), &xw) };
    let rows = a.block_sums(block);
    for (i, y) in y.iter_mut().enumerate() {
        *y = sums[i].wrapping_sub(rows[i].wrapping_mul(128));
    }
}

/// A block's eight dot products with the offset words `xw`: two groups of four k per
/// instruction, lanes 0–7 the even groups' and 8–15 the odd ones'.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn dot_8(words: &[i32], xw: &[i32]) -> [i32; BLOCK] {
    let k4 = words.len() / BLOCK;
    assert!(xw.len() >= k4 && k4.is_multiple_of(2));
    let mut acc = _mm512_setzero_si512();
    for t in (0..k4).step_by(2) {
        // SAFETY: 16 words from t · 8, inside `words` (k4 · 8 long, k4 even)
        let w = unsafe { _mm512_loadu_si512(words.as_ptr().add(t * BLOCK).cast()) };
        let x = _mm512_inserti64x4::<1>(
            _mm512_castsi256_si512(_mm256_set1_epi32(xw[t])),
            _mm256_set1_epi32(xw[t + 1]),
        );
        acc = _mm512_dpbusd_epi32(acc, x, w);
    }
    let halves = _mm256_add_epi32(
        _mm512_castsi512_si256(acc),
        _mm512_extracti64x4_epi64::<1>(acc),
    );
    let mut out = [0i32; BLOCK];
    // SAFETY: eight int32 into `out`
    unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), halves) };
    out
}
