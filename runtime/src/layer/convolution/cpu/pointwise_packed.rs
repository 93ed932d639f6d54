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
use crate::layer::fused_activation::activate_all;
use crate::layer::grain::min_items;
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

/// The weights as the products' kernel reads them, made on first use.
#[derive(Default)]
pub(crate) struct PackedPointwise(OnceLock<ProductWeights>);

impl Convolution {
    /// The packing the CPU forward takes, if any: a dense pointwise layer (1×1, any stride, no
    /// padding, static weights) of whole packs of channels on each side, on a CPU that runs
    /// the products' kernel on packed blobs.
    pub(in crate::layer::convolution) fn pointwise_pack(&self) -> Option<usize> {
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
    pub(in crate::layer::convolution) fn dense_pack(&self) -> Option<usize> {
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

    /// The forward of a packed `bottom` (3-D, the layer's channels, [`Self::pointwise_pack`])
    /// whose outputs lie as `geo` says: an output of the same packing.
    pub(super) fn pointwise_packed(&self, bottom: &Mat, geo: &Geometry) -> Result<Mat> {
        let (cin, cout) = (self.window.channels(), self.window.num_output);
        let weights = self.packed_pointwise.0.get_or_init(|| {
            let mut u = vec![0.0f32; cin * cout];
            for (oc, row) in self.weights.chunks_exact(cin).enumerate() {
                for (ci, w) in row.iter().enumerate() {
                    u[ci * cout + oc] = *w;
                }
            }
            let kernel = Kernel::packed().expect("pointwise_pack asks for our kernel");
            ProductWeights::new(u, 1, [cin, cout], kernel)
        });
        let Some([width, most]) = weights.blocking() else {
            unreachable!("pointwise_pack asks for our kernel")
        };
        let pack = bottom.elempack;
        let [ow, oh] = geo.out;
        let positions = ow * oh;
        let walk = Walk {
            ow,
            w: bottom.w,
            stride: self.window.stride,
        };
        // every value of every channel written below
        let mut top = Mat::for_writing(3, [ow, oh, 1, cout / pack], pack, ElemType::F32)?;
        let (vrs, ogs) = (bottom.cstep * pack, top.cstep * pack);
        let src = bottom.f32()?;
        let out = top.f32_mut()?;
        let shared = Shared {
            ptr: out.as_mut_ptr(),
            len: out.len(),
        };
        let panels = cout.div_ceil(width);
        // as few chunks as the cache allows, as many as the threads need (of at least two
        // blocks each), all of nearly equal length
        let most_chunk = (CHUNK_INPUT / cin).max(2 * most);
        let for_threads = (TASKS_PER_THREAD * rayon::current_num_threads()).div_ceil(panels);
        let chunks = positions
            .div_ceil(most_chunk)
            .max(for_threads.min(positions / (2 * most)))
            .max(1);
        let chunk = positions.div_ceil(chunks).max(1);
        let (kind, params) = (self.window.activation, &self.window.activation_params);
        (0..positions.div_ceil(chunk) * panels)
            .into_par_iter()
            .with_min_len(min_items(chunk * cin * width))
            .for_each(|task| {
                let (c, p) = (task / panels, task % panels);
                let [t0, t1] = [c * chunk, (c * chunk + chunk).min(positions)];
                weights.packed_panel(p, (src, vrs), [t0, t1], &self.bias, (shared, ogs), walk);
                if kind == 0 {
                    return;
                }
                let groups = width.min(cout - p * width) / pack;
                for g in p * width / pack..p * width / pack + groups {
                    // SAFETY: this task's panel and positions: no other task touches them
                    let run = unsafe { shared.part(g * ogs + t0 * pack, (t1 - t0) * pack) };
                    activate_all(kind, params, run);
                }
            });
        Ok(top)
    }
}
