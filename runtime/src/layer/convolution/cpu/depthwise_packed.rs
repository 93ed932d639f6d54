//! Depthwise convolution on pack8 blobs (ncnn's `support_packing` for ConvolutionDepthWise):
//! eight channels per vector as the blob holds them, every kernel size, stride and dilation.
//! Each task takes one group of eight channels and a band of output rows: the band's input
//! rows copied once into a padded scratch (whole rows of pixels, a `memcpy` each), then every
//! output pixel is its taps' vector multiply-adds ([`block_taps`]), written straight into the
//! output's pack8 rows. The pack1 kernels split each channel into phase planes and copy it out
//! again (about twice the taps' own time in mobilenet_v2's profile); a pack8 blob needs
//! neither, and a stride-2 tap is one vector load like any other.

use std::sync::OnceLock;

use rayon::prelude::*;

use super::super::{Convolution, Geometry};
use super::depthwise_lanes::{Walk, block_taps};
use crate::error::Result;
use crate::layer::fused_activation::activate_all;
use crate::layer::grain::min_items;
use crate::layer::kernels;
use crate::layer::phase_planes::Phases;
use crate::tensor::{ElemType, Mat};

/// Eight channels: one pack8 element.
type Lanes = [f32; 8];

/// The weights as `[group][tap]` lanes, made on first use.
#[derive(Default)]
pub(crate) struct PackedDepthwise(OnceLock<Vec<Lanes>>);

impl Convolution {
    /// Whether the CPU forward takes pack8 blobs: a depthwise layer of whole groups of eight
    /// channels with static weights.
    pub(in crate::layer::convolution) fn depthwise_pack8(&self) -> bool {
        !self.window.dynamic
            && self.is_depthwise()
            && self.window.num_output.is_multiple_of(8)
            && kernels::has_256bit_simd()
    }

    /// The forward of a pack8 `bottom` whose windows lie as `geo` says: a pack8 output.
    pub(super) fn depthwise_packed(&self, bottom: &Mat, geo: &Geometry) -> Result<Mat> {
        let ([kw, kh], [dw, dh], stride) = self.window.taps();
        let [ow, oh] = geo.out;
        let pw = geo.padded[0];
        let (w, h) = (bottom.w, bottom.h);
        let kk = kw * kh;
        let groups = self.window.num_output / 8;
        let weights = self.packed_depthwise.0.get_or_init(|| {
            let mut lanes = vec![[0.0f32; 8]; groups * kk];
            for (c, kernel) in self.weights.chunks_exact(kk).take(groups * 8).enumerate() {
                for (t, k) in kernel.iter().enumerate() {
                    lanes[c / 8 * kk + t][c % 8] = *k;
                }
            }
            lanes
        });
        // tap t of the output at padded pixel p reads pixel p + taps[t]
        let taps = Phases::new(geo.padded, [1, 1]).taps([kw, kh], [dw, dh]);
        let ext_h = dh * (kh - 1) + 1;
        let rows = min_items(ow * kk * 8).clamp(1, oh.max(1));
        let (kind, params) = (self.window.activation, &self.window.activation_params);
        // every output value written below
        let mut top = Mat::for_writing(3, [ow, oh, 1, groups], 8, ElemType::F32)?;
        let ogs = top.cstep * 8;
        let (src, igs) = (bottom.f32()?, bottom.cstep * 8);
        let pad = [self.pad_value; 8];
        top.f32_mut()?
            .par_chunks_mut(ogs.max(1))
            .take(groups)
            .enumerate()
            .flat_map(|(g, plane)| {
                plane[..ow * oh * 8]
                    .par_chunks_mut(rows * ow * 8)
                    .enumerate()
                    .map(move |(b, band)| (g, b * rows, band))
            })
            .for_each_init(Vec::new, |input: &mut Vec<Lanes>, (g, r0, band)| {
                let r1 = r0 + band.len() / (ow * 8);
                // the padded rows the band's windows read
                let (p0, p1) = (r0 * stride[1], (r1 - 1) * stride[1] + ext_h);
                input.clear();
                input.resize((p1 - p0) * pw, pad);
                let channel: &[Lanes] = bytemuck::cast_slice(&src[g * igs..][..w * h * 8]);
                for py in p0..p1 {
                    let Some(y) = py.checked_sub(geo.pad_top).filter(|y| *y < h) else {
                        continue;
                    };
                    let at = (py - p0) * pw + geo.pad_left;
                    input[at..at + w].copy_from_slice(&channel[y * w..(y + 1) * w]);
                }
                let bias: Lanes =
                    std::array::from_fn(|l| self.bias.get(g * 8 + l).copied().unwrap_or(0.0));
                let walk = Walk {
                    out: [ow, r1 - r0],
                    stride,
                    pw,
                };
                let out: &mut [Lanes] = bytemuck::cast_slice_mut(band);
                block_taps(input, &taps, &weights[g * kk..][..kk], &bias, walk, out);
                activate_all(kind, params, band);
            });
        Ok(top)
    }
}
