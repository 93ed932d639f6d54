//! Depthwise convolution: each channel's kernel taps as updates of whole output rows (a
//! vectorized multiply-add at stride 1), in parallel over channels.

use rayon::prelude::*;

use super::super::{Convolution, Geometry};
use super::Planes;
use crate::layer::kernels;

impl Convolution {
    /// Accumulates every channel's taps onto `out` (rows `cstep` apart).
    pub(super) fn depthwise_cpu(
        &self,
        input: &Planes<'_>,
        geo: &Geometry,
        out: &mut [f32],
        cstep: usize,
    ) {
        let ([kw, kh], [dw, dh], [sw, sh]) = self.window.taps();
        let [ow, oh] = geo.out;
        let taps = kw * kh;
        out.par_chunks_mut(cstep.max(1))
            .take(self.window.num_output)
            .enumerate()
            .for_each(|(q, plane)| {
                let src = &input.data[q * input.step..];
                let weights = &self.weights[q * taps..(q + 1) * taps];
                for (oy, row) in plane[..ow * oh].chunks_mut(ow.max(1)).enumerate() {
                    for ky in 0..kh {
                        let line = &src[(oy * sh + ky * dh) * input.w..];
                        for kx in 0..kw {
                            let wv = weights[ky * kw + kx];
                            let line = &line[kx * dw..];
                            if sw == 1 {
                                kernels::zip_with(row, &line[..ow], |a, x| a + wv * x);
                            } else {
                                for (x, a) in row.iter_mut().enumerate() {
                                    *a += wv * line[x * sw];
                                }
                            }
                        }
                    }
                }
            });
    }
}
