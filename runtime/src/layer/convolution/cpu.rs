//! The CPU forward: every channel padded once, then per group and tile of output positions the
//! im2col rows and their GEMM as vectorized row updates, in parallel over the tiles.

use rayon::prelude::*;

use super::Convolution;
use crate::error::Result;
use crate::layer::fused_activation::activate;
use crate::layer::kernels;
use crate::layer::view::channel_planes;
use crate::tensor::Mat;

impl Convolution {
    /// The CPU forward.
    pub(super) fn forward_cpu(&self, bottom: &Mat) -> Result<Mat> {
        let [w, h, _, c] = bottom.shape();
        self.window.check_input(bottom.dims, c)?;
        let geo = self.geometry(w, h)?;
        let ([kw, kh], [dw, dh], [sw, sh]) = self.window.taps();
        let [pw, ph] = geo.padded;
        let [ow, oh] = geo.out;
        let (group, cin_g) = (self.window.group, self.window.channels_per_group());
        let cout_g = self.window.num_output / group;
        let (plane, n, k) = (pw * ph, ow * oh, cin_g * kw * kh);

        let (src, step) = channel_planes(bottom);
        let mut padded = vec![self.pad_value; c * plane];
        padded
            .par_chunks_mut(plane.max(1))
            .enumerate()
            .for_each(|(q, dst)| {
                let ch = &src[q * step..q * step + w * h];
                for (y, row) in ch.chunks(w.max(1)).enumerate() {
                    let at = (y + geo.pad_top) * pw + geo.pad_left;
                    dst[at..at + w].copy_from_slice(row);
                }
            });

        // each im2col row's offset into a group's padded channels
        let offsets: Vec<usize> = (0..cin_g)
            .flat_map(|ci| {
                (0..kh)
                    .flat_map(move |ky| (0..kw).map(move |kx| ci * plane + ky * dh * pw + kx * dw))
            })
            .collect();
        const TILE: usize = 256;
        let tiles = n.div_ceil(TILE);
        let results: Vec<(usize, usize, Vec<f32>)> = (0..group * tiles)
            .into_par_iter()
            .map_init(Vec::new, |col: &mut Vec<f32>, job| {
                let (g, t) = (job / tiles, job % tiles);
                let first = t * TILE;
                let len = TILE.min(n - first);
                // the tile's windows: k rows of `len` values
                col.resize(k * len, 0.0);
                let base: Vec<usize> = (first..first + len)
                    .map(|p| (p / ow) * sh * pw + (p % ow) * sw)
                    .collect();
                let group_in = &padded[g * cin_g * plane..(g + 1) * cin_g * plane];
                for (row, off) in col.chunks_mut(len).zip(&offsets) {
                    for (v, b) in row.iter_mut().zip(&base) {
                        *v = group_in[b + off];
                    }
                }
                // the tile's GEMM: each output row gathers weight × im2col row updates
                let mut out = vec![0.0f32; cout_g * len];
                for (oc_g, acc) in out.chunks_mut(len).enumerate() {
                    let oc = g * cout_g + oc_g;
                    acc.fill(self.bias.get(oc).copied().unwrap_or(0.0));
                    let wrow = &self.weights[oc * k..(oc + 1) * k];
                    for (wv, row) in wrow.iter().zip(col.chunks(len)) {
                        let wv = *wv;
                        kernels::zip_with(acc, row, |a, x| a + wv * x);
                    }
                    if self.window.activation != 0 {
                        for v in acc.iter_mut() {
                            *v = activate(
                                self.window.activation,
                                &self.window.activation_params,
                                *v,
                            );
                        }
                    }
                }
                (g, first, out)
            })
            .collect();
        let mut out = vec![0.0f32; self.window.num_output * n];
        for (g, first, tile) in results {
            let len = tile.len() / cout_g.max(1);
            for (oc_g, row) in tile.chunks(len.max(1)).enumerate() {
                let oc = g * cout_g + oc_g;
                out[oc * n + first..oc * n + first + len].copy_from_slice(row);
            }
        }
        Mat::from_shape_values(3, [ow, oh, 1, self.window.num_output], &out)
    }
}
