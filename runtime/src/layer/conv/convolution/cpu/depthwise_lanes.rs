//! Depthwise convolution on small output maps, sixteen channels per vector: a block of
//! channels' padded inputs laid out pixel by pixel with the channels as lanes, then every
//! output pixel is its taps' vector multiply-adds with per-lane weights, and the block's outputs
//! go back to their planes. On a 7×7 map the plane-wise kernel ([`super::depthwise`]) fills
//! three vectors and a scalar tail per tap and channel, and lays out and copies out every
//! channel on its own; here each tap of each pixel is one full vector for sixteen channels.

use std::sync::OnceLock;

use multiversion::multiversion;
use rayon::prelude::*;

use super::super::{Convolution, Geometry};
use crate::layer::activation::fused::activate_all;
use crate::layer::shared::grain::min_items;
use crate::layer::shared::phase_planes::Phases;
use crate::layer::shared::view::channel_planes;
use crate::tensor::Mat;

/// Channels per block: one AVX-512 register, two AVX2 or four NEON ones.
const LANES: usize = 16;

/// The most output values per channel for which the channel lanes pay: maps up to 8×8
/// (an H100 host, two 7²·1152 5×5 layers at 1 / 2 / 16 threads: 1.06 / 0.43 / 0.20 ms on phase
/// planes, 0.37 / 0.39 / 0.23 in lanes; on 14² maps neither way won throughout: 5×5 layers
/// faster in lanes, 3×3 ones slower).
pub(super) const MAX_LANE_OUTPUTS: usize = 64;

/// One value per channel of a block.
type Lanes = [f32; LANES];

/// A thread's scratch: the block's padded input and its outputs.
type Scratch = (Vec<Lanes>, Vec<Lanes>);

/// The weights as lanes, `[block][tap]` (zeros past the channels), made on first use: the
/// same for every forward, so not laid out again per block and run.
#[derive(Default)]
pub(crate) struct LaneWeights(OnceLock<Vec<Lanes>>);

/// Where a block's windows lie: the output `[ow, oh]`, the stride `[sw, sh]`, the padded
/// input's row length.
#[derive(Clone, Copy)]
pub(super) struct Walk {
    pub(super) out: [usize; 2],
    pub(super) stride: [usize; 2],
    pub(super) pw: usize,
}

/// Each output pixel of one block of `L` channels: `bias` plus, over the taps, `weights[t] ·
/// input[pixel·s + taps[t]]`, lane by lane. `input` holds the padded pixels `walk.pw` to a
/// row, `L` values each; `out` the `[oh·ow][L]` results.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
pub(super) fn block_taps<const L: usize>(
    input: &[[f32; L]],
    taps: &[usize],
    weights: &[[f32; L]],
    bias: &[f32; L],
    walk: Walk,
    out: &mut [[f32; L]],
) {
    let Walk {
        out: [ow, oh],
        stride: [sw, sh],
        pw,
    } = walk;
    for oy in 0..oh {
        for ox in 0..ow {
            let corner = oy * sh * pw + ox * sw;
            let mut acc = *bias;
            for (&t, w) in taps.iter().zip(weights) {
                let v = &input[corner + t];
                for l in 0..L {
                    acc[l] = w[l].mul_add(v[l], acc[l]);
                }
            }
            out[oy * ow + ox] = acc;
        }
    }
}

impl Convolution {
    /// [`LaneWeights`] of this layer (`kk` taps per channel).
    fn lane_weights(&self, kk: usize) -> &[Lanes] {
        self.lane_weights.0.get_or_init(|| {
            let channels = self.window.num_output;
            let mut lanes = vec![[0.0; LANES]; channels.div_ceil(LANES) * kk];
            for (c, kernel) in self.weights.chunks_exact(kk).take(channels).enumerate() {
                let block = &mut lanes[c / LANES * kk..][..kk];
                for (wt, k) in block.iter_mut().zip(kernel) {
                    wt[c % LANES] = *k;
                }
            }
            lanes
        })
    }

    /// The depthwise forward into `out` (channels `cstep` apart) by blocks of [`LANES`]
    /// channels: bias, taps and activation.
    pub(super) fn depthwise_lanes_cpu(
        &self,
        bottom: &Mat,
        geo: &Geometry,
        out: &mut [f32],
        cstep: usize,
    ) {
        let ([kw, kh], [dw, dh], stride) = self.window.taps();
        let [ow, oh] = geo.out;
        let [pw, ph] = geo.padded;
        let (src, step) = channel_planes(bottom);
        let (w, h) = (bottom.w, bottom.h);
        let channels = self.window.num_output;
        let kk = kw * kh;
        // tap t of the output at padded pixel p reads pixel p + taps[t]
        let taps = Phases::new(geo.padded, [1, 1]).taps([kw, kh], [dw, dh]);
        let (kind, params) = (self.window.activation, &self.window.activation_params);
        let cstep = cstep.max(1);
        let lane_weights = self.lane_weights(kk);
        out.par_chunks_mut(cstep * LANES)
            .take(channels.div_ceil(LANES))
            .with_min_len(min_items(ow * oh * kk * LANES))
            .enumerate()
            .for_each_init(
                || (Vec::new(), Vec::new()),
                |(input, flat): &mut Scratch, (b, planes)| {
                    let c0 = b * LANES;
                    let lanes = LANES.min(channels - c0);
                    // the block's padded input, channels as lanes (lanes past the channels
                    // hold the pad value and feed outputs that are dropped)
                    input.clear();
                    input.resize(pw * ph, [self.pad_value; LANES]);
                    for l in 0..lanes {
                        let channel = &src[(c0 + l) * step..][..w * h];
                        for (y, row) in channel.chunks_exact(w.max(1)).enumerate() {
                            let at = (y + geo.pad_top) * pw + geo.pad_left;
                            for (px, v) in input[at..at + w].iter_mut().zip(row) {
                                px[l] = *v;
                            }
                        }
                    }
                    let bias: Lanes =
                        std::array::from_fn(|l| self.bias.get(c0 + l).copied().unwrap_or(0.0));
                    flat.resize(ow * oh, [0.0; LANES]);
                    let walk = Walk {
                        out: [ow, oh],
                        stride,
                        pw,
                    };
                    let weights = &lane_weights[b * kk..][..kk];
                    block_taps(input, &taps, weights, &bias, walk, flat);
                    for (l, plane) in planes.chunks_mut(cstep).take(lanes).enumerate() {
                        let plane = &mut plane[..ow * oh];
                        for (o, px) in plane.iter_mut().zip(flat.iter()) {
                            *o = px[l];
                        }
                        activate_all(kind, params, plane);
                    }
                },
            );
    }
}
