//! MatMul: `0=transB`; two inputs A and B, numpy's `matmul` on ncnn's blobs (pnnx's
//! `torch.matmul`): the last two axes multiply (`M×K` by `K×N`, or by `N×K` with transB), the
//! axes before them (a 3-D blob's channels, a 4-D blob's channels and depth) broadcast where
//! one side has 1 or none. A 1-D A is one row and a 1-D B one column, and their axis leaves
//! the output (two 1-D blobs give their dot product as one value). On the CPU through the
//! project's GEMM, one per batch matrix, the batches spread over the net's threads.

use rayon::prelude::*;

use crate::error::{InputError, Result};
use crate::layer::contract::{Layer, Support};
use crate::layer::cpu_gemm::{MatMut, MatRef, gemm};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::tensor::Mat;

/// Batched, broadcast matrix multiplication.
#[derive(Default)]
pub struct MatMul {
    trans_b: bool,
}

/// One side: its values, matrix shape and batch shape right-aligned as numpy aligns it (`[c,
/// d]` for a 4-D blob, `[1, c]` for a 3-D one, whose channels meet a 4-D blob's depth).
struct Side {
    values: Vec<f32>,
    rows: usize,
    cols: usize,
    batch: [usize; 2],
    /// Batch axes it has (0 for 1-D and 2-D, 1 for 3-D, 2 for 4-D).
    batch_axes: usize,
}

impl Side {
    fn of(m: &Mat) -> Side {
        let [w, h, d, c] = m.shape();
        let (rows, batch, batch_axes) = match m.dims {
            1 => (1, [1, 1], 0),
            2 => (h, [1, 1], 0),
            3 => (h, [1, c], 1),
            _ => (h, [c, d], 2),
        };
        Side {
            values: m.to_values(),
            rows,
            cols: w,
            batch,
            batch_axes,
        }
    }

    /// Batch matrix `(p, q)` of the output's batch, broadcast where this side has 1.
    fn matrix(&self, p: usize, q: usize) -> &[f32] {
        let [outer, inner] = self.batch;
        let at = (p % outer) * inner + q % inner;
        &self.values[at * self.rows * self.cols..][..self.rows * self.cols]
    }
}

impl Layer for MatMul {
    fn support(&self) -> Support {
        Support::MANY
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.trans_b = pd.int_in(0, 0, 0..=1, "0 or 1")? == 1;
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let [a, b] = bottoms else {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "two (A and B)",
            }
            .into());
        };
        let (sa, sb) = (Side::of(a), Side::of(b));
        let (a1, b1) = (a.dims == 1, b.dims == 1);
        // B's matrix as K×N (a 1-D B is one column)
        let (k_b, n) = match (b1, self.trans_b) {
            (true, _) => (sb.cols, 1),
            (false, false) => (sb.rows, sb.cols),
            (false, true) => (sb.cols, sb.rows),
        };
        let (m, k) = (sa.rows, sa.cols);
        if k != k_b {
            return Err(InputError::Mismatch {
                a: a.numpy_shape(),
                b: b.numpy_shape(),
                why: "are A and B: A's last axis is not B's contracted axis (transB applied)",
            }
            .into());
        }
        let mut batch = [1usize; 2];
        for (i, size) in batch.iter_mut().enumerate() {
            let (x, y) = (sa.batch[i], sb.batch[i]);
            if x != y && x != 1 && y != 1 {
                return Err(InputError::Mismatch {
                    a: a.numpy_shape(),
                    b: b.numpy_shape(),
                    why: "are A and B: their batch axes differ and neither is 1",
                }
                .into());
            }
            *size = x.max(y);
        }
        let per = m * n;
        let mut out = vec![0.0f32; batch[0] * batch[1] * per];
        let trans_b = self.trans_b && !b1;
        out.par_chunks_mut(per.max(1))
            .enumerate()
            .for_each(|(i, y)| {
                let (p, q) = (i / batch[1], i % batch[1]);
                let av = MatRef::rows(sa.matrix(p, q), m, k, k);
                let bm = sb.matrix(p, q);
                let bv = if trans_b {
                    MatRef::rows(bm, n, k, k).t()
                } else {
                    MatRef::rows(bm, k, n, n)
                };
                gemm(av, bv, MatMut::rows(y, m, n, n), false);
            });
        // numpy's shape: the batch axes of the side with more, then M and N where kept
        let axes = sa.batch_axes.max(sb.batch_axes);
        let mut shape: Vec<usize> = batch[2 - axes..].to_vec();
        if !a1 {
            shape.push(m);
        }
        if !b1 {
            shape.push(n);
        }
        if shape.is_empty() {
            shape.push(1);
        }
        Ok(vec![Mat::from_numpy(&shape, &out)?])
    }
}
