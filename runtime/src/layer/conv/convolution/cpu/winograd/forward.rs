//! The forward of one tile size: the weights' transform, and the input transform, the n²
//! GEMMs and the output transform over chunks of tiles, in one of two parallel strategies.

use rayon::prelude::*;

use super::super::products::ProductWeights;
use super::super::sink::Shared;
use super::input::{Rows, WIDE_TILES, input_tiles, input_tiles_wide};
use super::output::{Epilogue, output_tiles};
use super::transform::Transform;
use super::{LANES, Planes};
use crate::layer::shared::grain::min_items;
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

/// The fewest tiles a run of the products takes when they are cut for the threads: the kernels
/// take 6 to 12 tiles at a time, and each run reads all of its element's weights again.
pub(super) const MIN_RUN: usize = 16;

/// The tiles of a chunk per task where a layer of `dims` (`[cin, cout, ow, oh]`) takes that
/// strategy with `nn` elements a tile: on [`MIN_CHUNK_THREADS`] or more, where the map has
/// two chunks per thread.
pub(super) fn task_chunk<const M: usize>(
    nn: usize,
    [cin, cout, ow, oh]: [usize; 4],
) -> Option<usize> {
    let tiles = ow.div_ceil(M) * oh.div_ceil(M);
    let chunk = (THREAD_CHUNK_VALUES / (nn * (cin + cout)).max(1)).max(MIN_RUN);
    let threads = rayon::current_num_threads();
    (threads >= MIN_CHUNK_THREADS && tiles >= 2 * threads * chunk).then_some(chunk)
}

/// The tiles of a chunk where each step of a chunk runs in parallel, `nn` elements a tile of
/// `cin + cout` channels, out of `tiles`: chunks of equal size (a short last one re-reads all
/// the weights for a few tiles: 196 tiles in chunks of 64 left 4 for the last).
pub(super) fn phase_chunk(nn: usize, [cin, cout]: [usize; 2], tiles: usize) -> usize {
    let chunk = (CHUNK_VALUES / (nn * (cin + cout)).max(1))
        .max(MIN_CHUNK)
        .clamp(1, tiles.max(1));
    tiles.div_ceil(tiles.div_ceil(chunk.max(1)).max(1)).max(1)
}

impl<const M: usize, const N: usize> Transform<M, N> {
    /// `G g Gᵀ` of every (output, input) kernel, as `[n²][cin][cout]` (each element's GEMM
    /// left-hand side column-major, as the GEMM packs it): one element of the tile per task, so
    /// each streams through the kernels and writes its own plane.
    pub(super) fn weights(&self, weights: &[f32], cout: usize, cin: usize) -> Vec<f32> {
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
    pub(super) fn forward(
        &self,
        u: &ProductWeights,
        input: &Planes<'_>,
        dims: [usize; 4],
        epilogue: &Epilogue<'_>,
        out: &mut [f32],
        store: (usize, usize),
    ) {
        match task_chunk::<M>(N * N, dims) {
            Some(chunk) => self.forward_chunks(u, input, dims, chunk, epilogue, out, store),
            None => self.forward_phases(u, input, dims, epilogue, out, store),
        }
    }

    /// [`Self::forward`] a chunk of tiles per task, every step of a chunk on one thread: for
    /// maps of many chunks per thread, where the phases' three parallel loops per chunk of
    /// [`Self::forward_phases`] spend more on waking and joining 16 threads than on their work
    /// (a 224² layer of 64 channels: 14 chunks, 42 loops of about 50 µs each).
    #[allow(clippy::too_many_arguments)]
    fn forward_chunks(
        &self,
        u: &ProductWeights,
        input: &Planes<'_>,
        [cin, cout, ow, oh]: [usize; 4],
        chunk: usize,
        epilogue: &Epilogue<'_>,
        out: &mut [f32],
        (cstep, pack): (usize, usize),
    ) {
        let (nn, plane, ew) = (N * N, input.step, input.w);
        let planes = &input.data;
        let tw = ow.div_ceil(M);
        let tiles = tw * oh.div_ceil(M);
        let (bt, at) = (self.bt, self.at);
        let len = (cout / pack * cstep).min(out.len());
        let shared = Shared::of(&mut out[..len]);
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
                let v = &mut v[..cin * nn * rs];
                for ci in 0..cin {
                    let src = &planes[ci * plane..(ci + 1) * plane];
                    let rows = Rows {
                        base: ci * rs,
                        step: cin * rs,
                    };
                    let (span, dst) = ([t0, tc], &mut *v);
                    if tw >= WIDE_TILES {
                        input_tiles_wide::<M, N, _>(&bt, src, ew, tw, span, dst, rows, phased);
                    } else {
                        input_tiles::<M, N, _>(&bt, src, ew, tw, span, dst, rows);
                    }
                }
                for (xi, dst) in prod[..nn * cout * tc].chunks_mut(cout * tc).enumerate() {
                    u.product(xi, &v[xi * cin * rs..(xi + 1) * cin * rs], rs, tc, dst);
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
                    (cstep, pack),
                );
            },
        );
    }

    /// [`Self::forward`] a chunk at a time, each of its three steps in parallel.
    fn forward_phases(
        &self,
        u: &ProductWeights,
        input: &Planes<'_>,
        [cin, cout, ow, oh]: [usize; 4],
        epilogue: &Epilogue<'_>,
        out: &mut [f32],
        (cstep, pack): (usize, usize),
    ) {
        let (nn, plane, ew) = (N * N, input.step, input.w);
        let planes = &input.data;
        let (tw, th) = (ow.div_ceil(M), oh.div_ceil(M));
        let tiles = tw * th;
        let chunk = phase_chunk(nn, [cin, cout], tiles);
        // neither is read before it is written; both with a vector's slack per row or at the end
        let mut v = Scratch::any(cin * nn * (chunk + LANES));
        let mut prod = Scratch::any(nn * cout * chunk + LANES);
        let bt = self.bt;
        let at = self.at;
        let threads = rayon::current_num_threads();
        // output channels per task of the output transform: enough tasks for every thread
        // (whole packed blocks)
        let group = (cout / (2 * threads))
            .clamp(1, LANES)
            .next_multiple_of(pack);
        for t0 in (0..tiles).step_by(chunk) {
            let tc = chunk.min(tiles - t0);
            let rs = tc + LANES;
            // Bᵀ d B of each tile, as [n²][cin][rs]
            let shared = Shared::of(&mut v[..cin * nn * rs]);
            (0..cin)
                .into_par_iter()
                .with_min_len(min_items(nn * tc * N))
                .for_each_init(Vec::new, |phased, ci| {
                    let src = &planes[ci * plane..(ci + 1) * plane];
                    let rows = Rows {
                        base: ci * rs,
                        step: cin * rs,
                    };
                    let span = [t0, tc];
                    if tw >= WIDE_TILES {
                        input_tiles_wide::<M, N, _>(&bt, src, ew, tw, span, shared, rows, phased);
                    } else {
                        input_tiles::<M, N, _>(&bt, src, ew, tw, span, shared, rows);
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
                            let v = &v[xi * cin * rs + r * run..(xi + 1) * cin * rs];
                            u.product(xi, v, rs, cols, dst);
                        });
                });
            // Aᵀ m A of each tile, with the bias and activation, stored in the output
            let prod = &prod[..nn * cout * tc + LANES];
            out[..cout / pack * cstep]
                .par_chunks_mut(group / pack * cstep)
                .enumerate()
                .for_each(|(g, planes)| {
                    let count = planes.len().div_ceil(cstep.max(1)) * pack;
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
                        (cstep, pack),
                    );
                });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::transform::F43;
    use super::*;
    use crate::layer::shared::cpu_gemm::test_values;

    /// The chunk-per-task strategy gives what the phase-parallel one gives, on partial tiles,
    /// output channels that fill no whole vector or panel, chunks that do not divide the tiles;
    /// and so does every products kernel this CPU runs, against the crate's.
    #[test]
    fn chunks_per_task_and_every_kernel_match_the_phases() {
        use super::super::super::products::Kernel;
        use std::borrow::Cow;
        let (cin, cout, ow, oh) = (5usize, 19usize, 23usize, 21usize);
        let (ew, eh) = (ow.div_ceil(4) * 4 + 2, oh.div_ceil(4) * 4 + 2);
        let input = Planes {
            data: Cow::Owned(test_values(cin * ew * eh, 1)),
            w: ew,
            step: ew * eh,
        };
        let u = F43.weights(&test_values(9 * cin * cout, 2), cout, cin);
        let bias = test_values(cout, 3);
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
        let crate_weights = ProductWeights::new(u.clone(), 36, [cin, cout], Kernel::Crate);
        pool.install(|| {
            F43.forward_phases(
                &crate_weights,
                &input,
                dims,
                &epilogue,
                &mut want,
                (cstep, 1),
            )
        });
        assert!(want.iter().any(|v| *v > 0.0));
        for kernel in Kernel::available() {
            let weights = ProductWeights::new(u.clone(), 36, [cin, cout], kernel);
            let mut phases = vec![0.0f32; cout * cstep];
            let mut chunks = vec![0.0f32; cout * cstep];
            pool.install(|| {
                F43.forward_phases(&weights, &input, dims, &epilogue, &mut phases, (cstep, 1));
                F43.forward_chunks(
                    &weights,
                    &input,
                    dims,
                    5,
                    &epilogue,
                    &mut chunks,
                    (cstep, 1),
                );
            });
            for (i, ((p, c), w)) in phases.iter().zip(&chunks).zip(&want).enumerate() {
                assert!(
                    (p - w).abs() <= 1e-5 * (1.0 + w.abs())
                        && (c - w).abs() <= 1e-5 * (1.0 + w.abs()),
                    "{kernel:?} value {i}: phases {p}, chunks {c}, crate {w}"
                );
            }
        }
    }
}
