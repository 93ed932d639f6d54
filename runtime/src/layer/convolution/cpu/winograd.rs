//! Winograd F(m×m, 3×3) for 3×3 stride-1 convolutions (ncnn's choice on x86 and ARM): each m×m
//! output tile from an n×n input tile (n = m + 2) as `Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A`, the
//! element-wise products of all tiles and channels as n² GEMMs (output channels × input
//! channels times input channels × tiles). F(4,3) (36 products for 16 outputs, against 144
//! for the direct form), F(2,3) (16 for 4) where the map is small against the channels.
//!
//! The matrices come from their interpolation points (Cook–Toom), computed at compile time:
//! `Aᵀ[i][j] = p_jⁱ`, `G[j][k] = p_jᵏ / Π_{l≠j}(p_j − p_l)`, row j of `Bᵀ` the coefficients of
//! `Π_{l≠j}(x − p_l)`, and the point at infinity as the last row/column.

use std::sync::OnceLock;

use multiversion::multiversion;
use rayon::prelude::*;

use super::super::{Convolution, Geometry};
use super::Planes;
use crate::layer::cpu_gemm::{MatMut, MatRef, gemm_serial};
use crate::layer::fused_activation::activate_all;
use crate::layer::grain::min_items;
use crate::layer::kernels;
use crate::tensor::pool::Scratch;

/// The values one chunk of tiles holds in the transformed domain, input and products (4 MiB
/// of fp32): the output transform reads each tile's n² products from n² rows of the products,
/// which must still be in cache; more tiles per chunk only lengthen the GEMMs' rows, which
/// reach full speed by [`MIN_CHUNK`] tiles.
const CHUNK_VALUES: usize = 1 << 20;

/// The fewest tiles a chunk takes when the map has them (each chunk re-reads the weights).
const MIN_CHUNK: usize = 64;

/// The values a chunk of tiles holds in the transformed domain, input and products, where each
/// thread takes whole chunks (1 MiB of fp32: the chunk stays in the thread's own L2 from the
/// input transform to the output transform).
const THREAD_CHUNK_VALUES: usize = 1 << 18;

/// The fewest threads on which chunks per task pay (an H200 host, zoo models, best of rounds:
/// vgg16 32.4 → 26.4 ms at 16 threads, but 93 → 118 at 2, where the phases' loops cost little
/// and the smaller chunks' GEMMs, whose rows are a quarter as long, lose).
const MIN_CHUNK_THREADS: usize = 8;

/// The fewest tiles a GEMM of the products takes when they are cut for the threads: the
/// crate's kernels take 6 or 8 columns at a time and pack the weights again for each run.
const MIN_RUN: usize = 16;

/// One tile size's transforms: `M` outputs per side from `N = M + 2` inputs.
struct Transform<const M: usize, const N: usize> {
    at: [[f32; N]; M],
    g: [[f32; 3]; N],
    bt: [[f32; N]; N],
}

/// The transforms through the `N - 1` finite points `pts`.
const fn transform<const M: usize, const N: usize>(pts: &[f64]) -> Transform<M, N> {
    let mut at = [[0.0f32; N]; M];
    let mut g = [[0.0f32; 3]; N];
    let mut bt = [[0.0f32; N]; N];
    let mut j = 0;
    while j < N {
        // the coefficients of Π(x − p_l) over l ≠ j (all l for the point at infinity)
        let mut poly = [0.0f64; N];
        poly[0] = 1.0;
        let mut deg = 0;
        let mut f = 1.0f64;
        let mut l = 0;
        while l < N - 1 {
            if l != j {
                let mut d = deg + 1;
                while d > 0 {
                    poly[d] = poly[d - 1] - pts[l] * poly[d];
                    d -= 1;
                }
                poly[0] *= -pts[l];
                deg += 1;
                if j < N - 1 {
                    f *= pts[j] - pts[l];
                }
            }
            l += 1;
        }
        let mut i = 0;
        while i < N {
            bt[j][i] = poly[i] as f32;
            i += 1;
        }
        if j < N - 1 {
            let mut p = 1.0f64;
            let mut i = 0;
            while i < M || i < 3 {
                if i < M {
                    at[i][j] = p as f32;
                }
                if i < 3 {
                    g[j][i] = (p / f) as f32;
                }
                p *= pts[j];
                i += 1;
            }
        }
        j += 1;
    }
    at[M - 1][N - 1] = 1.0;
    g[N - 1][2] = 1.0;
    Transform { at, g, bt }
}

const F23: Transform<2, 4> = transform(&[0.0, 1.0, -1.0]);
const F43: Transform<4, 6> = transform(&[0.0, 1.0, -1.0, 2.0, -2.0]);
/// F(4,3) through 0, ±√2, ±√2/2: transformed values within about 20× the input's (100× with
/// 0, ±1, ±2), for the GPU, whose fp16 storage rounds them (ncnn's Vulkan points).
const F43_BALANCED: Transform<4, 6> = transform(&[
    0.0,
    std::f64::consts::SQRT_2,
    -std::f64::consts::SQRT_2,
    std::f64::consts::FRAC_1_SQRT_2,
    -std::f64::consts::FRAC_1_SQRT_2,
]);

/// The weights in a tile size's domain, made once per layer on first use: `[n²][num_output][channels]`.
#[derive(Default)]
pub(crate) struct WinogradWeights {
    f23: OnceLock<Vec<f32>>,
    f43: OnceLock<Vec<f32>>,
}

/// The fewest input channels for which F(4,3) pays: below, the transforms outweigh the
/// products they save, and the im2col GEMM is faster (an H200 host, squeezenet's fire layers
/// alone, ms at 16 / 2 threads, Winograd against im2col: 55²·16 → 64 0.55 / 0.33 and 0.61 /
/// 0.54; 27²·32 → 128 0.29 / 0.22 and 0.35 / 0.33; 13²·48 → 192 and 13²·64 → 256 even).
const MIN_F43_CHANNELS: usize = 32;

/// Which tile size, if any, a 3×3 stride-1 dense layer of `cin → cout` channels takes on an
/// output of `ow × oh`: F(4,3) from [`MIN_F43_CHANNELS`] input channels, or F(2,3) on maps up
/// to 8 and on maps up to 14 once both sides have 128 channels (ncnn's x86 tables in outline: the transformed weights are n²/9 times
/// the kernel's and outweigh such a map, and 4×4 tiles waste much of a small one). Measured
/// on one core (BENCHMARKS.md), F(6,3) lost to F(4,3) on every shape from 16 to 512 channels
/// and 7 to 224 pixels, by up to 1.6× (its 64 products per tile leave the cache between the
/// GEMMs and the output transform), so it is not offered.
pub(crate) fn tile_size(cin: usize, cout: usize, [ow, oh]: [usize; 2]) -> Option<usize> {
    if cin < 8 || cout < 8 {
        return None;
    }
    match ow.min(oh) {
        ..2 => None,
        2..=8 => Some(2),
        _ if cin < MIN_F43_CHANNELS => None,
        ..=14 if cin >= 128 && cout >= 128 => Some(2),
        _ => Some(4),
    }
}

/// `r · x · cᵀ` for an `R×K` `r`, a `K×K` `x` and a `C×K` `c` (the transforms' sandwich),
/// transposed: as row updates of whole `K`-wide rows, which vectorize, where the textbook
/// order would take dot products across rows.
#[inline(always)]
fn sandwich_t<const R: usize, const C: usize, const K: usize>(
    r: &[[f32; K]; R],
    x: &[[f32; K]; K],
    c: &[[f32; K]; C],
) -> [[f32; R]; C] {
    // t = r · x, row by row
    let mut t = [[0.0f32; K]; R];
    for (ti, ri) in t.iter_mut().zip(r) {
        for (w, xk) in ri.iter().zip(x) {
            for (a, v) in ti.iter_mut().zip(xk) {
                *a += w * v;
            }
        }
    }
    // yᵀ = c · tᵀ, again row by row over tᵀ's rows
    let mut tt = [[0.0f32; R]; K];
    for (i, ti) in t.iter().enumerate() {
        for (k, v) in ti.iter().enumerate() {
            tt[k][i] = *v;
        }
    }
    let mut y = [[0.0f32; R]; C];
    for (yj, cj) in y.iter_mut().zip(c) {
        for (w, tk) in cj.iter().zip(&tt) {
            for (a, v) in yj.iter_mut().zip(tk) {
                *a += w * v;
            }
        }
    }
    y
}

/// Channels (output transform) or tiles (input transform) computed together, one per vector
/// lane.
const LANES: usize = 16;

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
fn input_tiles_wide<const M: usize, const N: usize>(
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
const WIDE_TILES: usize = 8;

/// `Bᵀ d B` of tiles `t0..t0 + tc` of one channel's plane (rows `ew` apart, `tw` tiles per
/// row), into `dst` as `[n²][rs]` (`rs ≥ tc`): each element of the tile a contiguous row of
/// the GEMM's right-hand side.
#[multiversion(targets("x86_64+avx2+fma", "aarch64+neon"))]
#[allow(clippy::too_many_arguments)]
fn input_tiles<const M: usize, const N: usize>(
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

/// Where the output transform stores a tile's rows.
trait Sink {
    /// Writes `v` at `at` of the output.
    fn put(&mut self, at: usize, v: &[f32]);
}

impl Sink for &mut [f32] {
    fn put(&mut self, at: usize, v: &[f32]) {
        self[at..at + v.len()].copy_from_slice(v);
    }
}

/// The whole output shared by tasks that each store their own tiles (disjoint pixels of every
/// channel, so no safe split of the slice gives each its part).
#[derive(Clone, Copy)]
struct Shared {
    ptr: *mut f32,
    len: usize,
}

// SAFETY: every task that holds a copy writes only the outputs of its own tiles
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Sink for Shared {
    fn put(&mut self, at: usize, v: &[f32]) {
        assert!(at + v.len() <= self.len, "Winograd output index");
        // SAFETY: inside the output (checked above), which outlives the tasks; the tiles of
        // the tasks are disjoint, so no two write the same values and nothing reads them
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), self.ptr.add(at), v.len()) }
    }
}

/// What the output transform applies before it stores: the bias (empty without one) and the
/// layer's fused activation.
pub(super) struct Epilogue<'a> {
    pub bias: &'a [f32],
    pub kind: i32,
    pub params: &'a [f32],
}

/// `Aᵀ m A` of tiles `t0..t0 + tc` for the output channels `oc0..oc0 + planes`, `m` read from
/// `prod` (`[n²][tc][cout]`), plus the bias and through the activation, stored in those
/// channels' planes in `out` (`ow × oh`, `cstep` apart, the first at 0). [`LANES`] neighbouring channels at
/// a time, one per vector lane: their products lie side by side in `prod`, so each of a
/// tile's n² elements is one vector load, and the transform's arithmetic is vector arithmetic
/// (one channel at a time it was scalar, and gathered each value from its own row of `prod`).
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
#[allow(clippy::too_many_arguments)]
fn output_tiles<const M: usize, const N: usize, S: Sink>(
    at: &[[f32; N]; M],
    prod: &[f32],
    [cout, oc0, planes]: [usize; 3],
    [ow, oh]: [usize; 2],
    tw: usize,
    t0: usize,
    tc: usize,
    epilogue: &Epilogue<'_>,
    mut out: S,
    cstep: usize,
) {
    for l0 in (0..planes).step_by(LANES) {
        let lanes = LANES.min(planes - l0);
        for t in 0..tc {
            let (ty, tx) = ((t0 + t) / tw, (t0 + t) % tw);
            let (w, h) = (M.min(ow - tx * M), M.min(oh - ty * M));
            let mut m = [[[0.0f32; LANES]; N]; N];
            for (i, r) in m.iter_mut().enumerate() {
                for (j, v) in r.iter_mut().enumerate() {
                    // a whole vector: past the group, other values or the slack
                    let at = ((i * N + j) * tc + t) * cout + oc0 + l0;
                    v.copy_from_slice(&prod[at..at + LANES]);
                }
            }
            // t = Aᵀ m, then y = t A: output (i, j) at y[i][j]
            let mut tm = [[[0.0f32; LANES]; N]; M];
            for (tr, ar) in tm.iter_mut().zip(at) {
                for (a, mr) in ar.iter().zip(&m) {
                    for (tv, mv) in tr.iter_mut().zip(mr) {
                        for (x, y) in tv.iter_mut().zip(mv) {
                            *x += a * y;
                        }
                    }
                }
            }
            // from the bias
            let mut b = [0.0f32; LANES];
            for (x, v) in b.iter_mut().zip(epilogue.bias.iter().skip(oc0 + l0)) {
                *x = *v;
            }
            let mut y = [[b; M]; M];
            for (yr, tr) in y.iter_mut().zip(&tm) {
                for (yv, ar) in yr.iter_mut().zip(at) {
                    for (a, tv) in ar.iter().zip(tr) {
                        for (x, v) in yv.iter_mut().zip(tv) {
                            *x += a * v;
                        }
                    }
                }
            }
            for (i, yr) in y.iter().enumerate().take(h) {
                // row i of each channel's tile, the lanes transposed so that each channel's
                // row is one short vector
                let mut q = [[0.0f32; M]; LANES];
                for (j, yv) in yr.iter().enumerate() {
                    for (ql, v) in q.iter_mut().zip(yv) {
                        ql[j] = *v;
                    }
                }
                activate_all(epilogue.kind, epilogue.params, q.as_flattened_mut());
                // stored, not added: each output is this tile's alone, and a store does not
                // wait for the output's old value to be read
                for (l, ql) in q.iter().enumerate().take(lanes) {
                    out.put((l0 + l) * cstep + (ty * M + i) * ow + tx * M, &ql[..w]);
                }
            }
        }
    }
}

impl<const M: usize, const N: usize> Transform<M, N> {
    /// `G g Gᵀ` of every (output, input) kernel, as `[n²][cin][cout]` (each element's GEMM
    /// left-hand side column-major, as the GEMM packs it): one element of the tile per task, so
    /// each streams through the kernels and writes its own plane.
    fn weights(&self, weights: &[f32], cout: usize, cin: usize) -> Vec<f32> {
        let plane = cout * cin;
        let mut u = vec![0.0f32; N * N * plane];
        u.par_chunks_mut(plane.max(1))
            .enumerate()
            .for_each(|(xi, dst)| {
                let (gi, gj) = (self.g[xi / N], self.g[xi % N]);
                // (G g Gᵀ)[i][j] = Σ_{l,m} G[i][l] g[l][m] G[j][m]
                let mut coef = [0.0f32; 9];
                for (lm, c) in coef.iter_mut().enumerate() {
                    *c = gi[lm / 3] * gj[lm % 3];
                }
                // kernel (oc, ci) is the 9 weights at (oc · cin + ci) · 9
                for (oc, kernels) in weights.chunks_exact(9 * cin).take(cout).enumerate() {
                    for (ci, kernel) in kernels.chunks_exact(9).enumerate() {
                        dst[ci * cout + oc] = kernel.iter().zip(&coef).map(|(a, b)| a * b).sum();
                    }
                }
            });
        u
    }

    /// Accumulates the convolution of the padded `input` (extended to whole tiles: the extra
    /// values feed only outputs past the map, which are dropped) onto `out`.
    fn forward(
        &self,
        u: &[f32],
        input: &Planes<'_>,
        dims: [usize; 4],
        epilogue: &Epilogue<'_>,
        out: &mut [f32],
        cstep: usize,
    ) {
        let [cin, cout, ow, oh] = dims;
        let tiles = ow.div_ceil(M) * oh.div_ceil(M);
        let chunk = (THREAD_CHUNK_VALUES / (N * N * (cin + cout)).max(1)).max(MIN_RUN);
        let threads = rayon::current_num_threads();
        if threads >= MIN_CHUNK_THREADS && tiles >= 2 * threads * chunk {
            self.forward_chunks(u, input, dims, chunk, epilogue, out, cstep);
        } else {
            self.forward_phases(u, input, dims, epilogue, out, cstep);
        }
    }

    /// [`Self::forward`] a chunk of tiles per task, every step of a chunk on one thread: for
    /// maps of many chunks per thread, where the phases' three parallel loops per chunk of
    /// [`Self::forward_phases`] spend more on waking and joining 16 threads than on their work
    /// (a 224² layer of 64 channels: 14 chunks, 42 loops of about 50 µs each).
    #[allow(clippy::too_many_arguments)]
    fn forward_chunks(
        &self,
        u: &[f32],
        input: &Planes<'_>,
        [cin, cout, ow, oh]: [usize; 4],
        chunk: usize,
        epilogue: &Epilogue<'_>,
        out: &mut [f32],
        cstep: usize,
    ) {
        let (nn, plane, ew) = (N * N, input.step, input.w);
        let planes = &input.data;
        let tw = ow.div_ceil(M);
        let tiles = tw * oh.div_ceil(M);
        let (bt, at) = (self.bt, self.at);
        let shared = Shared {
            ptr: out.as_mut_ptr(),
            len: out.len().min(cout * cstep),
        };
        let scratch = || {
            (
                Scratch::any(cin * nn * (chunk + LANES)),
                Scratch::any(nn * cout * chunk + LANES),
                Vec::new(),
            )
        };
        (0..tiles.div_ceil(chunk)).into_par_iter().for_each_init(
            scratch,
            |(v, prod, phased), c| {
                let t0 = c * chunk;
                let tc = chunk.min(tiles - t0);
                let rs = tc + LANES;
                for (ci, dst) in v[..cin * nn * rs].chunks_mut(nn * rs).enumerate() {
                    let src = &planes[ci * plane..(ci + 1) * plane];
                    if tw >= WIDE_TILES {
                        input_tiles_wide::<M, N>(&bt, src, ew, tw, [t0, tc, rs], dst, phased);
                    } else {
                        input_tiles::<M, N>(&bt, src, ew, tw, [t0, tc, rs], dst);
                    }
                }
                for (xi, dst) in prod[..nn * cout * tc].chunks_mut(cout * tc).enumerate() {
                    let a = MatRef::rows(&u[xi * cin * cout..], cin, cout, cout).t();
                    let b = MatRef::rows(&v[xi * rs..], cin, tc, nn * rs);
                    let c = MatMut {
                        data: dst,
                        rows: cout,
                        cols: tc,
                        rs: 1,
                        cs: cout,
                    };
                    gemm_serial(a, b, c, false);
                }
                let prod = &prod[..nn * cout * tc + LANES];
                let dims = [cout, 0, cout];
                output_tiles::<M, N, _>(
                    &at,
                    prod,
                    dims,
                    [ow, oh],
                    tw,
                    t0,
                    tc,
                    epilogue,
                    shared,
                    cstep,
                );
            },
        );
    }

    /// [`Self::forward`] a chunk at a time, each of its three steps in parallel.
    fn forward_phases(
        &self,
        u: &[f32],
        input: &Planes<'_>,
        [cin, cout, ow, oh]: [usize; 4],
        epilogue: &Epilogue<'_>,
        out: &mut [f32],
        cstep: usize,
    ) {
        let (nn, plane, ew) = (N * N, input.step, input.w);
        let planes = &input.data;
        let (tw, th) = (ow.div_ceil(M), oh.div_ceil(M));
        let tiles = tw * th;
        let chunk = (CHUNK_VALUES / (nn * (cin + cout)).max(1))
            .max(MIN_CHUNK)
            .clamp(1, tiles.max(1));
        // neither is read before it is written; both with a vector's slack per row or at the end
        let mut v = Scratch::any(cin * nn * (chunk + LANES));
        let mut prod = Scratch::any(nn * cout * chunk + LANES);
        let bt = self.bt;
        let at = self.at;
        let threads = rayon::current_num_threads();
        // output channels per task of the output transform: enough tasks for every thread
        let group = (cout / (2 * threads)).clamp(1, LANES);
        for t0 in (0..tiles).step_by(chunk) {
            let tc = chunk.min(tiles - t0);
            let rs = tc + LANES;
            // Bᵀ d B of each tile, as [cin][n²][rs]
            v[..cin * nn * rs]
                .par_chunks_mut(nn * rs)
                .with_min_len(min_items(nn * tc * N))
                .enumerate()
                .for_each_init(Vec::new, |phased, (ci, dst)| {
                    let src = &planes[ci * plane..(ci + 1) * plane];
                    if tw >= WIDE_TILES {
                        input_tiles_wide::<M, N>(&bt, src, ew, tw, [t0, tc, rs], dst, phased);
                    } else {
                        input_tiles::<M, N>(&bt, src, ew, tw, [t0, tc, rs], dst);
                    }
                });
            // per element of the tile: [cout][cin] × [cin][tc], into [n²][tc][cout]: output
            // channels along the GEMM's vector lanes, which a small map's few tiles cannot fill;
            // the n² products are the parallel work, each GEMM on one thread, cut into runs of
            // tiles where n² alone would leave threads idle in the last round (36 products on
            // 16 threads: three rounds, the last a quarter full)
            let v = &v[..cin * nn * rs];
            let runs = (4 * threads).div_ceil(nn).min(tc / MIN_RUN).max(1);
            let run = tc.div_ceil(runs);
            prod[..nn * cout * tc]
                .par_chunks_mut(cout * tc)
                .enumerate()
                .for_each(|(xi, dst)| {
                    dst.par_chunks_mut(cout * run)
                        .enumerate()
                        .for_each(|(r, dst)| {
                            let cols = dst.len() / cout;
                            let a = MatRef::rows(&u[xi * cin * cout..], cin, cout, cout).t();
                            let b = MatRef::rows(&v[xi * rs + r * run..], cin, cols, nn * rs);
                            let c = MatMut {
                                data: dst,
                                rows: cout,
                                cols,
                                rs: 1,
                                cs: cout,
                            };
                            gemm_serial(a, b, c, false);
                        });
                });
            // Aᵀ m A of each tile, with the bias and activation, stored in the output
            let prod = &prod[..nn * cout * tc + LANES];
            out[..cout * cstep]
                .par_chunks_mut(group * cstep)
                .enumerate()
                .for_each(|(g, planes)| {
                    let count = planes.len().div_ceil(cstep.max(1));
                    output_tiles::<M, N, _>(
                        &at,
                        prod,
                        [cout, g * group, count],
                        [ow, oh],
                        tw,
                        t0,
                        tc,
                        epilogue,
                        planes,
                        cstep,
                    );
                });
        }
    }
}

/// The F(4,3) weights through 0, ±√2, ±√2/2 as `[36][cin][cout]`, for the GPU's Winograd
/// (whose shaders hold the matching `Bᵀ` and `Aᵀ`).
pub(in crate::layer::convolution) fn f43_weights(
    weights: &[f32],
    cout: usize,
    cin: usize,
) -> Vec<f32> {
    F43_BALANCED.weights(weights, cout, cin)
}

impl Convolution {
    /// The Winograd convolution with `m×m` output tiles, bias and activation included, into
    /// `out` (every output written).
    pub(super) fn winograd(
        &self,
        m: usize,
        input: &Planes<'_>,
        geo: &Geometry,
        out: &mut [f32],
        cstep: usize,
    ) {
        let (cin, cout) = (self.window.channels(), self.window.num_output);
        let dims = [cin, cout, geo.out[0], geo.out[1]];
        let epilogue = Epilogue {
            bias: &self.bias,
            kind: self.window.activation,
            params: &self.window.activation_params,
        };
        let tw = &self.winograd;
        match m {
            4 => {
                let u = tw.f43.get_or_init(|| F43.weights(&self.weights, cout, cin));
                F43.forward(u, input, dims, &epilogue, out, cstep);
            }
            _ => {
                let u = tw.f23.get_or_init(|| F23.weights(&self.weights, cout, cin));
                F23.forward(u, input, dims, &epilogue, out, cstep);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1-D: `Aᵀ[(G g) ⊙ (Bᵀ d)]` is the correlation of `d` with `g`.
    fn check<const M: usize, const N: usize>(t: &Transform<M, N>) {
        let g = [0.7f32, -1.3, 0.4];
        let d: Vec<f32> = (0..N).map(|i| (i as f32 * 0.37).sin()).collect();
        let gg: Vec<f32> = (0..N)
            .map(|i| (0..3).map(|k| t.g[i][k] * g[k]).sum())
            .collect();
        let bd: Vec<f32> = (0..N)
            .map(|i| (0..N).map(|k| t.bt[i][k] * d[k]).sum())
            .collect();
        for i in 0..M {
            let y: f32 = (0..N).map(|j| t.at[i][j] * gg[j] * bd[j]).sum();
            let want: f32 = (0..3).map(|k| g[k] * d[i + k]).sum();
            assert!(
                (y - want).abs() < 1e-4,
                "F({M},3) output {i}: {y} vs {want}"
            );
        }
    }

    #[test]
    fn the_transforms_compute_a_correlation() {
        check(&F23);
        check(&F43);
        check(&F43_BALANCED);
    }

    /// The chunk-per-task strategy gives what the phase-parallel one gives, on partial tiles,
    /// output channels that fill no whole vector, chunks that do not divide the tiles.
    #[test]
    fn chunks_per_task_match_the_phases() {
        use std::borrow::Cow;
        let vals = |n: usize, s: u32| -> Vec<f32> {
            (0..n)
                .map(|i| (((i as u32).wrapping_mul(2_654_435_761) ^ s) % 1000) as f32 / 500.0 - 1.0)
                .collect()
        };
        let (cin, cout, ow, oh) = (5usize, 19usize, 23usize, 21usize);
        let (ew, eh) = (ow.div_ceil(4) * 4 + 2, oh.div_ceil(4) * 4 + 2);
        let input = Planes {
            data: Cow::Owned(vals(cin * ew * eh, 1)),
            w: ew,
            step: ew * eh,
        };
        let u = F43.weights(&vals(9 * cin * cout, 2), cout, cin);
        let bias = vals(cout, 3);
        let epilogue = Epilogue {
            bias: &bias,
            kind: 1,
            params: &[],
        };
        let cstep = ow * oh + 3;
        let dims = [cin, cout, ow, oh];
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let mut want = vec![0.0f32; cout * cstep];
        let mut got = vec![0.0f32; cout * cstep];
        pool.install(|| {
            F43.forward_phases(&u, &input, dims, &epilogue, &mut want, cstep);
            F43.forward_chunks(&u, &input, dims, 5, &epilogue, &mut got, cstep);
        });
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
                "value {i}: {g} vs {w}"
            );
        }
        assert!(want.iter().any(|v| *v > 0.0));
    }
}
