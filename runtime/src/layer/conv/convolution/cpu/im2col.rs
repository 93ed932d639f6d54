//! Dense and grouped convolution as GEMMs: per group, output channels × (input channels ·
//! kernel taps) weights, as stored, times the windows of the output positions as columns
//! (im2col, built per tile of columns so it stays within a few megabytes), or times the input
//! planes themselves for a pointwise kernel.

use rayon::prelude::*;

use super::super::{Convolution, Geometry};
use super::Planes;
use crate::layer::activation::fused::activate_all;
use crate::layer::shared::cpu_gemm::{MatMut, MatRef, RowEpilogue, gemm, gemm_then};
use crate::layer::shared::grain::min_items;
use crate::layer::shared::kernels;
use crate::layer::shared::phase_planes::Phases;
use crate::tensor::pool::Scratch;

/// The most values one im2col tile holds (16 MiB of fp32).
const TILE_VALUES: usize = 1 << 22;

impl Convolution {
    /// Every group's GEMM into `out` (rows `cstep` apart), with the bias and the activation;
    /// `pointwise`: a 1×1, stride-1 kernel, whose columns are the planes themselves.
    pub(super) fn im2col_gemm(
        &self,
        (input, layout): (&Planes<'_>, &Phases),
        geo: &Geometry,
        (out, cstep): (&mut [f32], usize),
        pointwise: bool,
    ) {
        let ([kw, kh], ..) = self.window.taps();
        let (group, cin_g) = (self.window.group, self.window.channels_per_group());
        let cout_g = self.window.num_output / group;
        let k = cin_g * kw * kh;
        let one_group = |g: usize, out: &mut [f32]| {
            let weights = MatRef::rows(&self.weights[g * cout_g * k..], cout_g, k, k);
            let planes = &input.data[g * cin_g * input.step..];
            let (bias, kind) = (&self.bias, self.window.activation);
            let params = &self.window.activation_params;
            let epilogue = |i: usize, row: &mut [f32]| {
                if let Some(&b) = bias.get(g * cout_g + i) {
                    kernels::map(row, |x| x + b);
                }
                activate_all(kind, params, row);
            };
            let plain = bias.is_empty() && kind == 0;
            let epilogue: Option<RowEpilogue<'_>> = (!plain).then_some(&epilogue);
            let how = (pointwise, epilogue);
            self.group_gemm(weights, planes, (input, layout), geo, (out, cstep), how);
        };
        if group == 1 {
            one_group(0, out);
        } else {
            let [ow, oh] = geo.out;
            out.par_chunks_mut(cout_g * cstep)
                .with_min_len(min_items(cout_g * k * ow * oh))
                .enumerate()
                .for_each(|(g, out)| one_group(g, out));
        }
    }

    /// One group: `weights` (cout_g × k) times its windows, onto `out`'s first cout_g rows;
    /// each channel of `input` laid out as `layout` says (phase planes, or a plain plane).
    fn group_gemm(
        &self,
        weights: MatRef<'_>,
        planes: &[f32],
        (input, layout): (&Planes<'_>, &Phases),
        geo: &Geometry,
        (out, cstep): (&mut [f32], usize),
        (pointwise, epilogue): (bool, Option<RowEpilogue<'_>>),
    ) {
        let product = |a: MatRef<'_>, b: MatRef<'_>, c: MatMut<'_>| match epilogue {
            Some(f) => gemm_then(a, b, c, false, f),
            None => gemm(a, b, c, false),
        };
        let [ow, oh] = geo.out;
        let (n, k) = (ow * oh, weights.cols);
        if pointwise {
            // the padded planes are the columns already (rows of `ow`, planes of ow × oh)
            let cols = MatRef::rows(planes, k, n, input.step);
            product(weights, cols, MatMut::rows(out, weights.rows, n, cstep));
            return;
        }
        self.column_tiles(k, planes, (input, layout), geo, |first, len, col| {
            let cols = MatRef::rows(col, k, len, len);
            let dst = MatMut::rows(&mut out[first..], weights.rows, len, cstep);
            product(weights, cols, dst);
        });
    }

    /// The windows of the output positions as columns (im2col, `k` rows of input channels ·
    /// taps), a tile of positions at a time: `f(first, len, columns)` for each tile, its
    /// columns `[k][len]`. `planes` are the group's channels, laid out as `layout` says.
    fn column_tiles(
        &self,
        k: usize,
        planes: &[f32],
        (input, layout): (&Planes<'_>, &Phases),
        geo: &Geometry,
        mut f: impl FnMut(usize, usize, &[f32]),
    ) {
        let columns = self.columns(k, (input, layout), geo);
        let n = geo.out[0] * geo.out[1];
        let tile = (TILE_VALUES / k.max(1)).clamp(64, n.max(64));
        // every value written below before the GEMM reads it
        let mut col = Scratch::any(k * tile.min(n));
        for first in (0..n).step_by(tile) {
            let len = tile.min(n - first);
            let col = &mut col[..k * len];
            col.par_chunks_mut(len)
                .with_min_len(min_items(len))
                .zip(&columns.offsets)
                .for_each(|(row, &off)| columns.fill_row(planes, off, first, row));
            f(first, len, col);
        }
    }

    /// Where im2col's `k` rows read the group's planes laid out as `layout` says.
    pub(super) fn columns(
        &self,
        k: usize,
        (input, layout): (&Planes<'_>, &Phases),
        geo: &Geometry,
    ) -> Columns {
        let ([kw, kh], [dw, dh], [sw, sh]) = self.window.taps();
        // where each tap of a channel starts, and the steps to the next output column and row:
        // in phase planes every tap is a contiguous run of each output row
        let taps = layout.taps([kw, kh], [dw, dh]);
        let cin_g = k / (kw * kh);
        Columns {
            offsets: (0..cin_g)
                .flat_map(|ci| taps.iter().map(move |t| ci * input.step + t))
                .collect(),
            ow: geo.out[0],
            steps: layout.output_steps([sw, sh]),
        }
    }
}

/// Where im2col's rows read their values: each row's offset into the planes, and the steps to
/// the next output column and row (`ow` outputs to a row).
pub(super) struct Columns {
    pub(super) offsets: Vec<usize>,
    ow: usize,
    steps: [usize; 2],
}

impl Columns {
    /// The row at `off` for the output positions `first..first + row.len()`.
    pub(super) fn fill_row(&self, planes: &[f32], off: usize, first: usize, row: &mut [f32]) {
        let (ow, [col_step, row_step]) = (self.ow, self.steps);
        let len = row.len();
        let mut j = 0;
        // one output row's run of the tile at a time: a copy at stride 1
        while j < len {
            let p = first + j;
            let (oy, ox) = (p / ow, p % ow);
            let run = (ow - ox).min(len - j);
            let src = off + oy * row_step + ox * col_step;
            let dst = &mut row[j..j + run];
            match col_step {
                1 => dst.copy_from_slice(&planes[src..src + run]),
                // pairs of a fixed size: shuffles, no bounds check per value; the last value
                // alone (its pair may end past the planes)
                2 => {
                    let (head, last) = dst.split_at_mut(run - 1);
                    let pairs = planes[src..].chunks_exact(2);
                    for (v, pair) in head.iter_mut().zip(pairs) {
                        *v = pair[0];
                    }
                    last[0] = planes[src + 2 * (run - 1)];
                }
                _ => {
                    for (x, v) in dst.iter_mut().enumerate() {
                        *v = planes[src + x * col_step];
                    }
                }
            }
            j += run;
        }
    }
}
