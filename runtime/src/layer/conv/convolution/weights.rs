//! The weight layouts the GPU shaders read, made once at upload.

use super::Convolution;
use crate::layer::conv::implicit_gemm::gemm_weights;

impl Convolution {
    /// The pack4 weights of the dense and grouped shader (and of the pack4-to-pack1 one): per
    /// output block of 4, its group's input blocks of 4 and kernel position, four rows (one
    /// per output lane) of four input weights; a last, partial block of outputs has zero
    /// rows past them.
    pub(super) fn weights_pack4(&self) -> Vec<f32> {
        let [kw, kh] = self.window.kernel;
        let (cin_g, kk) = (self.window.channels_per_group(), kw * kh);
        let outs = self.window.num_output;
        let mut out = Vec::with_capacity(self.weights.len());
        for o4 in 0..outs.div_ceil(4) {
            for i4 in 0..cin_g / 4 {
                for k in 0..kk {
                    for lane in 0..4 {
                        for j in 0..4 {
                            let (o, i) = (o4 * 4 + lane, i4 * 4 + j);
                            out.push(match o < outs {
                                true => self.weights[(o * cin_g + i) * kk + k],
                                false => 0.0,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// The pack4 weights of the GEMM ([`gemm_weights`]).
    pub(super) fn weights_gemm(&self) -> Vec<f32> {
        let [kw, kh] = self.window.kernel;
        let cin = self.window.channels_per_group();
        gemm_weights(&self.weights, cin, kw * kh, self.window.num_output)
    }

    /// The pack4 weights of the depthwise shader: per channel block and kernel position, the
    /// four channels' weights.
    pub(super) fn weights_depthwise_pack4(&self) -> Vec<f32> {
        let kk = self.window.kernel[0] * self.window.kernel[1];
        let mut out = Vec::with_capacity(self.weights.len());
        for c4 in 0..self.window.num_output / 4 {
            for k in 0..kk {
                for lane in 0..4 {
                    out.push(self.weights[(c4 * 4 + lane) * kk + k]);
                }
            }
        }
        out
    }
}
