//! The int8 products as int32 loops over the stored rows: any CPU, and the reference the
//! vector kernels are tested against.

use super::{BLOCK, Int8Rows, PANEL};

/// Columns `n0..n0 + cols` of `a × b` into `out` (every row, [`PANEL`] sums each): four rows
/// at a time over fixed-size column runs, which the compiler turns into vector multiply-adds.
pub(super) fn panel(
    a: &Int8Rows,
    (b, ldb): (&[i8], usize),
    (n0, cols): (usize, usize),
    out: &mut [i32],
) {
    const ROWS: usize = 4;
    let mut column = [0i8; PANEL];
    for r0 in (0..a.rows).step_by(ROWS) {
        let mut acc = [[0i32; PANEL]; ROWS];
        let rows = (a.rows - r0).min(ROWS);
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
            out[(r0 + i) * PANEL..(r0 + i + 1) * PANEL].copy_from_slice(acc);
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
