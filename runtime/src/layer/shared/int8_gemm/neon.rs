//! The int8 products on Arm's dot-product extension (`sdot`, FEAT_DotProd): four signed byte
//! products summed into each int32 lane, the weights' four levels taken by lane from a register
//! (the by-element form), so a block of 8 rows × 8 columns stays in 16 accumulators. The
//! instruction is written as inline assembly: Rust's `vdotq_laneq_s32` is not stable.

use std::arch::aarch64::*;
use std::arch::asm;

use super::{BLOCK, PANEL};

/// Whether this CPU has the dot-product instructions.
pub(super) fn detected() -> bool {
    std::arch::is_aarch64_feature_detected!("dotprod")
}

/// The `k × n` levels `b` (rows `ldb` apart) as [`block_8x32`] reads them: signed, as they
/// are ([`super::pack_panels`]).
pub(super) fn pack_panels(k: usize, b: (&[i8], usize), n: usize) -> Vec<u8> {
    super::pack_panels(k, b, n, 0, None)
}

/// `acc += b · a[LANE]`: each int32 lane of `acc` adds the dot product of its four bytes of
/// `b` with the four bytes of lane `LANE` of `a`.
macro_rules! sdot_lane {
    ($acc:expr, $b:expr, $a:expr, $lane:literal) => {
        // SAFETY: register operands only; the caller's target feature enables the instruction
        unsafe {
            asm!(
                concat!("sdot {acc:v}.4s, {b:v}.16b, {a:v}.4b[", $lane, "]"),
                acc = inout(vreg) $acc,
                b = in(vreg) $b,
                a = in(vreg) $a,
                options(pure, nomem, nostack),
            )
        }
    };
}

/// One block of rows times one packed panel: 8 × 32 sums into `out`, eight columns at a time.
#[target_feature(enable = "neon,dotprod")]
pub(super) fn block_8x32(words: &[i32], panel: &[u8], out: &mut [i32]) {
    let k4 = words.len() / BLOCK;
    assert!(panel.len() >= k4 * 4 * PANEL && out.len() >= BLOCK * PANEL);
    for s in 0..PANEL / 8 {
        let mut acc = [vdupq_n_s32(0); 2 * BLOCK];
        for t in 0..k4 {
            // SAFETY: inside `words` and `panel` (checked above)
            let (a0, a1, b0, b1) = unsafe {
                let w = words.as_ptr().add(t * BLOCK).cast::<i8>();
                let p = panel.as_ptr().add(t * 4 * PANEL + s * 32).cast::<i8>();
                (
                    vld1q_s8(w),
                    vld1q_s8(w.add(16)),
                    vld1q_s8(p),
                    vld1q_s8(p.add(16)),
                )
            };
            sdot_lane!(acc[0], b0, a0, "0");
            sdot_lane!(acc[1], b1, a0, "0");
            sdot_lane!(acc[2], b0, a0, "1");
            sdot_lane!(acc[3], b1, a0, "1");
            sdot_lane!(acc[4], b0, a0, "2");
            sdot_lane!(acc[5], b1, a0, "2");
            sdot_lane!(acc[6], b0, a0, "3");
            sdot_lane!(acc[7], b1, a0, "3");
            sdot_lane!(acc[8], b0, a1, "0");
            sdot_lane!(acc[9], b1, a1, "0");
            sdot_lane!(acc[10], b0, a1, "1");
            sdot_lane!(acc[11], b1, a1, "1");
            sdot_lane!(acc[12], b0, a1, "2");
            sdot_lane!(acc[13], b1, a1, "2");
            sdot_lane!(acc[14], b0, a1, "3");
            sdot_lane!(acc[15], b1, a1, "3");
        }
        for r in 0..BLOCK {
            let o = &mut out[r * PANEL + s * 8..r * PANEL + s * 8 + 8];
            // SAFETY: eight int32 into `o`
            unsafe {
                vst1q_s32(o.as_mut_ptr(), acc[2 * r]);
                vst1q_s32(o.as_mut_ptr().add(4), acc[2 * r + 1]);
            }
        }
    }
}
