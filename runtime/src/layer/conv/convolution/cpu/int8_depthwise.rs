//! A depthwise convolution of int8 levels (ncnn's int8 ConvolutionDepthWise): each channel's
//! taps over its padded plane of levels, summed in int32 a row of outputs at a time, then the
//! channel's sums finished by the layer's scales.

use multiversion::multiversion;
use rayon::prelude::*;

use super::super::Convolution;
use super::int8_gemm::int8_planes;
use crate::error::Result;
use crate::layer::shared::grain::min_items;
use crate::tensor::{ElemType, Mat};

impl Convolution {
    /// The depthwise sums of the kernel's `levels` (each channel's taps) over the levels of
    /// `bottom` (as [`int8_planes`] reads it; `pad` the padding's level), each channel's
    /// then finished by `finish(channel, sums)`.
    pub(in super::super) fn int8_depthwise(
        &self,
        levels: &[i8],
        (bottom, scale, pad): (&Mat, f32, i8),
        finish: &(dyn Fn(usize, &mut [f32]) + Sync),
    ) -> Result<Mat> {
        let [w, h, _, c] = bottom.shape();
        self.window.check_input(bottom.dims, c)?;
        let geo = self.geometry(w, h)?;
        let padded = int8_planes(bottom, scale, pad, &geo);
        let [ow, oh] = geo.out;
        let plane = geo.padded[0] * geo.padded[1];
        let [kw, kh] = self.window.kernel;
        let mut top = Mat::for_writing(3, [ow, oh, 1, c], 1, ElemType::F32)?;
        let cstep = top.cstep;
        top.f32_mut()?
            .par_chunks_mut(cstep.max(1))
            .with_min_len(min_items(ow * oh * kw * kh))
            .enumerate()
            .for_each(|(q, out)| {
                let out = &mut out[..ow * oh];
                let taps = &levels[q * kw * kh..(q + 1) * kw * kh];
                let src = &padded[q * plane..(q + 1) * plane];
                let (dil, stride) = (self.window.dilation, self.window.stride);
                channel_sums(
                    (src, geo.padded[0]),
                    (taps, kw),
                    (dil, stride),
                    [ow, oh],
                    out,
                );
                finish(q, out);
            });
        Ok(top)
    }
}

/// One channel's sums: `taps` (`kw` wide) over the padded plane `src` (rows `pw` wide) with
/// dilation `dil` and stride `stride` into `out` (`ow × oh`), a row of int32 sums at a time.
#[multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn channel_sums(
    (src, pw): (&[i8], usize),
    (taps, kw): (&[i8], usize),
    (dil, stride): ([usize; 2], [usize; 2]),
    [ow, oh]: [usize; 2],
    out: &mut [f32],
) {
    let kh = taps.len() / kw.max(1);
    let s = stride[0].max(1);
    // a strided row split into its `s` phases (value `p + s·i` at `p·len + i`), so each tap
    // reads a contiguous run: the gather of every s-th value did not vectorize
    let len = pw.div_ceil(s);
    let mut phases = vec![0i8; s * len];
    let mut acc = vec![0i32; ow];
    for (oy, out) in out.chunks_mut(ow.max(1)).enumerate().take(oh) {
        acc.fill(0);
        for ky in 0..kh {
            let row = &src[(oy * stride[1] + ky * dil[1]) * pw..][..pw];
            let row = if s == 1 {
                row
            } else {
                for (x, &v) in row.iter().enumerate() {
                    phases[(x % s) * len + x / s] = v;
                }
                &phases[..]
            };
            for (kx, &w) in taps[ky * kw..(ky + 1) * kw].iter().enumerate() {
                let at = kx * dil[0];
                let from = &row[(at % s) * len + at / s..];
                let w = w as i32;
                for (a, &x) in acc.iter_mut().zip(from) {
                    *a += w * x as i32;
                }
            }
        }
        for (o, &a) in out.iter_mut().zip(&acc) {
            *o = a as f32;
        }
    }
}
