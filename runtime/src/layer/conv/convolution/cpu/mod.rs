//! The CPU forward, one algorithm per file, chosen per layer and shape ([`CpuAlgo`]): every
//! one writes the output channels as rows of the output mat (its channel step apart) and adds
//! the bias and the fused activation as it writes them (the GEMM paths per finished output
//! rectangle, depthwise and Winograd per output).

mod depthwise;
mod depthwise_lanes;
mod im2col;
mod int8_depthwise;
mod int8_gemm;
mod planes;
mod pointwise_packed;
mod products;
mod sink;
mod stem_packed;
mod taps_packed;
mod winograd;

use super::{Convolution, Geometry};
use crate::error::Result;
use crate::error::TensorError;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::phase_planes::Phases;
use crate::tensor::{ElemType, Mat};
pub(crate) use depthwise_lanes::LaneWeights;
use planes::Planes;
pub(crate) use pointwise_packed::PackedPanels;
use sink::Shared;
pub(crate) use taps_packed::PackedTaps;
pub(crate) use winograd::WinogradWeights;
pub(in crate::layer::conv) use winograd::f43_weights;
use winograd::{PackedInput, PackedOutput, WinogradIo};

/// How the CPU computes one convolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuAlgo {
    /// One channel in, one out: the kernel's taps as runs over each channel's phase planes,
    /// in parallel over channels.
    Depthwise,
    /// One channel in, one out, on maps of at most 64 outputs: sixteen channels per vector.
    DepthwiseLanes,
    /// A 1×1, stride-1 kernel: the (padded) input planes are the GEMM's right-hand side.
    Pointwise,
    /// The windows of a tile of output positions as columns (im2col), then the GEMM.
    Im2col,
    /// A 3×3 stride-1 dense kernel as Winograd F(m×m, 3×3) with `m×m` output tiles.
    Winograd(usize),
}

impl Convolution {
    /// The CPU algorithm this layer takes on an input of `w × h` under `opt`.
    pub fn cpu_algo(&self, w: usize, h: usize, opt: &RunOptions) -> Result<CpuAlgo> {
        Ok(self.algo_on(&self.geometry(w, h)?, opt))
    }

    /// The CPU algorithm on an input whose windows lie as `geo` says.
    fn algo_on(&self, geo: &Geometry, opt: &RunOptions) -> CpuAlgo {
        let win = &self.window;
        let winograd = opt
            .use_winograd_convolution
            .then(|| self.winograd_tile(geo))
            .flatten();
        if self.is_depthwise() {
            if geo.out[0] * geo.out[1] <= depthwise_lanes::MAX_LANE_OUTPUTS {
                CpuAlgo::DepthwiseLanes
            } else {
                CpuAlgo::Depthwise
            }
        } else if let Some(m) = winograd {
            CpuAlgo::Winograd(m)
        } else if win.kernel == [1, 1] && win.stride == [1, 1] {
            CpuAlgo::Pointwise
        } else {
            CpuAlgo::Im2col
        }
    }

    /// The CPU forward.
    pub(super) fn forward_cpu(&self, bottom: &Mat, opt: &RunOptions) -> Result<Mat> {
        let [w, h, _, c] = bottom.shape();
        self.window.check_input(bottom.dims, c)?;
        let geo = self.geometry(w, h)?;
        // packed blobs where `support` asked for them: in place where a kernel reads them,
        // else through the planes below (unpacked as they are laid out)
        let pack = Some(bottom.elempack);
        match bottom.elempack {
            1 => {}
            _ if pack == self.taps_pack() => return self.taps_packed(bottom, &geo),
            _ if pack == self.pointwise_pack() => return self.pointwise_packed(bottom, &geo),
            _ if pack == self.dense_pack() => {}
            elempack => {
                return Err(TensorError::Packed {
                    operation: "this convolution's CPU forward",
                    elempack,
                }
                .into());
            }
        }
        let [ow, oh] = geo.out;
        let cout = self.window.num_output;
        let algo = self.algo_on(&geo, opt);
        // a stem's packed output only where the net keeps packed blobs (ncnn's out_elempack)
        let stem = (bottom.elempack == 1 && opt.use_packing_layout).then(|| self.stem_pack(algo));
        if let Some(pack) = stem.flatten() {
            let (input, layout) = self.im2col_input(bottom, &geo, false);
            return self.stem_packed((&input, &layout), &geo, pack);
        }
        // Winograd's output transform stores packed blocks as readily as planes
        let packed_out = bottom.elempack > 1 && cout.is_multiple_of(bottom.elempack);
        let pack = match algo {
            CpuAlgo::Winograd(_) if packed_out => bottom.elempack,
            _ => 1,
        };
        // every algorithm writes every output value
        let mut top = Mat::for_writing(3, [ow, oh, 1, cout / pack], pack, ElemType::F32)?;
        let cstep = top.cstep;
        let out = top.f32_mut()?;
        match algo {
            // bias and activation inside its per-channel tasks
            CpuAlgo::Depthwise => self.depthwise_cpu(bottom, &geo, out, cstep),
            CpuAlgo::DepthwiseLanes => self.depthwise_lanes_cpu(bottom, &geo, out, cstep),
            CpuAlgo::Winograd(m) if Self::winograd_reads_packed(pack) => {
                let input = PackedInput {
                    data: bottom.f32()?,
                    size: [w, h],
                    gstep: bottom.cstep * pack,
                    corner: [geo.pad_left, geo.pad_top],
                    padded: geo.padded,
                    value: self.pad_value,
                };
                let out = PackedOutput {
                    data: Shared::of(out),
                    gstep: cstep * pack,
                };
                self.winograd(m, WinogradIo::Packed(input, out), &geo);
            }
            CpuAlgo::Winograd(m) => {
                // the padded input extended to whole tiles
                let extent = [ow.div_ceil(m) * m + 2, oh.div_ceil(m) * m + 2];
                let input = Planes::padded_to(bottom, &geo, self.pad_value, extent);
                let store = (cstep * pack, pack);
                self.winograd(
                    m,
                    WinogradIo::Planes {
                        input: &input,
                        out,
                        store,
                    },
                    &geo,
                );
            }
            algo => {
                // bias and activation as each GEMM rectangle is done
                let pointwise = algo == CpuAlgo::Pointwise;
                let (input, layout) = self.im2col_input(bottom, &geo, pointwise);
                self.im2col_gemm((&input, &layout), &geo, (out, cstep), pointwise);
                // packed in, packed out where the channels allow, as the other algorithms:
                // the GEMM writes rows, so its planes are interleaved here, once, in parallel
                if packed_out {
                    return top.to_packing(bottom.elempack);
                }
            }
        }
        Ok(top)
    }

    /// The planes im2col (or a pointwise GEMM) reads `bottom` from, padded, and their layout:
    /// phase planes where [`Self::strided_phases`] gives them, else the plain padded planes
    /// (the stride-1 layout).
    fn im2col_input<'a>(
        &self,
        bottom: &'a Mat,
        geo: &Geometry,
        pointwise: bool,
    ) -> (Planes<'a>, Phases) {
        let phases = (!pointwise).then(|| self.strided_phases(geo)).flatten();
        let input = match &phases {
            Some(p) => Planes::phased(bottom, geo, self.pad_value, p),
            None => Planes::padded(bottom, geo, self.pad_value),
        };
        let layout = phases.unwrap_or_else(|| Phases::new(geo.padded, [1, 1]));
        (input, layout)
    }

    /// The phase planes im2col reads a strided layer's input from, where its windows read
    /// every phase (at least as many taps as phases): each tap of an output row is then a
    /// contiguous copy instead of a gather of every `s`-th value (a 7×7 stride-2 layer's
    /// gathers took as long as its GEMM). A 1×1 stride-2 layer, which reads one phase of
    /// four, keeps the gathers: laying out all four cost more than they save.
    fn strided_phases(&self, geo: &Geometry) -> Option<Phases> {
        let ([kw, kh], _, [sw, sh]) = self.window.taps();
        let every_phase = sw * sh > 1 && kw * kh >= sw * sh;
        every_phase.then(|| Phases::new(geo.padded, [sw, sh]))
    }

    /// The Winograd tile size for this layer on `geo`, if it takes Winograd.
    fn winograd_tile(&self, geo: &Geometry) -> Option<usize> {
        let win = &self.window;
        let fits = win.group == 1
            && win.kernel == [3, 3]
            && win.stride == [1, 1]
            && win.dilation == [1, 1];
        fits.then(|| winograd::tile_size(win.channels(), win.num_output, geo.out))
            .flatten()
    }
}
