//! The attention core SDPA and MultiHeadAttention share on the CPU: one head's
//! `softmax(Q·Kᵀ · scale + mask) · V`, the scores in fp32 with the row's maximum taken out
//! before the exponent (as ncnn and PyTorch), both products on the project's GEMM.

use crate::layer::cpu_gemm::{MatMut, MatRef, gemm};

/// One head's operands: `q` is `src × d`, `kt` is Kᵀ (`d × dst`), `v` is `dst × dv`; `mask`
/// `src × dst` values added to the scaled scores.
pub(crate) struct Head<'a> {
    pub q: MatRef<'a>,
    pub kt: MatRef<'a>,
    pub v: MatRef<'a>,
    pub mask: Option<&'a [f32]>,
    pub scale: f32,
}

impl Head<'_> {
    /// Writes the head's `src × dv` output into `out` (rows `dv` apart); `scores` is the
    /// caller's `src × dst` workspace.
    pub fn attend(&self, scores: &mut Vec<f32>, out: MatMut<'_>) {
        let (src, dst) = (self.q.rows, self.kt.cols);
        scores.clear();
        scores.resize(src * dst, 0.0);
        gemm(self.q, self.kt, MatMut::rows(scores, src, dst, dst), false);
        for (i, row) in scores.chunks_exact_mut(dst.max(1)).enumerate() {
            match self.mask {
                Some(m) => row
                    .iter_mut()
                    .zip(&m[i * dst..][..dst])
                    .for_each(|(s, m)| *s = *s * self.scale + m),
                None => row.iter_mut().for_each(|s| *s *= self.scale),
            }
            softmax(row);
        }
        gemm(MatRef::rows(scores, src, dst, dst), self.v, out, false);
    }
}

/// In-place softmax of one row.
fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for s in row.iter_mut() {
        *s = (*s - max).exp();
        sum += *s;
    }
    let inv = 1.0 / sum;
    row.iter_mut().for_each(|s| *s *= inv);
}
