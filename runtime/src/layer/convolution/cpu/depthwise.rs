//! Depthwise convolution: per channel (in parallel), each output row as the sum of its kernel
//! taps over contiguous input runs, eight outputs at a time in registers. A stride-`s` layer
//! first splits each padded input row into its `s` phases (every `s`-th value from each
//! offset), so that every tap reads a contiguous run at any stride.

use multiversion::multiversion;
use rayon::prelude::*;

use super::super::{Convolution, Geometry};
use super::Planes;
use crate::layer::kernels;

/// `out[x] += Σ_t weights[t] · taps[t][x]` over `out`, eight values at a time.
#[multiversion(targets("x86_64+avx2+fma", "aarch64+neon"))]
fn tap_row(out: &mut [f32], taps: &[&[f32]], weights: &[f32]) {
    let n = out.len();
    let whole = n - n % 8;
    for x in (0..whole).step_by(8) {
        let mut acc = [0.0f32; 8];
        acc.copy_from_slice(&out[x..x + 8]);
        for (src, w) in taps.iter().zip(weights) {
            let src = &src[x..x + 8];
            for i in 0..8 {
                acc[i] += w * src[i];
            }
        }
        out[x..x + 8].copy_from_slice(&acc);
    }
    for x in whole..n {
        let mut s = out[x];
        for (src, w) in taps.iter().zip(weights) {
            s += w * src[x];
        }
        out[x] = s;
    }
}

/// [`tap_row`] for `K` taps (3×3 and 5×5 kernels): the taps cut to the row's length once and
/// the weights in registers, so the inner loop has no bounds checks and a fixed trip count.
#[multiversion(targets("x86_64+avx2+fma", "aarch64+neon"))]
fn tap_row_k<const K: usize>(out: &mut [f32], taps: &[&[f32]], weights: &[f32]) {
    let n = out.len();
    let taps: [&[f32]; K] = std::array::from_fn(|t| &taps[t][..n]);
    let w: [f32; K] = std::array::from_fn(|t| weights[t]);
    let whole = n - n % 8;
    for x in (0..whole).step_by(8) {
        let mut acc = [0.0f32; 8];
        acc.copy_from_slice(&out[x..x + 8]);
        for t in 0..K {
            let src = &taps[t][x..x + 8];
            for i in 0..8 {
                acc[i] += w[t] * src[i];
            }
        }
        out[x..x + 8].copy_from_slice(&acc);
    }
    for x in whole..n {
        let mut s = out[x];
        for t in 0..K {
            s += w[t] * taps[t][x];
        }
        out[x] = s;
    }
}

impl Convolution {
    /// Accumulates every channel's taps onto `out` (rows `cstep` apart).
    pub(super) fn depthwise_cpu(
        &self,
        input: &Planes<'_>,
        geo: &Geometry,
        out: &mut [f32],
        cstep: usize,
    ) {
        let ([kw, kh], [dw, dh], [sw, sh]) = self.window.taps();
        let [ow, oh] = geo.out;
        let (pw, ph) = (input.w, input.step / input.w.max(1));
        // each phase row holds ceil(pw / sw) values
        let phase_w = pw.div_ceil(sw);
        let kk = kw * kh;
        out.par_chunks_mut(cstep.max(1))
            .take(self.window.num_output)
            .enumerate()
            .for_each_init(Vec::new, |phases: &mut Vec<f32>, (q, plane)| {
                let src = &input.data[q * input.step..q * input.step + pw * ph];
                // the plane the taps read: rows of `row_w`, phase p of row y at
                // (p * ph + y) * row_w
                let (data, row_w): (&[f32], usize) = if sw == 1 {
                    (src, pw)
                } else {
                    phases.clear();
                    phases.resize(sw * ph * phase_w, 0.0);
                    for (y, row) in src.chunks_exact(pw.max(1)).enumerate() {
                        kernels::split_phases(row, sw, |p| (p * ph + y) * phase_w, phase_w, phases);
                    }
                    (phases, phase_w)
                };
                let weights = &self.weights[q * kk..(q + 1) * kk];
                // each kx's phase and offset within it
                let columns: Vec<(usize, usize)> =
                    (0..kw).map(|kx| ((kx * dw) % sw, (kx * dw) / sw)).collect();
                let row_fn: fn(&mut [f32], &[&[f32]], &[f32]) = match kk {
                    9 => tap_row_k::<9>,
                    25 => tap_row_k::<25>,
                    _ => tap_row,
                };
                let mut taps: Vec<&[f32]> = Vec::with_capacity(kk);
                for (oy, row) in plane[..ow * oh].chunks_mut(ow.max(1)).enumerate() {
                    taps.clear();
                    for ky in 0..kh {
                        let y = oy * sh + ky * dh;
                        for &(p, off) in &columns {
                            let at = (p * ph + y) * row_w + off;
                            taps.push(&data[at..at + ow]);
                        }
                    }
                    row_fn(row, &taps, weights);
                }
            });
    }
}
