//! `Bᵀ d B`: the input transform, a chunk of one channel's tiles at a time.

use multiversion::multiversion;

use super::LANES;
use super::transform::sandwich_t;
use crate::layer::kernels;

/// `Bᵀ d B` as [`input_tiles`] computes it, [`LANES`] neighbouring tiles of a tile row at a
/// time, one per vector lane: the tile row's `N` input rows are first split into their `M`
/// phases (phase `p` holds columns `p, p + M, …`), so that value `(y, x)` of tiles
/// `tx..tx + LANES` is one contiguous run (phase `x mod M` from `tx + x / M`), and each
/// transformed element of those tiles one contiguous run of `dst` (rows `rs` apart, at least
/// [`LANES`] past the chunk's `tc` tiles, so that every store is a whole vector; copies of a
/// run-time length are calls to `memmove`, as costly as the arithmetic). For maps of at least
/// [`WIDE_TILES`] tiles per row: fewer fill too few lanes.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
#[allow(clippy::too_many_arguments)]
pub(super) fn input_tiles_wide<const M: usize, const N: usize>(
    bt: &[[f32; N]; N],
    src: &[f32],
    ew: usize,
    tw: usize,
    [t0, tc, rs]: [usize; 3],
    dst: &mut [f32],
    phased: &mut Vec<f32>,
) {
    let cols = ew.div_ceil(M);
    // a whole vector's load from any phase start stays inside
    phased.resize(N * M * cols + LANES, 0.0);
    let mut t = t0;
    while t < t0 + tc {
        let (ty, tx0) = (t / tw, t % tw);
        let tx1 = tw.min(tx0 + t0 + tc - t);
        for y in 0..N {
            let line = &src[(ty * M + y) * ew..][..ew];
            kernels::split_phases(line, M, |p| (y * M + p) * cols, cols, phased);
        }
        for tx in (tx0..tx1).step_by(LANES) {
            let mut d = [[[0.0f32; LANES]; N]; N];
            for (y, row) in d.iter_mut().enumerate() {
                for (x, v) in row.iter_mut().enumerate() {
                    let at = (y * M + x % M) * cols + tx + x / M;
                    v.copy_from_slice(&phased[at..at + LANES]);
                }
            }
            // r = Bᵀ d, then Bᵀ d B = r B: element (i, j) at e[i][j]
            let mut r = [[[0.0f32; LANES]; N]; N];
            for (rr, br) in r.iter_mut().zip(bt) {
                for (b, dr) in br.iter().zip(&d) {
                    if *b != 0.0 {
                        for (rv, dv) in rr.iter_mut().zip(dr) {
                            for (x, y) in rv.iter_mut().zip(dv) {
                                *x += b * y;
                            }
                        }
                    }
                }
            }
            let first = ty * tw + tx - t0;
            for (i, rr) in r.iter().enumerate() {
                for (j, br) in bt.iter().enumerate() {
                    let mut e = [0.0f32; LANES];
                    for (b, rv) in br.iter().zip(rr) {
                        if *b != 0.0 {
                            for (x, y) in e.iter_mut().zip(rv) {
                                *x += b * y;
                            }
                        }
                    }
                    // whole vectors: lanes past the tile row belong to later tiles, written
                    // after this, or to the row's padding
                    let at = (i * N + j) * rs + first;
                    dst[at..at + LANES].copy_from_slice(&e);
                }
            }
        }
        t = ty * tw + tx1;
    }
}

/// The fewest tiles per row for which [`input_tiles_wide`] pays.
pub(super) const WIDE_TILES: usize = 8;

/// `Bᵀ d B` of tiles `t0..t0 + tc` of one channel's plane (rows `ew` apart, `tw` tiles per
/// row), into `dst` as `[n²][rs]` (`rs ≥ tc`): each element of the tile a contiguous row of
/// the GEMM's right-hand side.
#[multiversion(targets("x86_64+avx2+fma", "aarch64+neon"))]
#[allow(clippy::too_many_arguments)]
pub(super) fn input_tiles<const M: usize, const N: usize>(
    bt: &[[f32; N]; N],
    src: &[f32],
    ew: usize,
    tw: usize,
    [t0, tc, rs]: [usize; 3],
    dst: &mut [f32],
) {
    for t in 0..tc {
        let (ty, tx) = ((t0 + t) / tw, (t0 + t) % tw);
        let mut d = [[0.0f32; N]; N];
        for (y, row) in d.iter_mut().enumerate() {
            let at = (ty * M + y) * ew + tx * M;
            row.copy_from_slice(&src[at..at + N]);
        }
        // (Bᵀ d B)ᵀ: element (i, j) at [j][i]
        let x = sandwich_t(bt, &d, bt);
        for (j, col) in x.iter().enumerate() {
            for (i, val) in col.iter().enumerate() {
                dst[(i * N + j) * rs + t] = *val;
            }
        }
    }
}
