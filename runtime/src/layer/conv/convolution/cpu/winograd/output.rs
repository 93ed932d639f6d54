//! `Aᵀ m A`: the output transform, with the bias and activation, stored in the output planes.

use multiversion::multiversion;

use super::super::sink::Sink;
use super::LANES;
use crate::layer::activation::fused::activate_all;

/// What the output transform applies before it stores: the bias (empty without one) and the
/// layer's fused activation.
pub(super) struct Epilogue<'a> {
    pub bias: &'a [f32],
    pub kind: i32,
    pub params: &'a [f32],
}

impl Epilogue<'_> {
    /// The bias of `L` channels from `first` (zeros past the bias or without one).
    #[inline(always)]
    pub(super) fn lanes<const L: usize>(&self, first: usize) -> [f32; L] {
        let mut b = [0.0f32; L];
        for (x, v) in b.iter_mut().zip(self.bias.iter().skip(first)) {
            *x = *v;
        }
        b
    }
}

/// `Aᵀ m A + b` of one tile's products `m` (`m[i][j][lane]`, `L` channels one per lane),
/// `tm` the caller's scratch: output `(i, j)` at `[i][j]`.
#[inline(always)]
pub(super) fn transform_tile<const M: usize, const N: usize, const L: usize>(
    at: &[[f32; N]; M],
    m: &[[[f32; L]; N]; N],
    tm: &mut [[[f32; L]; N]; M],
    b: [f32; L],
) -> [[[f32; L]; M]; M] {
    // t = Aᵀ m, then y = t A
    for (tr, ar) in tm.iter_mut().zip(at) {
        for (j, tv) in tr.iter_mut().enumerate() {
            let mut acc = [0.0f32; L];
            for (a, mr) in ar.iter().zip(m) {
                for (x, y) in acc.iter_mut().zip(&mr[j]) {
                    *x = a.mul_add(*y, *x);
                }
            }
            *tv = acc;
        }
    }
    let mut y = [[b; M]; M];
    for (yr, tr) in y.iter_mut().zip(tm.iter()) {
        for (yv, ar) in yr.iter_mut().zip(at) {
            for (a, tv) in ar.iter().zip(tr) {
                for (x, v) in yv.iter_mut().zip(tv) {
                    *x = a.mul_add(*v, *x);
                }
            }
        }
    }
    y
}

/// `Aᵀ m A` of tiles `t0..t0 + tc` for the output channels `oc0..oc0 + planes`, `m` read from
/// `prod` (`[n²][tc][cout]`), plus the bias and through the activation, stored in those
/// channels' planes in `out` (`ow × oh`, `cstep` apart, the first at 0), or with `pack` 4 or 8
/// in their packed blocks (`cstep` values apart; `oc0` and `planes` whole blocks). [`LANES`] neighbouring
/// channels at a time, one per vector lane: their products lie side by side in `prod`, so each
/// of a tile's n² elements is one vector load, and the transform's arithmetic is vector
/// arithmetic (one channel at a time it was scalar, and gathered each value from its own row of
/// `prod`).
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
#[allow(clippy::too_many_arguments)]
pub(super) fn output_tiles<const M: usize, const N: usize, S: Sink>(
    at: &[[f32; N]; M],
    prod: &[f32],
    [cout, oc0, planes]: [usize; 3],
    [ow, oh]: [usize; 2],
    tw: usize,
    t0: usize,
    tc: usize,
    epilogue: &Epilogue<'_>,
    mut out: S,
    (cstep, pack): (usize, usize),
) {
    // a tile's products and the transform's scratch, overwritten for every tile (zeroed
    // arrays inside the loop were a `memset` call per tile)
    let mut m = [[[0.0f32; LANES]; N]; N];
    let mut tm = [[[0.0f32; LANES]; N]; M];
    for l0 in (0..planes).step_by(LANES) {
        let lanes = LANES.min(planes - l0);
        for t in 0..tc {
            let (ty, tx) = ((t0 + t) / tw, (t0 + t) % tw);
            let (w, h) = (M.min(ow - tx * M), M.min(oh - ty * M));
            for (i, r) in m.iter_mut().enumerate() {
                for (j, v) in r.iter_mut().enumerate() {
                    // a whole vector: past the group, other values or the slack
                    let at = ((i * N + j) * tc + t) * cout + oc0 + l0;
                    v.copy_from_slice(&prod[at..at + LANES]);
                }
            }
            let mut y = transform_tile(at, &m, &mut tm, epilogue.lanes(oc0 + l0));
            if pack > 1 {
                // packed blocks of `cstep` values: each output's pack of channels is part of
                // a vector, stored as it is
                activate_all(
                    epilogue.kind,
                    epilogue.params,
                    y.as_flattened_mut().as_flattened_mut(),
                );
                for (i, yr) in y.iter().enumerate().take(h) {
                    for (j, yv) in yr.iter().enumerate().take(w) {
                        let px = (ty * M + i) * ow + tx * M + j;
                        for (part, v) in yv.chunks_exact(pack).enumerate().take(lanes / pack) {
                            out.put((l0 / pack + part) * cstep + px * pack, v);
                        }
                    }
                }
                continue;
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
                    let at = (l0 + l) * cstep + (ty * M + i) * ow + tx * M;
                    // a whole row as a copy of a fixed length (inline moves, not `memmove`)
                    if w == M {
                        out.put(at, ql);
                    } else {
                        out.put(at, &ql[..w]);
                    }
                }
            }
        }
    }
}
