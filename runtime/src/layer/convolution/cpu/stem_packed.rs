//! A stem convolution (an input whose channels fill no pack, an image's three) with a packed
//! output, as ncnn's pack1-to-pack8 convolutions: im2col's columns times the weights through
//! the products' kernel, which stores whole packs of output channels. Through the GEMM its
//! planes were converted by the net for the packed layer after it (vgg16's 224²·64 after
//! conv1_1: 2.8 ms at 2 threads, an eighth of conv1_2's own time).

use super::super::{Convolution, Geometry};
use super::products::{Kernel, Walk};
use super::sink::Shared;
use super::{CpuAlgo, Planes};
use crate::error::Result;
use crate::layer::phase_planes::Phases;
use crate::tensor::{ElemType, Mat};

/// The most rows (input channels times taps) of the columns: a stem's are few (27 for a 3×3
/// kernel over an image, 363 for alexnet's 11×11), which the kernel's panels stream through
/// in cache.
const MAX_COLUMN_ROWS: usize = 1024;

impl Convolution {
    /// The packing of a stem's output taking `algo`, if any: im2col over a pack1 input whose
    /// channels fill no pack (the net does not pack it), a dense layer with static weights and
    /// whole packs of output channels, at most [`MAX_COLUMN_ROWS`] rows of columns, where the
    /// products' kernel runs.
    pub(in crate::layer::convolution) fn stem_pack(&self, algo: CpuAlgo) -> Option<usize> {
        let pack = Kernel::packed()?.pack();
        let win = &self.window;
        let k = win.channels() * win.kernel[0] * win.kernel[1];
        let stem = algo == CpuAlgo::Im2col
            && !win.dynamic
            && win.group == 1
            && !win.channels().is_multiple_of(pack)
            && win.num_output > 0
            && win.num_output.is_multiple_of(pack)
            && k <= MAX_COLUMN_ROWS;
        stem.then_some(pack)
    }

    /// The forward of a stem ([`Self::stem_pack`]) on `input` laid out as `layout` says: a
    /// `pack` output.
    pub(super) fn stem_packed(
        &self,
        (input, layout): (&Planes<'_>, &Phases),
        geo: &Geometry,
        pack: usize,
    ) -> Result<Mat> {
        let cout = self.window.num_output;
        let [ow, oh] = geo.out;
        // every value written by the kernel, tile by tile
        let mut top = Mat::for_writing(3, [ow, oh, 1, cout / pack], pack, ElemType::F32)?;
        let ogs = top.cstep * pack;
        let out = top.f32_mut()?;
        let len = out.len();
        let k = self.packed_panels().cin();
        self.column_tiles(k, &input.data, (input, layout), geo, |first, n, columns| {
            // the tile's positions from `first` on, their columns `n` apart
            let tile = Shared {
                ptr: out[first * pack..].as_mut_ptr(),
                len: len - first * pack,
            };
            let walk = Walk {
                ow: n,
                w: n,
                stride: [1, 1],
            };
            self.packed_products((columns, n, 1), n, (tile, ogs), walk);
        });
        Ok(top)
    }
}
