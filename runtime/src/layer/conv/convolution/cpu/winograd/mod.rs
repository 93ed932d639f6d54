//! Winograd F(m×m, 3×3) for 3×3 stride-1 convolutions (ncnn's choice on x86 and ARM): each m×m
//! output tile from an n×n input tile (n = m + 2) as `Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A`, the
//! element-wise products of all tiles and channels as n² GEMMs (output channels × input
//! channels times input channels × tiles). F(4,3) (36 products for 16 outputs, against 144
//! for the direct form), F(2,3) (16 for 4) where the map is small against the channels.
//!
//! The matrices come from their interpolation points (Cook–Toom), computed at compile time:
//! `Aᵀ[i][j] = p_jⁱ`, `G[j][k] = p_jᵏ / Π_{l≠j}(p_j − p_l)`, row j of `Bᵀ` the coefficients of
//! `Π_{l≠j}(x − p_l)`, and the point at infinity as the last row/column.

mod forward;
mod input;
mod output;
mod packed;
mod transform;

use std::sync::OnceLock;

use super::super::{Convolution, Geometry};
use super::Planes;
use super::products::{Kernel, ProductWeights};
use output::Epilogue;
pub(in crate::layer::conv::convolution) use packed::{PackedInput, PackedOutput};
use transform::{F23, F43, F43_BALANCED};

/// Channels (output transform) or tiles (input transform) computed together, one per vector
/// lane.
const LANES: usize = 16;

/// The weights in a tile size's domain, made once per layer on first use and laid out for the
/// products' kernel.
#[derive(Default)]
pub(crate) struct WinogradWeights {
    f23: OnceLock<ProductWeights>,
    f43: OnceLock<ProductWeights>,
}

/// The fewest input channels for which F(4,3) pays: below, the transforms outweigh the
/// products they save, and the im2col GEMM is faster (an H200 host, squeezenet's fire layers
/// alone, ms at 16 / 2 threads, Winograd against im2col: 55²·16 → 64 0.55 / 0.33 and 0.61 /
/// 0.54; 27²·32 → 128 0.29 / 0.22 and 0.35 / 0.33; 13²·48 → 192 and 13²·64 → 256 even).
pub(super) const MIN_F43_CHANNELS: usize = 32;

/// Which tile size, if any, a 3×3 stride-1 dense layer of `cin → cout` channels takes on an
/// output of `ow × oh`: F(4,3) from [`MIN_F43_CHANNELS`] input channels, or F(2,3) on maps up
/// to 8 and on maps up to 14 once both sides have 128 channels (ncnn's x86 tables in outline:
/// the transformed weights are n²/9 times the kernel's and outweigh such a map, and 4×4 tiles
/// waste much of a small one). On maps up to 8 F(2,3) whatever the channels: with the products
/// on this project's kernel, 7²·512 → 512 took 1.6–1.9 ms against im2col's 2.0–2.7 on the
/// 2-core AVX2 machine at 2 threads, packed or not (4²·512 even), where on the `gemm` crate's
/// products it had lost (5.3 against 4.0 ms). Measured on one core (BENCHMARKS.md), F(6,3) lost to F(4,3) on
/// every shape from 16 to 512 channels and 7 to 224 pixels, by up to 1.6× (its 64 products per
/// tile leave the cache between the GEMMs and the output transform), so it is not offered.
pub(crate) fn tile_size(cin: usize, cout: usize, [ow, oh]: [usize; 2]) -> Option<usize> {
    if cin < 8 || cout < 8 {
        return None;
    }
    match ow.min(oh) {
        ..2 => None,
        2..=8 => Some(2),
        _ if cin < MIN_F43_CHANNELS => None,
        ..=14 if cin >= 128 && cout >= 128 => Some(2),
        _ => Some(4),
    }
}

/// The F(4,3) weights through 0, ±√2, ±√2/2 as `[36][cin][cout]`, for the GPU's Winograd
/// (whose shaders hold the matching `Bᵀ` and `Aᵀ`).
pub(in crate::layer::conv) fn f43_weights(weights: &[f32], cout: usize, cin: usize) -> Vec<f32> {
    F43_BALANCED.weights(weights, cout, cin)
}

/// What the Winograd convolution reads and where it writes.
pub(in crate::layer::conv::convolution) enum WinogradIo<'a, 'b> {
    /// The padded input's planes (extended to whole tiles), into `out` as channels `cstep`
    /// apart, or with `pack` 4 or 8 packed blocks `cstep` values apart.
    Planes {
        input: &'b Planes<'a>,
        out: &'b mut [f32],
        store: (usize, usize),
    },
    /// A packed blob in place, into a packed output of the same pack (the products' kernel's).
    Packed(PackedInput<'a>, PackedOutput),
}

impl Convolution {
    /// The Winograd convolution with `m×m` output tiles, bias and activation included, every
    /// output written.
    pub(super) fn winograd(&self, m: usize, io: WinogradIo<'_, '_>, geo: &Geometry) {
        let (cin, cout) = (self.window.channels(), self.window.num_output);
        let dims = [cin, cout, geo.out[0], geo.out[1]];
        let epilogue = Epilogue {
            bias: &self.bias,
            kind: self.window.activation,
            params: &self.window.activation_params,
        };
        let tw = &self.winograd;
        match m {
            4 => {
                let u = tw.f43.get_or_init(|| {
                    let u = F43.weights(&self.weights, cout, cin);
                    ProductWeights::new(u, 36, [cin, cout], Kernel::detect())
                });
                F43.run(u, io, dims, &epilogue);
            }
            _ => {
                let u = tw.f23.get_or_init(|| {
                    let u = F23.weights(&self.weights, cout, cin);
                    ProductWeights::new(u, 16, [cin, cout], Kernel::detect())
                });
                F23.run(u, io, dims, &epilogue);
            }
        }
    }

    /// Whether the Winograd convolution reads a packed blob of `elempack` (whose output keeps
    /// it) in place ([`WinogradIo::Packed`]): the pack of the kernel its products run on.
    pub(super) fn winograd_reads_packed(elempack: usize) -> bool {
        elempack > 1 && Kernel::detect().pack() == elempack
    }
}

impl<const M: usize, const N: usize> transform::Transform<M, N> {
    /// [`Self::forward`] or [`Self::forward_packed`], as `io` says.
    fn run(&self, u: &ProductWeights, io: WinogradIo<'_, '_>, dims: [usize; 4], e: &Epilogue) {
        match io {
            WinogradIo::Planes { input, out, store } => self.forward(u, input, dims, e, out, store),
            WinogradIo::Packed(input, out) => match u.pack() {
                8 => self.forward_packed::<8>(u, &input, dims, e, out),
                4 => self.forward_packed::<4>(u, &input, dims, e, out),
                pack => unreachable!("no packed Winograd for pack {pack}"),
            },
        }
    }
}
