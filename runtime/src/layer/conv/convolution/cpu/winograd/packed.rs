//! Winograd on packed blobs (pack8 on x86), ncnn's layout for its packed Winograd: the
//! transforms run across a pack's channels, one per vector lane, so a tile's values are whole
//! vectors of the blob where they lie and of the output where they go. The input is read in
//! place (no padded copy of the map, no splitting of its rows into phases), the transformed
//! tiles and the products are packed blobs of their own (`[n²][channels / pack][tiles][pack]`),
//! which the products' kernel reads and writes as it does a pointwise layer's.

use multiversion::multiversion;
use rayon::prelude::*;

use super::super::products::{ProductWeights, Walk};
use super::super::sink::{Shared, Sink};
use super::LANES;
use super::forward::{MIN_RUN, phase_chunk, task_chunk};
use super::input::{Rows, transform_lanes};
use super::output::{Epilogue, transform_tile};
use super::transform::Transform;
use crate::layer::activation::fused::activate_all;
use crate::tensor::pool::Scratch;

/// A packed input blob as the input transform reads it.
pub(in crate::layer::conv::convolution) struct PackedInput<'a> {
    /// The blob's values: pack `g` of channels from `g · gstep`, pixel `(y, x)` at
    /// `(y · w + x) · pack` in it.
    pub(in crate::layer::conv::convolution) data: &'a [f32],
    /// `[w, h]` of the map.
    pub(in crate::layer::conv::convolution) size: [usize; 2],
    /// From one pack of channels to the next, in values.
    pub(in crate::layer::conv::convolution) gstep: usize,
    /// `[left, top]` padding: the map's first pixel in the padded frame.
    pub(in crate::layer::conv::convolution) corner: [usize; 2],
    /// `[w, h]` of the padded frame: inside it, off the map, the padding value; past it (whole
    /// tiles) zeros.
    pub(in crate::layer::conv::convolution) padded: [usize; 2],
    /// The padding value.
    pub(in crate::layer::conv::convolution) value: f32,
}

/// A packed output blob: pack `g` from `g · gstep`, pixel `(y, x)` at `(y · ow + x) · pack`.
#[derive(Clone, Copy)]
pub(in crate::layer::conv::convolution) struct PackedOutput {
    pub(in crate::layer::conv::convolution) data: Shared,
    pub(in crate::layer::conv::convolution) gstep: usize,
}

/// One chunk of tiles' transformed inputs or products, `[n²][channels / P][tiles][P]`.
#[derive(Clone, Copy)]
struct ChunkLayout {
    /// The chunk's first tile.
    first: usize,
    /// Its tiles.
    tiles: usize,
}

impl ChunkLayout {
    /// Where group `g`'s element `(i, j)` rows lie, of `channels` channels.
    fn rows<const P: usize>(self, g: usize, channels: usize) -> Rows {
        Rows {
            base: g * self.tiles * P,
            step: channels * self.tiles,
        }
    }
}

impl<const M: usize, const N: usize> Transform<M, N> {
    /// The convolution of the packed `input` (P channels a pack; `cin` and `cout` whole packs)
    /// into the packed `out`, bias and activation included, every output value written: the
    /// same strategies as [`Self::forward`], a chunk of tiles per task on many threads where
    /// the map has enough of them, else a chunk at a time with each step in parallel.
    pub(in crate::layer::conv::convolution) fn forward_packed<const P: usize>(
        &self,
        u: &ProductWeights,
        input: &PackedInput<'_>,
        dims: [usize; 4],
        epilogue: &Epilogue<'_>,
        out: PackedOutput,
    ) {
        let [cin, cout, ow, oh] = dims;
        assert!(
            u.pack() == P && cin.is_multiple_of(P) && cout.is_multiple_of(P),
            "packed Winograd: whole packs of the kernel's"
        );
        match task_chunk::<M>(N * N, dims) {
            Some(chunk) => self.packed_chunks::<P>(u, input, dims, chunk, epilogue, out),
            None => {
                let chunk = phase_chunk(N * N, [cin, cout], ow.div_ceil(M) * oh.div_ceil(M));
                self.packed_phases::<P>(u, input, dims, chunk, epilogue, out);
            }
        }
    }

    /// [`Self::forward_packed`] a chunk of `per_task` tiles per task, every step on one thread.
    fn packed_chunks<const P: usize>(
        &self,
        u: &ProductWeights,
        input: &PackedInput<'_>,
        dims: [usize; 4],
        per_task: usize,
        epilogue: &Epilogue<'_>,
        out: PackedOutput,
    ) {
        let [cin, cout, ow, oh] = dims;
        let nn = N * N;
        let tiles = ow.div_ceil(M) * oh.div_ceil(M);
        let scratch = || {
            (
                Scratch::any(nn * cin * per_task),
                Scratch::any(nn * cout * per_task),
            )
        };
        (0..tiles.div_ceil(per_task))
            .into_par_iter()
            .for_each_init(scratch, |(v, prod), c| {
                let first = c * per_task;
                let chunk = ChunkLayout {
                    first,
                    tiles: per_task.min(tiles - first),
                };
                let (v, prod) = (
                    &mut v[..nn * cin * chunk.tiles],
                    &mut prod[..nn * cout * chunk.tiles],
                );
                let all = [first, first + chunk.tiles];
                for g in 0..cin / P {
                    self.input_packed::<P>(input, g, all, chunk, Shared::of(v), dims);
                }
                let products = Shared::of(prod);
                for task in 0..nn * u.panels() {
                    Self::products_packed::<P>(u, v, products, chunk, task, dims);
                }
                for g in 0..cout / P {
                    self.output_packed::<P>(prod, g, all, chunk, dims, epilogue, out);
                }
            });
    }

    /// [`Self::forward_packed`] `chunk` tiles at a time, each step in parallel.
    fn packed_phases<const P: usize>(
        &self,
        u: &ProductWeights,
        input: &PackedInput<'_>,
        dims: [usize; 4],
        chunk: usize,
        epilogue: &Epilogue<'_>,
        out: PackedOutput,
    ) {
        let [cin, cout, ow, oh] = dims;
        let nn = N * N;
        let tiles = ow.div_ceil(M) * oh.div_ceil(M);
        let threads = rayon::current_num_threads();
        let mut v = Scratch::any(nn * cin * chunk);
        let mut prod = Scratch::any(nn * cout * chunk);
        for first in (0..tiles).step_by(chunk) {
            let layout = ChunkLayout {
                first,
                tiles: chunk.min(tiles - first),
            };
            let tc = layout.tiles;
            let (v, prod) = (&mut v[..nn * cin * tc], &mut prod[..nn * cout * tc]);
            let (transformed, products) = (Shared::of(v), Shared::of(prod));
            let (v, prod) = (&*v, &*prod);
            // each step's tasks: a pack of channels by a run of tiles, enough for every thread
            let runs = |packs: usize| (4 * threads).div_ceil(packs).min(tc / MIN_RUN).max(1);
            let span = |run: usize, runs: usize| {
                let len = tc.div_ceil(runs);
                [
                    first + (run * len).min(tc),
                    first + (run * len + len).min(tc),
                ]
            };
            let runs_in = runs(cin / P);
            (0..cin / P * runs_in).into_par_iter().for_each(|task| {
                let span = span(task % runs_in, runs_in);
                let g = task / runs_in;
                self.input_packed::<P>(input, g, span, layout, transformed, dims);
            });
            (0..nn * u.panels()).into_par_iter().for_each(|task| {
                Self::products_packed::<P>(u, v, products, layout, task, dims);
            });
            let runs_out = runs(cout / P);
            (0..cout / P * runs_out).into_par_iter().for_each(|task| {
                let span = span(task % runs_out, runs_out);
                let g = task / runs_out;
                self.output_packed::<P>(prod, g, span, layout, dims, epilogue, out);
            });
        }
    }

    /// `Bᵀ d B` of pack `g` of the input for tiles `t0..t1` of `chunk`, into `v`.
    fn input_packed<const P: usize>(
        &self,
        input: &PackedInput<'_>,
        g: usize,
        span: [usize; 2],
        chunk: ChunkLayout,
        v: Shared,
        [cin, _, ow, _]: [usize; 4],
    ) {
        let rows = chunk.rows::<P>(g, cin);
        input_tiles_packed::<M, N, P>(&self.bt, input, g, ow.div_ceil(M), span, chunk, v, rows);
    }

    /// Products task `task` of `chunk`: element `task / panels`, panel `task % panels` of its
    /// output channels, over all the chunk's tiles.
    fn products_packed<const P: usize>(
        u: &ProductWeights,
        v: &[f32],
        prod: Shared,
        chunk: ChunkLayout,
        task: usize,
        [cin, cout, _, _]: [usize; 4],
    ) {
        let panels = u.panels();
        let (xi, p, tc) = (task / panels, task % panels, chunk.tiles);
        let rhs = &v[xi * cin * tc..][..cin * tc];
        let walk = Walk::along(tc);
        let out = prod.after(xi * cout * tc);
        u.packed_panel([xi, p], (rhs, tc * P, P), [0, tc], &[], (out, tc * P), walk);
    }

    /// `Aᵀ m A` of output pack `g` for tiles `t0..t1` of `chunk`, stored in `out`.
    #[allow(clippy::too_many_arguments)]
    fn output_packed<const P: usize>(
        &self,
        prod: &[f32],
        g: usize,
        span: [usize; 2],
        chunk: ChunkLayout,
        [_, cout, ow, oh]: [usize; 4],
        epilogue: &Epilogue<'_>,
        out: PackedOutput,
    ) {
        let rows = chunk.rows::<P>(g, cout);
        output_tiles_packed::<M, N, P>(
            &self.at,
            prod,
            rows,
            [ow, oh],
            span,
            chunk,
            g,
            epilogue,
            out,
        );
    }
}

/// Tiles' values side by side in one step of the transforms: [`LANES`] values, `LANES / P`
/// neighbouring tiles of a pack of `P` channels (with AVX-512 a pack8 blob's transforms are
/// 16 lanes wide, as the planes' are, not 8); the tiles left over go one at a time.
const STEP: usize = LANES;

/// The input transform of pack `g` for tiles `t0..t1` (tiles of `tw` to a row), each tile's
/// n² values one vector of its pack's channels, into `v` as `rows` says at the tile's place in
/// `chunk`: [`STEP`] lanes (neighbouring tiles, side by side there too) at a time.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
#[allow(clippy::too_many_arguments)]
fn input_tiles_packed<const M: usize, const N: usize, const P: usize>(
    bt: &[[f32; N]; N],
    input: &PackedInput<'_>,
    g: usize,
    tw: usize,
    [t0, t1]: [usize; 2],
    chunk: ChunkLayout,
    mut v: Shared,
    rows: Rows,
) {
    let src = &input.data[g * input.gstep..];
    let mut d = [[[0.0f32; STEP]; N]; N];
    let mut r = [[[0.0f32; STEP]; N]; N];
    let mut d1 = [[[0.0f32; P]; N]; N];
    let mut r1 = [[[0.0f32; P]; N]; N];
    let k = STEP / P;
    let mut t = t0;
    while t < t1 {
        let first = (t - chunk.first) * P;
        if t + k <= t1 {
            for q in 0..k {
                gather_tile::<M, N, P, STEP>(input, src, tw, t + q, q * P, &mut d);
            }
            transform_lanes(bt, &d, &mut r, &mut v, rows, first);
            t += k;
        } else {
            gather_tile::<M, N, P, P>(input, src, tw, t, 0, &mut d1);
            transform_lanes(bt, &d1, &mut r1, &mut v, rows, first);
            t += 1;
        }
    }
}

/// Tile `t`'s n×n input values (a pack's `P` channels each, from `src`, its pack of the blob)
/// into lanes `lane..lane + P` of `d`: the padding value off the map inside the padded frame,
/// zeros past it (whole tiles).
#[inline(always)]
fn gather_tile<const M: usize, const N: usize, const P: usize, const L: usize>(
    input: &PackedInput<'_>,
    src: &[f32],
    tw: usize,
    t: usize,
    lane: usize,
    d: &mut [[[f32; L]; N]; N],
) {
    let [w, h] = input.size;
    let [left, top] = input.corner;
    let [pw, ph] = input.padded;
    // the tile's corner in the padded frame
    let (py, px) = ((t / tw) * M, (t % tw) * M);
    let inside = py >= top && px >= left && py + N <= top + h && px + N <= left + w;
    for (y, row) in d.iter_mut().enumerate() {
        let yy = py + y;
        for (x, vector) in row.iter_mut().enumerate() {
            let xx = px + x;
            let value = &mut vector[lane..lane + P];
            if inside || ((top..top + h).contains(&yy) && (left..left + w).contains(&xx)) {
                let at = ((yy - top) * w + xx - left) * P;
                value.copy_from_slice(&src[at..at + P]);
            } else if yy < ph && xx < pw {
                value.fill(input.value);
            } else {
                value.fill(0.0);
            }
        }
    }
}

/// The output transform of output pack `g` for tiles `t0..t1`, from the products (laid out as
/// `rows` says), plus the bias and through the activation, stored in `out` (an `ow × oh` map):
/// [`STEP`] lanes (neighbouring tiles, side by side in the products) at a time.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
#[allow(clippy::too_many_arguments)]
fn output_tiles_packed<const M: usize, const N: usize, const P: usize>(
    at: &[[f32; N]; M],
    prod: &[f32],
    rows: Rows,
    [ow, oh]: [usize; 2],
    [t0, t1]: [usize; 2],
    chunk: ChunkLayout,
    g: usize,
    epilogue: &Epilogue<'_>,
    out: PackedOutput,
) {
    let bias = epilogue.lanes::<P>(g * P);
    let mut biases = [0.0f32; STEP];
    for part in biases.chunks_exact_mut(P) {
        part.copy_from_slice(&bias);
    }
    let mut m = [[[0.0f32; STEP]; N]; N];
    let mut tm = [[[0.0f32; STEP]; N]; M];
    let mut m1 = [[[0.0f32; P]; N]; N];
    let mut tm1 = [[[0.0f32; P]; N]; M];
    let k = STEP / P;
    let place = OutputPlace {
        size: [ow, oh],
        g,
        out,
    };
    let mut t = t0;
    while t < t1 {
        let at_tile = rows.base + (t - chunk.first) * P;
        if t + k <= t1 {
            load_products(prod, rows, at_tile, &mut m);
            let y = transform_tile(at, &m, &mut tm, biases);
            place.store::<M, P, STEP>(y, t, k, epilogue);
            t += k;
        } else {
            load_products(prod, rows, at_tile, &mut m1);
            let y = transform_tile(at, &m1, &mut tm1, bias);
            place.store::<M, P, P>(y, t, 1, epilogue);
            t += 1;
        }
    }
}

/// The n² products of the `L` lanes from `at` (neighbouring tiles' packs side by side).
#[inline(always)]
fn load_products<const N: usize, const L: usize>(
    prod: &[f32],
    rows: Rows,
    at: usize,
    m: &mut [[[f32; L]; N]; N],
) {
    for (i, row) in m.iter_mut().enumerate() {
        for (j, value) in row.iter_mut().enumerate() {
            let from = at + (i * N + j) * rows.step;
            value.copy_from_slice(&prod[from..from + L]);
        }
    }
}

/// Where the output transform stores output pack `g`'s tiles of an `ow × oh` map.
struct OutputPlace {
    size: [usize; 2],
    g: usize,
    out: PackedOutput,
}

impl OutputPlace {
    /// Tiles `t..t + k`'s outputs (tile `t + q` in lanes `q·P..(q + 1)·P` of `y`), through the
    /// activation, each tile's rows cut at the map's edges.
    #[inline(always)]
    fn store<const M: usize, const P: usize, const L: usize>(
        &self,
        mut y: [[[f32; L]; M]; M],
        t: usize,
        k: usize,
        epilogue: &Epilogue<'_>,
    ) {
        let [ow, oh] = self.size;
        let tw = ow.div_ceil(M);
        activate_all(
            epilogue.kind,
            epilogue.params,
            y.as_flattened_mut().as_flattened_mut(),
        );
        let mut dst = self.out.data;
        for q in 0..k {
            let (ty, tx) = ((t + q) / tw, (t + q) % tw);
            let (w, h) = (M.min(ow - tx * M), M.min(oh - ty * M));
            for (i, yr) in y.iter().enumerate().take(h) {
                let px = (ty * M + i) * ow + tx * M;
                for (j, yv) in yr.iter().enumerate().take(w) {
                    let at = self.g * self.out.gstep + (px + j) * P;
                    dst.put(at, &yv[q * P..(q + 1) * P]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::super::super::products::Kernel;
    use super::super::transform::{F23, F43};
    use super::*;
    use crate::layer::conv::convolution::cpu::Planes;
    use crate::layer::shared::cpu_gemm::test_values;

    /// Both strategies on a packed blob give what the planes' forward gives on the same input
    /// padded into planes: uneven padding with a value, partial tiles, chunks that do not
    /// divide the tiles, every packed kernel this CPU runs (pack8 on x86, pack4 on aarch64).
    fn matches_the_planes<const M: usize, const N: usize>(t: &Transform<M, N>) {
        let (cin, cout, [w, h]) = (16usize, 24usize, [23usize, 21usize]);
        let ([left, right, top, bottom], value) = ([1usize, 2, 2, 0], 0.5f32);
        let [pw, ph] = [w + left + right, h + top + bottom];
        let [ow, oh] = [pw - 2, ph - 2];
        let x = test_values(cin * w * h, 1);
        let [ew, eh] = [ow.div_ceil(M) * M + 2, oh.div_ceil(M) * M + 2];
        let mut planes = vec![0.0f32; cin * ew * eh];
        for (c, plane) in planes.chunks_exact_mut(ew * eh).enumerate() {
            for (y, row) in plane.chunks_exact_mut(ew).enumerate().take(ph) {
                row[..pw].fill(value);
                if (top..top + h).contains(&y) {
                    let src = &x[(c * h + y - top) * w..][..w];
                    row[left..left + w].copy_from_slice(src);
                }
            }
        }
        let input = Planes {
            data: Cow::Owned(planes),
            w: ew,
            step: ew * eh,
        };
        let u = t.weights(&test_values(9 * cin * cout, 2), cout, cin);
        let bias = test_values(cout, 3);
        let epilogue = Epilogue {
            bias: &bias,
            kind: 1,
            params: &[],
        };
        let dims = [cin, cout, ow, oh];
        let cstep = ow * oh + 3;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let crate_weights = ProductWeights::new(u.clone(), N * N, [cin, cout], Kernel::Crate);
        let mut want = vec![0.0f32; cout * cstep];
        pool.install(|| {
            t.forward(
                &crate_weights,
                &input,
                dims,
                &epilogue,
                &mut want,
                (cstep, 1),
            )
        });
        assert!(want.iter().any(|v| *v > 0.0));
        for kernel in Kernel::available()
            .into_iter()
            .filter(|k| *k != Kernel::Crate)
        {
            let p = kernel.pack();
            let gstep = (w * h + 5) * p;
            let mut packed = vec![f32::NAN; cin / p * gstep];
            for (c, v) in x.iter().enumerate() {
                let (ci, px) = (c / (w * h), c % (w * h));
                packed[ci / p * gstep + px * p + ci % p] = *v;
            }
            let input = PackedInput {
                data: &packed,
                size: [w, h],
                gstep,
                corner: [left, top],
                padded: [pw, ph],
                value,
            };
            let weights = ProductWeights::new(u.clone(), N * N, [cin, cout], kernel);
            let ogs = (ow * oh + 2) * p;
            for strategy in 0..3 {
                let mut got = vec![f32::NAN; cout / p * ogs];
                let out = PackedOutput {
                    data: Shared::of(&mut got),
                    gstep: ogs,
                };
                pool.install(|| match (strategy, p) {
                    (0, 8) => t.packed_chunks::<8>(&weights, &input, dims, 5, &epilogue, out),
                    (1, 8) => t.packed_phases::<8>(&weights, &input, dims, 7, &epilogue, out),
                    (_, 8) => t.forward_packed::<8>(&weights, &input, dims, &epilogue, out),
                    (0, _) => t.packed_chunks::<4>(&weights, &input, dims, 5, &epilogue, out),
                    (1, _) => t.packed_phases::<4>(&weights, &input, dims, 7, &epilogue, out),
                    _ => t.forward_packed::<4>(&weights, &input, dims, &epilogue, out),
                });
                for oc in 0..cout {
                    for px in 0..ow * oh {
                        let (g, w) = (got[oc / p * ogs + px * p + oc % p], want[oc * cstep + px]);
                        assert!(
                            (g - w).abs() <= 1e-4 * (1.0 + w.abs()),
                            "F({M},3) {kernel:?} strategy {strategy}: channel {oc} pixel {px}: \
                             {g} vs {w}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn packed_blobs_convolve_as_the_planes_do() {
        matches_the_planes(&F43);
        matches_the_planes(&F23);
    }
}
