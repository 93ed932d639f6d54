//! The int8 products as int32 loops over the stored rows: any CPU, and the reference the
//! vector kernels are tested against.

use super::{BLOCK, Int8Rows, PANEL};

/// Block `block`'s rows of `a × b`, columns `n0..n0 + cols`, into `out` ([`BLOCK`] rows of
/// [`PANEL`] sums): four rows at a time over fixed-size column runs, which the compiler turns
/// into vector multiply-adds.
pub(super) fn block(
    a: &Int8Rows,
    block: usize,
    (b, ldb): (&[i8], usize),
    (n0, cols): (usize, usize),
    out: &mut [i32],
) {
    const ROWS: usize = 4;
    let mut column = [0i8; PANEL];
    let first = block * BLOCK;
    let last = (first + BLOCK).min(a.rows);
    for r0 in (first..last).step_by(ROWS) {
        let mut acc = [[0i32; PANEL]; ROWS];
        let rows = (last - r0).min(ROWS);
        for k in 0..a.k {
            column[..cols].copy_from_slice(&b[k * ldb + n0..][..cols]);
            let mut w = [0i32; ROWS];
            for (i, w) in w.iter_mut().enumerate().take(rows) {
                *w = a.levels[(r0 + i) * a.k + k] as i32;
            }
            for (acc, w) in acc.iter_mut().zip(w) {
                for (s, &x) in acc.iter_mut().zip(&column) {
                    *s += w * x as i32;
                }
            }
        }
        for (i, acc) in acc.iter().enumerate().take(rows) {
            let at = (r0 - first + i) * PANEL;
            out[at..at + PANEL].copy_from_slice(acc);
        }
    }
}

/// Block `block`'s rows' dot products with `x`, into `y`.
pub(super) fn dot_block(a: &Int8Rows, block: usize, x: &[i8], y: &mut [i32]) {
    for (i, y) in y.iter_mut().enumerate() {
        let r = block * BLOCK + i;
        let row = &a.levels[r * a.k..(r + 1) * a.k];
        *y = row.iter().zip(x).map(|(&w, &v)| w as i32 * v as i32).sum();
    }
}
