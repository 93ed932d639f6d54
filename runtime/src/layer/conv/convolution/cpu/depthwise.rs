//! Depthwise convolution, one channel per task and the whole layer in it: the channel's padded
//! input laid out once in a thread's scratch as phase planes ([`Phases`]), each kernel tap one
//! contiguous run over the whole output plane at any stride, computed from the bias and
//! copied out through the fused activation.

use rayon::prelude::*;

use super::super::{Convolution, Geometry};
use crate::layer::activation::fused::activate_all;
use crate::layer::shared::grain::min_items;
use crate::layer::shared::phase_planes::{Combine, Phases, accumulate};
use crate::layer::shared::view::channel_planes;
use crate::tensor::Mat;

impl Convolution {
    /// The depthwise forward into `out` (channels `cstep` apart): bias, taps and activation.
    pub(super) fn depthwise_cpu(
        &self,
        bottom: &Mat,
        geo: &Geometry,
        out: &mut [f32],
        cstep: usize,
    ) {
        let ([kw, kh], [dw, dh], stride) = self.window.taps();
        let [ow, oh] = geo.out;
        let (src, step) = channel_planes(bottom);
        let (w, h) = (bottom.w, bottom.h);
        let unpadded = geo.padded == [w, h] && stride == [1, 1];
        let phases = Phases::new(geo.padded, stride);
        // output `(oy, ox)` is computed at `oy·phases.w + ox`
        let n = phases.flat_len([ow, oh]);
        let at = phases.taps([kw, kh], [dw, dh]);
        let (kind, params) = (self.window.activation, &self.window.activation_params);
        let kk = kw * kh;
        let pad = [geo.pad_left, geo.pad_top];
        out.par_chunks_mut(cstep.max(1))
            .take(self.window.num_output)
            .with_min_len(min_items(n * kk))
            .enumerate()
            .for_each_init(
                || (Vec::new(), Vec::new()),
                |(padded, flat): &mut (Vec<f32>, Vec<f32>), (q, plane)| {
                    let channel = &src[q * step..q * step + w * h];
                    let input: &[f32] = if unpadded {
                        channel
                    } else {
                        padded.resize(phases.len(), 0.0);
                        phases.fill(channel, [w, h], pad, self.pad_value, padded);
                        padded
                    };
                    flat.clear();
                    flat.resize(n, self.bias.get(q).copied().unwrap_or(0.0));
                    let weights = &self.weights[q * kk..(q + 1) * kk];
                    accumulate(flat, input, &at, weights, Combine::MulAdd);
                    let plane = &mut plane[..ow * oh];
                    phases.copy_out(flat, [ow, oh], plane);
                    activate_all(kind, params, plane);
                },
            );
    }
}
