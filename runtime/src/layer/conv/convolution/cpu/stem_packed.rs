//! A stem convolution (an input whose channels fill no pack, an image's three) with a packed
//! output, as ncnn's pack1-to-pack8 convolutions: im2col's columns times the weights through
//! the products' kernel, which stores whole packs of output channels, each task a chunk of
//! positions whose columns it makes itself and multiplies while they are in cache (columns
//! made for the whole map first were read from memory, 12 KiB apart per row for alexnet's
//! conv1, and the layer took 1.7× the GEMM's time). Through the GEMM its
//! planes were converted by the net for the packed layer after it (vgg16's 224²·64 after
//! conv1_1: 2.8 ms at 2 threads, an eighth of conv1_2's own time).

use rayon::prelude::*;

use super::super::{Convolution, Geometry};
use super::pointwise_packed::position_chunk;
use super::products::{Kernel, Walk};
use super::sink::Shared;
use super::{CpuAlgo, Planes};
use crate::error::Result;
use crate::layer::shared::phase_planes::Phases;
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
    pub(in crate::layer::conv::convolution) fn stem_pack(&self, algo: CpuAlgo) -> Option<usize> {
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
        let positions = ow * oh;
        // every value written by the kernel, chunk by chunk
        let mut top = Mat::for_writing(3, [ow, oh, 1, cout / pack], pack, ElemType::F32)?;
        let ogs = top.cstep * pack;
        let shared = Shared::of(top.f32_mut()?);
        let weights = self.packed_panels();
        let Some([_, most]) = weights.blocking() else {
            unreachable!("stem_pack asks for our kernel")
        };
        let k = weights.cin();
        let columns = self.columns(k, (input, layout), geo);
        let chunk = position_chunk(positions, k, 1, most);
        (0..positions.div_ceil(chunk))
            .into_par_iter()
            .for_each_init(Vec::new, |col: &mut Vec<f32>, c| {
                let [t0, t1] = [c * chunk, (c * chunk + chunk).min(positions)];
                let n = t1 - t0;
                // the chunk's columns, `[k][n]`, made where the kernel reads them next
                col.resize(k * n, 0.0);
                for (row, &off) in col.chunks_exact_mut(n).zip(&columns.offsets) {
                    columns.fill_row(&input.data, off, t0, row);
                }
                // from position t0 on
                let tile = shared.after(t0 * pack);
                let walk = Walk::along(n);
                for p in 0..weights.panels() {
                    weights.packed_panel(
                        [0, p],
                        (col, n, 1),
                        [0, n],
                        &self.bias,
                        (tile, ogs),
                        walk,
                    );
                }
                // SAFETY: positions t0..t1 of every pack: this task's alone
                unsafe { self.activate_packs((shared, ogs), 0..cout / pack, [t0, t1], pack) };
            });
        Ok(top)
    }
}
