//! A dense pointwise layer (1×1, unpadded, any stride) on packed blobs (pack8 on x86, pack4 on
//! aarch64), ncnn's `support_packing` for the depthwise-separable networks: the products'
//! kernel reads the input blob in place (a pack's input channels interleaved per position) and
//! writes each panel's output channels as whole packs, from the bias, with the activation
//! applied while they are in cache. No
//! copy of the input, no packing of either operand per call, and no repack between this layer
//! and a packed neighbour (the crate's GEMM takes one stride per dimension and reads neither).

use std::sync::OnceLock;

use rayon::prelude::*;

use super::super::{Convolution, Geometry};
use super::products::{Kernel, ProductWeights, Walk};
use super::sink::Shared;
use super::winograd::MIN_F43_CHANNELS;
use crate::error::Result;
use crate::layer::activation::fused::activate_all;
use crate::layer::shared::grain::min_items;
use crate::tensor::{ElemType, Mat};

/// The input values one chunk of positions spans across all input channels, at most (512 KiB
/// of fp32, within a core's L2): the chunk's values stay there while its panels, the next
/// tasks of the same thread, read them again. Each chunk reads all the weights once, so a
/// layer whose weights outweigh its map takes few chunks: resnet50's 7² layers of 1024 →
/// 2048 channels read their 8 MiB of weights three times in chunks of 24 positions, and ran
/// at half the crate's speed on an H100 host.
const CHUNK_INPUT: usize = 128 * 1024;

/// Tasks per thread the chunks and panels should give at least.
const TASKS_PER_THREAD: usize = 4;

/// The weights (`[cout][k]`, k the input channels times the taps) as the products' kernel
/// reads them, made on first use: a pointwise layer's, or a stem's im2col columns'.
#[derive(Default)]
pub(crate) struct PackedPanels(OnceLock<ProductWeights>);

impl Convolution {
    /// The packing the CPU forward takes, if any: a dense pointwise layer (1×1, any stride, no
    /// padding, static weights) of whole packs of channels on each side, on a CPU that runs
    /// the products' kernel on packed blobs.
    pub(in crate::layer::conv::convolution) fn pointwise_pack(&self) -> Option<usize> {
        let win = &self.window;
        self.dense_pack().filter(|&pack| {
            win.kernel == [1, 1] && win.num_output > 0 && win.num_output.is_multiple_of(pack)
        })
    }

    /// The packing a dense layer takes, if any: the kernel's ([`Kernel::pack`]: 8 on x86, 4
    /// on aarch64) for the pointwise layers ([`Self::pointwise_pack`]; others of whole packs
    /// of input channels read their planes unpacked) and those shaped for Winograd F(4,3)
    /// (3×3, stride 1, undilated, at least [`MIN_F43_CHANNELS`] inputs), whose input transform
    /// gathers a packed blob's rows in place and whose output transform stores packed blocks;
    /// static weights, whole packs of input channels. Other windows keep pack1: im2col would
    /// read the planes unpacked and interleave its output again, two copies more than the net's
    /// one conversion (resnet18's 3×3 stride-2 layers 0.97 → 1.35 ms at 2 threads).
    pub(in crate::layer::conv::convolution) fn dense_pack(&self) -> Option<usize> {
        let win = &self.window;
        let cin = win.channels();
        let winograd = win.kernel == [3, 3]
            && win.stride == [1, 1]
            && win.dilation == [1, 1]
            && cin >= MIN_F43_CHANNELS;
        let pointwise = win.kernel == [1, 1] && win.pad.iter().all(|&p| p <= 0);
        let pack = Kernel::packed()?.pack();
        (!win.dynamic
            && win.group == 1
            && cin > 0
            && cin.is_multiple_of(pack)
            && (winograd || pointwise))
            .then_some(pack)
    }

    /// [`PackedPanels`]: the weights laid out for the products' kernel (which
    /// [`Self::dense_pack`] or [`Self::stem_pack`] found on this CPU).
    pub(super) fn packed_panels(&self) -> &ProductWeights {
        self.packed_panels.0.get_or_init(|| {
            let cout = self.window.num_output;
            let k = self.weights.len() / cout.max(1);
            let mut u = vec![0.0f32; k * cout];
            for (oc, row) in self.weights.chunks_exact(k.max(1)).enumerate() {
                for (ci, w) in row.iter().enumerate() {
                    u[ci * cout + oc] = *w;
                }
            }
            let kernel = Kernel::packed().expect("a packed path asks for our kernel");
            ProductWeights::new(u, 1, [k, cout], kernel)
        })
    }

    /// The forward of a packed `bottom` (3-D, the layer's channels, [`Self::pointwise_pack`])
    /// whose outputs lie as `geo` says: an output of the same packing.
    pub(super) fn pointwise_packed(&self, bottom: &Mat, geo: &Geometry) -> Result<Mat> {
        let (cin, cout) = (self.window.channels(), self.window.num_output);
        let pack = bottom.elempack;
        let [ow, oh] = geo.out;
        let walk = Walk {
            ow,
            w: bottom.w,
            stride: self.window.stride,
        };
        // every value of every channel written below
        let mut top = Mat::for_writing(3, [ow, oh, 1, cout / pack], pack, ElemType::F32)?;
        let (vrs, ogs) = (bottom.cstep * pack, top.cstep * pack);
        let src = bottom.f32()?;
        let shared = Shared::of(top.f32_mut()?);
        debug_assert_eq!(self.packed_panels().cin(), cin);
        self.packed_products((src, vrs, pack), ow * oh, (shared, ogs), walk);
        Ok(top)
    }

    /// The products' kernel over `positions` output positions into packed `out` (its packs
    /// `ogs` values apart, position 0 at its start), from `input` as
    /// [`ProductWeights::packed_panel`] reads it, with the bias and the activation: chunks of
    /// positions by panels of output channels, in parallel.
    pub(super) fn packed_products(
        &self,
        input: (&[f32], usize, usize),
        positions: usize,
        (out, ogs): (Shared, usize),
        walk: Walk,
    ) {
        let weights = self.packed_panels();
        let Some([width, most]) = weights.blocking() else {
            unreachable!("the packed paths ask for our kernel")
        };
        let (k, cout, pack) = (weights.cin(), self.window.num_output, weights.pack());
        let panels = weights.panels();
        let chunk = position_chunk(positions, k, panels, most);
        (0..positions.div_ceil(chunk) * panels)
            .into_par_iter()
            .with_min_len(min_items(chunk * k * width))
            .for_each(|task| {
                let (c, p) = (task / panels, task % panels);
                let [t0, t1] = [c * chunk, (c * chunk + chunk).min(positions)];
                weights.packed_panel([0, p], input, [t0, t1], &self.bias, (out, ogs), walk);
                let first = p * width / pack;
                let packs = first..first + width.min(cout - p * width) / pack;
                // SAFETY: this task's panel and positions: no other task touches them
                unsafe { self.activate_packs((out, ogs), packs, [t0, t1], pack) };
            });
    }

    /// The fused activation over positions `t0..t1` of packs `packs` of packed `out` (packs
    /// `ogs` values apart).
    ///
    /// # Safety
    /// No other task reads or writes those values meanwhile.
    pub(super) unsafe fn activate_packs(
        &self,
        (out, ogs): (Shared, usize),
        packs: std::ops::Range<usize>,
        [t0, t1]: [usize; 2],
        pack: usize,
    ) {
        let (kind, params) = (self.window.activation, &self.window.activation_params);
        if kind == 0 {
            return;
        }
        for g in packs {
            // SAFETY: the caller's values alone
            let run = unsafe { out.part(g * ogs + t0 * pack, (t1 - t0) * pack) };
            activate_all(kind, params, run);
        }
    }
}

/// The positions of one task's chunk, out of `positions` whose inputs are `k` values each,
/// for tasks that each take one of `panels` panels and blocks of `most` positions: as few
/// chunks as the cache allows, as many as the threads need (of at least two blocks each), all
/// of nearly equal length.
pub(super) fn position_chunk(positions: usize, k: usize, panels: usize, most: usize) -> usize {
    let most_chunk = (CHUNK_INPUT / k.max(1)).max(2 * most);
    let for_threads = (TASKS_PER_THREAD * rayon::current_num_threads()).div_ceil(panels);
    let chunks = positions
        .div_ceil(most_chunk)
        .max(for_threads.min(positions / (2 * most)))
        .max(1);
    positions.div_ceil(chunks).max(1)
}
