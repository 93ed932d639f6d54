//! A dense or grouped convolution of int8 levels as int8 GEMMs (ncnn's int8 inference): the
//! input's levels padded, each group's windows laid out as columns (im2col, in bytes, a tile of
//! output rows at a time), times the kernel's levels in int32 ([`int8_gemm`]), the sums
//! returned as fp32 for the layer's scales.

use rayon::prelude::*;

use super::super::{Convolution, Geometry};
use crate::error::Result;
use crate::layer::shared::int8_gemm::{self, Int8Kernel, Int8Rows};
use crate::layer::shared::int8_scales::quantize_into;
use crate::tensor::{ElemType, Mat, MatData};

/// The most bytes one im2col tile holds.
const TILE_BYTES: usize = 1 << 25;

impl Convolution {
    /// Each group's `rows` (output channels × window) over the levels of `bottom` (a pack1
    /// int8 mat's own, an fp32 one's under `scale`; `pad` the padding's level) in int32, each
    /// output's sums then finished by `finish(output, sums)` (fp32; the mat's values).
    pub(in super::super) fn int8_forward(
        &self,
        rows: &[Int8Rows],
        (bottom, scale, pad): (&Mat, f32, i8),
        kernel: Int8Kernel,
        finish: &(dyn Fn(usize, &mut [f32]) + Sync),
    ) -> Result<Mat> {
        let [w, h, _, _] = bottom.shape();
        let geo = self.geometry(w, h)?;
        let ([kw, kh], [dw, dh], [sw, sh]) = self.window.taps();
        let (group, cin_g) = (self.window.group, self.window.channels_per_group());
        let [pw, ph] = geo.padded;
        let [ow, oh] = geo.out;
        let plane = pw * ph;
        let padded = int8_planes(bottom, scale, pad, &geo);
        // a 1×1 stride-1 window reads the planes themselves: no im2col
        let pointwise = [kw, kh, sw, sh] == [1; 4] && [pw, ph] == [ow, oh];
        let cout = self.window.num_output;
        let cout_g = cout / group;
        let mut top = Mat::for_writing(3, [ow, oh, 1, cout], 1, ElemType::F32)?;
        let cstep = top.cstep;
        let out = top.f32_mut()?;
        let k = cin_g * kw * kh;
        let tile_rows = match pointwise {
            true => oh,
            false => (TILE_BYTES / (k * ow).max(1)).clamp(1, oh.max(1)),
        };
        let mut cols = vec![0i8; if pointwise { 0 } else { k * tile_rows * ow }];
        for (g, a) in rows.iter().enumerate().take(group) {
            let planes = &padded[g * cin_g * plane..(g + 1) * cin_g * plane];
            for oy0 in (0..oh).step_by(tile_rows) {
                let n = (oh - oy0).min(tile_rows) * ow;
                if pointwise {
                    let sums = int8_gemm::gemm(kernel, a, planes, plane, n);
                    out[g * cout_g * cstep..(g + 1) * cout_g * cstep]
                        .par_chunks_mut(cstep.max(1))
                        .enumerate()
                        .for_each(|(r, row)| sums.row_into(r, &mut row[..n]));
                    continue;
                }
                // row `t` of the columns: channel t / taps, tap (t % taps) of the window
                cols[..k * n]
                    .par_chunks_mut(n.max(1))
                    .enumerate()
                    .for_each(|(t, dst)| {
                        let (c, tap) = (t / (kw * kh), t % (kw * kh));
                        let (ky, kx) = (tap / kw, tap % kw);
                        let src = &planes[c * plane..(c + 1) * plane];
                        for (i, dst) in dst.chunks_mut(ow.max(1)).enumerate() {
                            let y = (oy0 + i) * sh + ky * dh;
                            let from = &src[y * pw + kx * dw..];
                            if sw == 1 {
                                dst.copy_from_slice(&from[..dst.len()]);
                            } else {
                                for (j, d) in dst.iter_mut().enumerate() {
                                    *d = from[j * sw];
                                }
                            }
                        }
                    });
                let sums = int8_gemm::gemm(kernel, a, &cols[..k * n], n, n);
                out[g * cout_g * cstep..(g + 1) * cout_g * cstep]
                    .par_chunks_mut(cstep.max(1))
                    .enumerate()
                    .for_each(|(r, row)| sums.row_into(r, &mut row[oy0 * ow..oy0 * ow + n]));
            }
            out[g * cout_g * cstep..(g + 1) * cout_g * cstep]
                .par_chunks_mut(cstep.max(1))
                .enumerate()
                .for_each(|(r, row)| finish(g * cout_g + r, &mut row[..ow * oh]));
        }
        Ok(top)
    }
}

/// The levels of `bottom` (a pack1 int8 mat's own, an fp32 one's under `scale`) in planes
/// padded as `geo` says with the level `pad`.
pub(super) fn int8_planes(bottom: &Mat, scale: f32, pad: i8, geo: &Geometry) -> Vec<i8> {
    let [w, h, _, c] = bottom.shape();
    let [pw, ph] = geo.padded;
    let plane = pw * ph;
    let mut padded = vec![pad; c * plane];
    let step = bottom.cstep;
    padded
        .par_chunks_mut(plane.max(1))
        .enumerate()
        .for_each(|(c, dst)| {
            for y in 0..h {
                let (at, from) = ((y + geo.pad_top) * pw + geo.pad_left, c * step + y * w);
                let dst = &mut dst[at..at + w];
                match &bottom.data {
                    MatData::I8(v) => dst.copy_from_slice(&v[from..from + w]),
                    MatData::F32(v) => quantize_into(&v[from..from + w], dst, scale),
                    // the callers pass int8 or fp32
                    _ => {}
                }
            }
        });
    padded
}
