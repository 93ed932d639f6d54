//! Depthwise convolution, one channel per task and the whole layer in it: the channel's padded
//! input is laid out once in a thread's scratch as `sh × sw` phase planes (every `s`-th row and
//! column from each offset), which makes every kernel tap one contiguous run over the *whole*
//! output plane at any stride; the plane is computed in the phase width (a few wasted columns
//! per row) as one long vector loop starting from the bias, and its rows are copied out through
//! the fused activation. Row by row, a 7- or 14-wide map left most lanes of each vector idle in
//! scalar tails, and the per-row tap lists cost as much as the arithmetic.

use multiversion::multiversion;
use rayon::prelude::*;

use super::super::{Convolution, Geometry};
use crate::layer::fused_activation::activate_all;
use crate::layer::grain::min_items;
use crate::layer::kernels;
use crate::layer::view::channel_planes;
use crate::tensor::Mat;

/// A tap loop: `out`, the phase planes, each tap's start in them, the weights.
type TapSum = fn(&mut [f32], &[f32], &[usize], &[f32]);

/// Lanes per step of the tap loops: one AVX-512 register, two AVX2 or four NEON ones.
const LANES: usize = 16;

/// `out[i] += Σ_t weights[t] · src[at[t] + i]` over `out`, [`LANES`] values at a time.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn taps_any(out: &mut [f32], src: &[f32], at: &[usize], weights: &[f32]) {
    let n = out.len();
    let taps: Vec<&[f32]> = at.iter().map(|&a| &src[a..a + n]).collect();
    let whole = n - n % LANES;
    for x in (0..whole).step_by(LANES) {
        let mut acc = [0.0f32; LANES];
        acc.copy_from_slice(&out[x..x + LANES]);
        for (tap, w) in taps.iter().zip(weights) {
            let tap = &tap[x..x + LANES];
            for i in 0..LANES {
                acc[i] = w.mul_add(tap[i], acc[i]);
            }
        }
        out[x..x + LANES].copy_from_slice(&acc);
    }
    for x in whole..n {
        out[x] = taps
            .iter()
            .zip(weights)
            .fold(out[x], |s, (tap, w)| w.mul_add(tap[x], s));
    }
}

/// [`taps_any`] for `K` taps (3×3 and 5×5 kernels): the weights in registers and a fixed trip
/// count, so the loop has no bounds checks.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn taps_k<const K: usize>(out: &mut [f32], src: &[f32], at: &[usize], weights: &[f32]) {
    let n = out.len();
    let taps: [&[f32]; K] = std::array::from_fn(|t| &src[at[t]..at[t] + n]);
    let w: [f32; K] = std::array::from_fn(|t| weights[t]);
    let whole = n - n % LANES;
    for x in (0..whole).step_by(LANES) {
        let mut acc = [0.0f32; LANES];
        acc.copy_from_slice(&out[x..x + LANES]);
        for t in 0..K {
            let tap = &taps[t][x..x + LANES];
            for i in 0..LANES {
                acc[i] = w[t].mul_add(tap[i], acc[i]);
            }
        }
        out[x..x + LANES].copy_from_slice(&acc);
    }
    for x in whole..n {
        let mut s = out[x];
        for t in 0..K {
            s = w[t].mul_add(taps[t][x], s);
        }
        out[x] = s;
    }
}

/// Where the phase planes of one padded channel lie: phase `(py, px)` holds padded row
/// `y·sh + py`, column `x·sw + px` at `(py·sw + px)·w·h + y·w + x`.
struct Phases {
    /// Width and height of each phase plane.
    w: usize,
    h: usize,
    stride: [usize; 2],
}

impl Phases {
    fn new(padded: [usize; 2], [sw, sh]: [usize; 2]) -> Self {
        Phases {
            w: padded[0].div_ceil(sw),
            h: padded[1].div_ceil(sh),
            stride: [sw, sh],
        }
    }

    fn len(&self) -> usize {
        self.stride[0] * self.stride[1] * self.w * self.h
    }

    /// The index of padded row `y`, column `x`.
    fn at(&self, y: usize, x: usize) -> usize {
        let [sw, sh] = self.stride;
        ((y % sh) * sw + x % sw) * self.w * self.h + (y / sh) * self.w + x / sw
    }

    /// Lays channel `src` (`w × h`) out padded by `value` into `dst`.
    fn fill(&self, src: &[f32], [w, h]: [usize; 2], geo: &Geometry, value: f32, dst: &mut [f32]) {
        dst.fill(value);
        let sw = self.stride[0];
        for (y, row) in src.chunks_exact(w).take(h).enumerate() {
            let yp = y + geo.pad_top;
            if sw == 1 {
                let at = self.at(yp, geo.pad_left);
                dst[at..at + w].copy_from_slice(row);
            } else {
                let phase = |p: usize| self.at(yp, p + geo.pad_left);
                kernels::split_phases(row, sw, phase, self.w, dst);
            }
        }
    }
}

impl Convolution {
    /// The depthwise forward into `out` (channels `cstep` apart): bias, taps and activation.
    pub(super) fn depthwise_cpu(
        &self,
        bottom: &Mat,
        geo: &Geometry,
        out: &mut [f32],
        cstep: usize,
    ) {
        let ([kw, kh], [dw, dh], stride) = self.window.taps();
        let [ow, oh] = geo.out;
        let (src, step) = channel_planes(bottom);
        let (w, h) = (bottom.w, bottom.h);
        let unpadded = geo.padded == [w, h] && stride == [1, 1];
        let phases = Phases::new(geo.padded, stride);
        // output `(oy, ox)` is computed at `oy·phases.w + ox`
        let n = (oh - 1) * phases.w + ow;
        let at: Vec<usize> = (0..kh)
            .flat_map(|ky| (0..kw).map(move |kx| (ky * dh, kx * dw)))
            .map(|(y, x)| phases.at(y, x))
            .collect();
        let sum: TapSum = match at.len() {
            9 => taps_k::<9>,
            25 => taps_k::<25>,
            _ => taps_any,
        };
        let (kind, params) = (self.window.activation, &self.window.activation_params);
        let kk = kw * kh;
        out.par_chunks_mut(cstep.max(1))
            .take(self.window.num_output)
            .with_min_len(min_items(n * kk))
            .enumerate()
            .for_each_init(
                || (Vec::new(), Vec::new()),
                |(padded, flat): &mut (Vec<f32>, Vec<f32>), (q, plane)| {
                    let channel = &src[q * step..q * step + w * h];
                    let input: &[f32] = if unpadded {
                        channel
                    } else {
                        padded.resize(phases.len(), 0.0);
                        phases.fill(channel, [w, h], geo, self.pad_value, padded);
                        padded
                    };
                    flat.clear();
                    flat.resize(n, self.bias.get(q).copied().unwrap_or(0.0));
                    sum(flat, input, &at, &self.weights[q * kk..(q + 1) * kk]);
                    let plane = &mut plane[..ow * oh];
                    for (oy, row) in plane.chunks_exact_mut(ow).enumerate() {
                        let at = oy * phases.w;
                        row.copy_from_slice(&flat[at..at + ow]);
                    }
                    activate_all(kind, params, plane);
                },
            );
    }
}
