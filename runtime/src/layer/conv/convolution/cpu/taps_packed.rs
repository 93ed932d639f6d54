//! Depthwise and grouped convolution on packed blobs (ncnn's `support_packing` for
//! ConvolutionDepthWise): a pack's channels per vector as the blob holds them (pack8 with
//! 256-bit SIMD, pack4 on aarch64), every kernel size, stride and dilation. Each task takes one
//! pack of output channels and a band of output rows: the band's input rows of the packs it
//! reads (its own for depthwise, its group's for grouped layers) copied once into a padded
//! scratch (whole rows of pixels, a `memcpy` each), then every output pixel is its taps'
//! vector multiply-adds, written straight into the output's packed rows. The pack1 kernels
//! split each channel into phase planes and copy it out again (about twice the taps' own time
//! in mobilenet_v2's profile); a packed blob needs neither, and a stride-2 tap is one vector
//! load like any other.

use std::sync::OnceLock;

use multiversion::multiversion;
use rayon::prelude::*;

use super::super::{Convolution, Geometry};
use super::depthwise_lanes::{Walk, block_taps};
use crate::error::{Result, TensorError};
use crate::layer::activation::fused::activate_all;
use crate::layer::shared::grain::min_items;
use crate::layer::shared::kernels;
use crate::layer::shared::phase_planes::Phases;
use crate::tensor::{ElemType, Mat};

/// The most input channels per group a grouped layer runs here with: the taps are a direct
/// convolution (a broadcast and a multiply-add per input channel and tap), which RegNet's
/// groups of 8 and 16 channels favour over a GEMM per group; wider groups (alexnet's 48 and
/// 192) keep their GEMMs.
const MAX_GROUP_CHANNELS: usize = 32;

/// The weights as packed lanes, made on first use: `[pack][tap][lane]` for depthwise layers,
/// `[output pack][input channel of the group][tap][lane]` for grouped ones.
#[derive(Default)]
pub(crate) struct PackedTaps(OnceLock<Vec<f32>>);

/// The packing depthwise and grouped layers take on this CPU: eight lanes with 256-bit SIMD,
/// four on aarch64 (NEON), none elsewhere.
fn lanes() -> Option<usize> {
    if kernels::has_256bit_simd() {
        Some(8)
    } else if cfg!(target_arch = "aarch64") {
        Some(4)
    } else {
        None
    }
}

impl Convolution {
    /// The packing the CPU forward takes, if any: a depthwise layer of whole packs of
    /// channels, or a grouped one of whole packs of input and output channels per group (at
    /// most [`MAX_GROUP_CHANNELS`] inputs), with static weights, on a CPU with the vectors for
    /// them.
    pub(in crate::layer::conv::convolution) fn taps_pack(&self) -> Option<usize> {
        let pack = lanes()?;
        let win = &self.window;
        let (cin_g, cout_g) = (win.channels_per_group(), win.num_output / win.group.max(1));
        let grouped = win.group > 1
            && cin_g.is_multiple_of(pack)
            && cout_g.is_multiple_of(pack)
            && cin_g <= MAX_GROUP_CHANNELS;
        let fits = self.is_depthwise() && win.num_output.is_multiple_of(pack) || grouped;
        (!win.dynamic && fits && cin_g > 0).then_some(pack)
    }

    /// The forward of a packed `bottom` ([`Self::taps_pack`]) whose windows lie as `geo` says:
    /// an output of the same packing.
    pub(super) fn taps_packed(&self, bottom: &Mat, geo: &Geometry) -> Result<Mat> {
        match bottom.elempack {
            8 => self.taps_lanes::<8>(bottom, geo),
            4 => self.taps_lanes::<4>(bottom, geo),
            elempack => Err(TensorError::Packed {
                operation: "the packed depthwise and grouped forward",
                elempack,
            }
            .into()),
        }
    }

    /// The weights as [`PackedTaps`] says, for `L` lanes and `kk` taps.
    fn packed_taps<const L: usize>(&self, kk: usize) -> &[[f32; L]] {
        let win = &self.window;
        let weights = self.packed_taps.0.get_or_init(|| {
            let cin_g = win.channels_per_group();
            let mut lanes = vec![0.0f32; win.num_output / L * kk * L * cin_g];
            // ncnn's `[output][input channel of its group][tap]`; depthwise has one input each
            for (oc, kernels) in self.weights.chunks_exact(cin_g * kk).enumerate() {
                for (ci, kernel) in kernels.chunks_exact(kk).enumerate() {
                    for (t, k) in kernel.iter().enumerate() {
                        lanes[(((oc / L) * cin_g + ci) * kk + t) * L + oc % L] = *k;
                    }
                }
            }
            lanes
        });
        weights.as_chunks::<L>().0
    }

    /// [`Self::taps_packed`] on `L`-lane packs.
    fn taps_lanes<const L: usize>(&self, bottom: &Mat, geo: &Geometry) -> Result<Mat> {
        let ([kw, kh], [dw, dh], stride) = self.window.taps();
        let [ow, oh] = geo.out;
        let pw = geo.padded[0];
        let (w, h) = (bottom.w, bottom.h);
        let kk = kw * kh;
        let packs = self.window.num_output / L;
        let depthwise = self.is_depthwise();
        let cin_g = self.window.channels_per_group();
        // the input packs each output pack reads: its own, or its group's
        let (reads, packs_per_group) = if depthwise {
            (1, 1)
        } else {
            (cin_g / L, self.window.num_output / self.window.group / L)
        };
        let weights = self.packed_taps::<L>(kk);
        // tap t of the output at padded pixel p reads pixel p + taps[t]
        let taps = Phases::new(geo.padded, [1, 1]).taps([kw, kh], [dw, dh]);
        let ext_h = dh * (kh - 1) + 1;
        // a row's multiply-adds per output lane: its taps, by the group's inputs (one for
        // depthwise)
        let rows = min_items(ow * kk * L * cin_g).clamp(1, oh.max(1));
        let (kind, params) = (self.window.activation, &self.window.activation_params);
        // every output value written below
        let mut top = Mat::for_writing(3, [ow, oh, 1, packs], L, ElemType::F32)?;
        let ogs = top.cstep * L;
        let (src, igs) = (bottom.f32()?, bottom.cstep * L);
        let pad = [self.pad_value; L];
        top.f32_mut()?
            .par_chunks_mut(ogs.max(1))
            .take(packs)
            .enumerate()
            .flat_map(|(g, plane)| {
                plane[..ow * oh * L]
                    .par_chunks_mut(rows * ow * L)
                    .enumerate()
                    .map(move |(b, band)| (g, b * rows, band))
            })
            .for_each_init(Vec::new, |input: &mut Vec<[f32; L]>, (g, r0, band)| {
                let r1 = r0 + band.len() / (ow * L);
                // the padded rows the band's windows read, of each input pack in turn
                let (p0, p1) = (r0 * stride[1], (r1 - 1) * stride[1] + ext_h);
                let plane = (p1 - p0) * pw;
                input.clear();
                input.resize(reads * plane, pad);
                let first = g / packs_per_group * reads;
                for (i, dst) in input.chunks_exact_mut(plane.max(1)).enumerate() {
                    let pack = src[(first + i) * igs..][..w * h * L].as_chunks::<L>().0;
                    for py in p0..p1 {
                        let Some(y) = py.checked_sub(geo.pad_top).filter(|y| *y < h) else {
                            continue;
                        };
                        let at = (py - p0) * pw + geo.pad_left;
                        dst[at..at + w].copy_from_slice(&pack[y * w..(y + 1) * w]);
                    }
                }
                let bias: [f32; L] =
                    std::array::from_fn(|l| self.bias.get(g * L + l).copied().unwrap_or(0.0));
                let walk = Walk {
                    out: [ow, r1 - r0],
                    stride,
                    pw,
                };
                let out = band.as_chunks_mut::<L>().0;
                let weights = &weights[g * cin_g * kk..][..cin_g * kk];
                if depthwise {
                    block_taps(input, &taps, weights, &bias, walk, out);
                } else {
                    let group = GroupTaps {
                        input,
                        plane,
                        taps: &taps,
                        weights,
                        bias: &bias,
                        walk,
                    };
                    group_taps(&group, out);
                }
                activate_all(kind, params, band);
            });
        Ok(top)
    }
}

/// Output pixels a [`group_taps`] step computes together: as many independent sums as the
/// multiply-adds' latency needs to keep the FMA units busy (one pixel at a time, each of its
/// `cin_g · kk` multiply-adds waited for the last, and 28² layers ran at a tenth of peak).
const PIXELS: usize = 8;

/// One pack of a grouped layer's `L` output channels over a band: `input` holds the group's
/// input packs, `plane` padded pixels apart (`walk.pw` to a row), `weights[ci · kk + t]` the
/// lanes of input channel `ci` and tap `t`.
struct GroupTaps<'a, const L: usize> {
    input: &'a [[f32; L]],
    plane: usize,
    taps: &'a [usize],
    weights: &'a [[f32; L]],
    bias: &'a [f32; L],
    walk: Walk,
}

/// Each output pixel of `g`: its bias plus, over the group's input channels `ci` and the taps
/// `t`, `weights[ci · kk + t] · input value ci % L of pack ci / L at pixel·s + taps[t]`, into
/// `out`'s `[oh·ow][L]` results.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn group_taps<const L: usize>(g: &GroupTaps<'_, L>, out: &mut [[f32; L]]) {
    let [ow, oh] = g.walk.out;
    for oy in 0..oh {
        let row = &mut out[oy * ow..(oy + 1) * ow];
        let (whole, rest) = row.as_chunks_mut::<PIXELS>();
        for (i, pixels) in whole.iter_mut().enumerate() {
            g.pixels([i * PIXELS, oy], pixels);
        }
        for (i, pixel) in rest.iter_mut().enumerate() {
            let at = [whole.len() * PIXELS + i, oy];
            g.pixels::<1>(at, std::array::from_mut(pixel));
        }
    }
}

impl<const L: usize> GroupTaps<'_, L> {
    /// [`group_taps`] for the `N` output pixels from `[ox, oy]` along the row.
    #[inline(always)]
    fn pixels<const N: usize>(&self, [ox, oy]: [usize; 2], out: &mut [[f32; L]; N]) {
        let Walk {
            stride: [sw, sh],
            pw,
            ..
        } = self.walk;
        let kk = self.taps.len();
        let corner = oy * sh * pw + ox * sw;
        let mut acc = [*self.bias; N];
        for (p, ws) in self.weights.chunks_exact(L * kk).enumerate() {
            let pack = &self.input[p * self.plane + corner..];
            for (t, &tap) in self.taps.iter().enumerate() {
                for ci in 0..L {
                    let w = &ws[ci * kk + t];
                    for (n, acc) in acc.iter_mut().enumerate() {
                        let x = pack[tap + n * sw][ci];
                        for l in 0..L {
                            acc[l] = w[l].mul_add(x, acc[l]);
                        }
                    }
                }
            }
        }
        *out = acc;
    }
}
