//! `Bᵀ d B`: the input transform, a chunk of one channel's tiles at a time.

use multiversion::multiversion;

use super::super::sink::Sink;
use super::LANES;
use crate::layer::shared::kernels;

/// Where a channel's transformed tiles go: element `(i, j)` of tile `t` (counted from the
/// chunk's first) at `base + (i·N + j)·step + t` of the sink. The elements of one channel lie
/// `step` apart so that each element's rows of all channels are one contiguous matrix, the
/// products' right-hand side (a channel's elements side by side put each of its rows a page or
/// more from the next: a TLB miss per broadcast).
#[derive(Clone, Copy)]
pub(super) struct Rows {
    /// Where the channel's element (0, 0) row starts.
    pub(super) base: usize,
    /// From one element's row to the next.
    pub(super) step: usize,
}

/// `Bᵀ d B` as [`input_tiles`] computes it, [`LANES`] neighbouring tiles of a tile row at a
/// time, one per vector lane: the tile row's `N` input rows are first split into their `M`
/// phases (phase `p` holds columns `p, p + M, …`), so that value `(y, x)` of tiles
/// `tx..tx + LANES` is one contiguous run (phase `x mod M` from `tx + x / M`), and each
/// transformed element of those tiles one contiguous run of `dst` (laid out as `rows` says,
/// each row at least [`LANES`] past the chunk's `tc` tiles, so that every store is a whole
/// vector; copies of a run-time length are calls to `memmove`, as costly as the arithmetic).
/// For maps of at least [`WIDE_TILES`] tiles per row: fewer fill too few lanes.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
#[allow(clippy::too_many_arguments)]
pub(super) fn input_tiles_wide<const M: usize, const N: usize, S: Sink>(
    bt: &[[f32; N]; N],
    src: &[f32],
    ew: usize,
    tw: usize,
    [t0, tc]: [usize; 2],
    mut dst: S,
    rows: Rows,
    phased: &mut Vec<f32>,
) {
    let cols = ew.div_ceil(M);
    // a whole vector's load from any phase start stays inside
    phased.resize(N * M * cols + LANES, 0.0);
    // the tiles' values and the transform's scratch, overwritten at every step (zeroed arrays
    // inside the loop were a `memset` call per step: 7% of a 56² layer)
    let mut d = [[[0.0f32; LANES]; N]; N];
    let mut r = [[[0.0f32; LANES]; N]; N];
    let mut t = t0;
    while t < t0 + tc {
        let (ty, tx0) = (t / tw, t % tw);
        let tx1 = tw.min(tx0 + t0 + tc - t);
        for y in 0..N {
            let line = &src[(ty * M + y) * ew..][..ew];
            kernels::split_phases(line, M, |p| (y * M + p) * cols, cols, phased);
        }
        for tx in (tx0..tx1).step_by(LANES) {
            for (y, row) in d.iter_mut().enumerate() {
                for (x, v) in row.iter_mut().enumerate() {
                    let at = (y * M + x % M) * cols + tx + x / M;
                    v.copy_from_slice(&phased[at..at + LANES]);
                }
            }
            transform_lanes(bt, &d, &mut r, &mut dst, rows, ty * tw + tx - t0);
        }
        t = ty * tw + tx1;
    }
}

/// The fewest tiles per row for which [`input_tiles_wide`] pays.
pub(super) const WIDE_TILES: usize = 8;

/// `Bᵀ d B` of tiles `t0..t0 + tc` of one channel's plane (rows `ew` apart, `tw` tiles per
/// row), into `dst` as `rows` says (each row at least [`LANES`] past the chunk): each element
/// of the tile a contiguous row of the products' right-hand side. [`LANES`] consecutive tiles at a time, one per vector
/// lane, whatever rows they lie in: each tile's n² values are gathered into its lane, then the
/// transform is vector arithmetic and each element one vector store (tile by tile, the 6-wide
/// transform barely vectorized and its n² stores were scattered: a quarter of a 28² layer's
/// time at 2 threads, as much as its GEMMs).
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
#[allow(clippy::too_many_arguments)]
pub(super) fn input_tiles<const M: usize, const N: usize, S: Sink>(
    bt: &[[f32; N]; N],
    src: &[f32],
    ew: usize,
    tw: usize,
    [t0, tc]: [usize; 2],
    mut dst: S,
    rows: Rows,
) {
    let mut r = [[[0.0f32; LANES]; N]; N];
    for first in (0..tc).step_by(LANES) {
        // lanes past the chunk stay zero and land in the rows' slack
        let mut d = [[[0.0f32; LANES]; N]; N];
        for l in 0..LANES.min(tc - first) {
            let t = t0 + first + l;
            let corner = (t / tw) * M * ew + (t % tw) * M;
            for (y, row) in d.iter_mut().enumerate() {
                let line = &src[corner + y * ew..][..N];
                for (v, x) in row.iter_mut().zip(line) {
                    v[l] = *x;
                }
            }
        }
        transform_lanes(bt, &d, &mut r, &mut dst, rows, first);
    }
}

/// `Bᵀ d B` of the `L` lanes in `d` (`d[y][x][lane]`: [`LANES`] tiles, or a packed blob's
/// channels of one tile), element `(i, j)` stored as one whole vector at `first` of its row in
/// `dst` (lanes past the tiles belong to later tiles, written after this, or to the rows'
/// slack).
#[inline(always)]
pub(super) fn transform_lanes<const N: usize, const L: usize, S: Sink>(
    bt: &[[f32; N]; N],
    d: &[[[f32; L]; N]; N],
    r: &mut [[[f32; L]; N]; N],
    dst: &mut S,
    rows: Rows,
    first: usize,
) {
    // r = Bᵀ d (into the caller's scratch, every vector overwritten), then Bᵀ d B = r B:
    // element (i, j) at e[i][j]
    for (rr, br) in r.iter_mut().zip(bt) {
        for (x, rv) in rr.iter_mut().enumerate() {
            let mut acc = [0.0f32; L];
            for (b, dr) in br.iter().zip(d) {
                if *b != 0.0 {
                    for (a, y) in acc.iter_mut().zip(&dr[x]) {
                        *a = b.mul_add(*y, *a);
                    }
                }
            }
            *rv = acc;
        }
    }
    for (i, rr) in r.iter().enumerate() {
        for (j, br) in bt.iter().enumerate() {
            let mut e = [0.0f32; L];
            for (b, rv) in br.iter().zip(rr) {
                if *b != 0.0 {
                    for (x, y) in e.iter_mut().zip(rv) {
                        *x = b.mul_add(*y, *x);
                    }
                }
            }
            dst.put(rows.base + (i * N + j) * rows.step + first, &e);
        }
    }
}
