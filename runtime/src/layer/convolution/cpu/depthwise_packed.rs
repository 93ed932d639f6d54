//! Depthwise convolution on packed blobs (ncnn's `support_packing` for ConvolutionDepthWise):
//! a pack's channels per vector as the blob holds them (pack8 with 256-bit SIMD, pack4 on
//! aarch64), every kernel size, stride and dilation. Each task takes one pack of channels and
//! a band of output rows: the band's input rows copied once into a padded scratch (whole rows
//! of pixels, a `memcpy` each), then every output pixel is its taps' vector multiply-adds
//! ([`block_taps`]), written straight into the output's packed rows. The pack1 kernels split
//! each channel into phase planes and copy it out again (about twice the taps' own time in
//! mobilenet_v2's profile); a packed blob needs neither, and a stride-2 tap is one vector load
//! like any other.

use std::sync::OnceLock;

use rayon::prelude::*;

use super::super::{Convolution, Geometry};
use super::depthwise_lanes::{Walk, block_taps};
use crate::error::{Result, TensorError};
use crate::layer::fused_activation::activate_all;
use crate::layer::grain::min_items;
use crate::layer::kernels;
use crate::layer::phase_planes::Phases;
use crate::tensor::{ElemType, Mat};

/// The weights as `[group][tap][lane]`, made on first use.
#[derive(Default)]
pub(crate) struct PackedDepthwise(OnceLock<Vec<f32>>);

/// The packing depthwise layers take on this CPU: eight lanes with 256-bit SIMD, four on
/// aarch64 (NEON), none elsewhere.
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
    /// channels with static weights, on a CPU with the vectors for them.
    pub(in crate::layer::convolution) fn depthwise_pack(&self) -> Option<usize> {
        let pack = lanes()?;
        (!self.window.dynamic && self.is_depthwise() && self.window.num_output.is_multiple_of(pack))
            .then_some(pack)
    }

    /// The forward of a packed `bottom` ([`Self::depthwise_pack`]) whose windows lie as `geo`
    /// says: an output of the same packing.
    pub(super) fn depthwise_packed(&self, bottom: &Mat, geo: &Geometry) -> Result<Mat> {
        match bottom.elempack {
            8 => self.depthwise_lanes::<8>(bottom, geo),
            4 => self.depthwise_lanes::<4>(bottom, geo),
            elempack => Err(TensorError::Packed {
                operation: "the packed depthwise forward",
                elempack,
            }
            .into()),
        }
    }

    /// [`Self::depthwise_packed`] on `L`-lane packs.
    fn depthwise_lanes<const L: usize>(&self, bottom: &Mat, geo: &Geometry) -> Result<Mat> {
        let ([kw, kh], [dw, dh], stride) = self.window.taps();
        let [ow, oh] = geo.out;
        let pw = geo.padded[0];
        let (w, h) = (bottom.w, bottom.h);
        let kk = kw * kh;
        let groups = self.window.num_output / L;
        let weights = self.packed_depthwise.0.get_or_init(|| {
            let mut lanes = vec![0.0f32; groups * kk * L];
            for (c, kernel) in self.weights.chunks_exact(kk).take(groups * L).enumerate() {
                for (t, k) in kernel.iter().enumerate() {
                    lanes[(c / L * kk + t) * L + c % L] = *k;
                }
            }
            lanes
        });
        let weights = weights.as_chunks::<L>().0;
        // tap t of the output at padded pixel p reads pixel p + taps[t]
        let taps = Phases::new(geo.padded, [1, 1]).taps([kw, kh], [dw, dh]);
        let ext_h = dh * (kh - 1) + 1;
        let rows = min_items(ow * kk * L).clamp(1, oh.max(1));
        let (kind, params) = (self.window.activation, &self.window.activation_params);
        // every output value written below
        let mut top = Mat::for_writing(3, [ow, oh, 1, groups], L, ElemType::F32)?;
        let ogs = top.cstep * L;
        let (src, igs) = (bottom.f32()?, bottom.cstep * L);
        let pad = [self.pad_value; L];
        top.f32_mut()?
            .par_chunks_mut(ogs.max(1))
            .take(groups)
            .enumerate()
            .flat_map(|(g, plane)| {
                plane[..ow * oh * L]
                    .par_chunks_mut(rows * ow * L)
                    .enumerate()
                    .map(move |(b, band)| (g, b * rows, band))
            })
            .for_each_init(Vec::new, |input: &mut Vec<[f32; L]>, (g, r0, band)| {
                let r1 = r0 + band.len() / (ow * L);
                // the padded rows the band's windows read
                let (p0, p1) = (r0 * stride[1], (r1 - 1) * stride[1] + ext_h);
                input.clear();
                input.resize((p1 - p0) * pw, pad);
                let channel = src[g * igs..][..w * h * L].as_chunks::<L>().0;
                for py in p0..p1 {
                    let Some(y) = py.checked_sub(geo.pad_top).filter(|y| *y < h) else {
                        continue;
                    };
                    let at = (py - p0) * pw + geo.pad_left;
                    input[at..at + w].copy_from_slice(&channel[y * w..(y + 1) * w]);
                }
                let bias: [f32; L] =
                    std::array::from_fn(|l| self.bias.get(g * L + l).copied().unwrap_or(0.0));
                let walk = Walk {
                    out: [ow, r1 - r0],
                    stride,
                    pw,
                };
                let out = band.as_chunks_mut::<L>().0;
                block_taps(input, &taps, &weights[g * kk..][..kk], &bias, walk, out);
                activate_all(kind, params, band);
            });
        Ok(top)
    }
}
