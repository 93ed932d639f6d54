//! MatMul: `0=transB`; two inputs A and B, numpy's `matmul` on ncnn's blobs (pnnx's
//! `torch.matmul`): the last two axes multiply (`M×K` by `K×N`, or by `N×K` with transB), the
//! axes before them (a 3-D blob's channels, a 4-D blob's channels and depth) broadcast where
//! one side has 1 or none. A 1-D A is one row and a 1-D B one column, and their axis leaves
//! the output (two 1-D blobs give their dot product as one value). On the CPU through the
//! project's GEMM, one per batch matrix, the batches spread over the net's threads; on the GPU
//! (the shared `layer::shared::gpu_gemm`: FMA tiles of 64 × 64 through shared memory, or
//! tensor cores; pack1 buffers), a 4-D blob's channels and depth as the GEMM's two batch axes.

use std::borrow::Cow;

use rayon::prelude::*;

use crate::error::{InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::cpu_gemm::{MatMut, MatRef, gemm};
use crate::layer::shared::gpu_gemm::{self, Form, Operand, Pipelines, Sizes};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::strided_copy::alloc_numpy;
use crate::layer::shared::view::{dense_values, numpy_shape};
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat};

/// Batched, broadcast matrix multiplication.
#[derive(Default)]
pub struct MatMul {
    trans_b: bool,
    gpu: Option<Pipelines>,
}

/// What a MatMul of two shapes computes: `batch` products of `m × k` by `k × n`, and the
/// output's numpy shape.
struct Plan {
    m: usize,
    k: usize,
    n: usize,
    batch: [usize; 2],
    shape: Vec<usize>,
}

/// A side's matrix rows and columns, batch (right-aligned as numpy aligns it: `[c, d]` for a
/// 4-D blob, `[1, c]` for a 3-D one, whose channels meet a 4-D blob's depth) and batch axes.
fn side(blob: BlobShape) -> (usize, usize, [usize; 2], usize) {
    let (dims, [w, h, d, c]) = (blob.dims, blob.shape);
    match dims {
        1 => (1, w, [1, 1], 0),
        2 => (h, w, [1, 1], 0),
        3 => (h, w, [1, c], 1),
        _ => (h, w, [c, d], 2),
    }
}

impl MatMul {
    /// The plan for sides of `(dims, [w, h, d, c])`, or why they do not multiply.
    fn plan(&self, a: BlobShape, b: BlobShape) -> Result<Plan, &'static str> {
        let ((m, k, ba, aa), (rb, cb, bb, ab)) = (side(a), side(b));
        let (a1, b1) = (a.dims == 1, b.dims == 1);
        // B's matrix as K×N (a 1-D B is one column)
        let (k_b, n) = match (b1, self.trans_b) {
            (true, _) => (cb, 1),
            (false, false) => (rb, cb),
            (false, true) => (cb, rb),
        };
        if k != k_b {
            return Err("are A and B: A's last axis is not B's contracted axis (transB applied)");
        }
        let mut batch = [1usize; 2];
        for (i, size) in batch.iter_mut().enumerate() {
            let (x, y) = (ba[i], bb[i]);
            if x != y && x != 1 && y != 1 {
                return Err("are A and B: their batch axes differ and neither is 1");
            }
            *size = x.max(y);
        }
        // numpy's shape: the batch axes of the side with more, then M and N where kept
        let axes = aa.max(ab);
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
        Ok(Plan {
            m,
            k,
            n,
            batch,
            shape,
        })
    }

    /// [`MatMul::plan`] for `bottoms` (CPU or GPU mats, their dims and shape by `shape`), or
    /// a typed error: not two blobs, or sides that do not multiply, naming both numpy shapes.
    fn checked_plan<M>(&self, bottoms: &[M], shape: impl Fn(&M) -> BlobShape) -> Result<Plan> {
        let [a, b] = bottoms else {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "two (A and B)",
            }
            .into());
        };
        let (a, b) = (shape(a), shape(b));
        self.plan(a, b).map_err(|why| {
            InputError::Mismatch {
                a: numpy_shape(a.dims, a.shape),
                b: numpy_shape(b.dims, b.shape),
                why,
            }
            .into()
        })
    }
}

/// A GPU mat as the GEMM's operand of rows `rs` apart whose first `axes` numpy axes (0 to 2)
/// are its batch axes: the inner one steps `batch`, the outer one `outer`, and an axis of
/// one value serves every batch (a step of 0).
fn batched(mat: &GpuMat, axes: usize, rs: usize) -> Operand<'_> {
    let strides = mat.numpy_strides();
    let np = numpy_shape(mat.dims, mat.shape());
    let step = |axis: Option<usize>| match axis {
        Some(i) if np[i] > 1 => strides[i],
        _ => 0,
    };
    Operand {
        mat,
        rs,
        batch: step(axes.checked_sub(1)),
        outer: step(axes.checked_sub(2)),
    }
}

/// One side's values (borrowed where the mat lies so), matrix shape and batch (see [`side`]).
struct Side<'a> {
    values: Cow<'a, [f32]>,
    rows: usize,
    cols: usize,
    batch: [usize; 2],
}

impl Side<'_> {
    fn of(m: &Mat) -> Side<'_> {
        let (rows, cols, batch, _) = side(m.blob_shape());
        Side {
            values: dense_values(m),
            rows,
            cols,
            batch,
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
        Support::MANY.gpu_pack1(self.gpu.is_some()).gpu_4d()
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(g) => Some(
                Form {
                    trans_b: self.trans_b,
                    ..Form::PLAIN
                }
                .pipeline(g, opt)?,
            ),
            None => None,
        };
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        matches!(bottoms, [a, b] if self.plan(*a, *b).is_ok())
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let pipeline = self.gpu.ready()?;
        let plan = self.checked_plan(bottoms, |m| m.blob_shape())?;
        let [a, b] = [&bottoms[0], &bottoms[1]];
        let top = alloc_numpy(rec, &plan.shape, a)?;
        let (m, n, k) = (plan.m, plan.n, plan.k);
        let [outer, inner] = plan.batch;
        let sizes = Sizes {
            inner,
            ..Sizes::batched(m, n, k, outer * inner)
        };
        let axes = |m: &GpuMat| side(m.blob_shape()).3;
        // the output's batch axes are the side's with more
        let out = batched(&top, axes(a).max(axes(b)), n);
        let b_rs = if self.trans_b { k } else { n };
        let (a, b) = (batched(a, axes(a), k), batched(b, axes(b), b_rs));
        gpu_gemm::record(rec, pipeline, sizes, a, b, None, out, None)?;
        Ok(vec![top])
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.trans_b = pd.int_in(0, 0, 0..=1, "0 or 1")? == 1;
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let plan = self.checked_plan(bottoms, |m| m.blob_shape())?;
        let [a, b] = [&bottoms[0], &bottoms[1]];
        let (sa, sb) = (Side::of(a), Side::of(b));
        let Plan { m, k, n, batch, .. } = plan;
        let per = m * n;
        let mut out = vec![0.0f32; batch[0] * batch[1] * per];
        let trans_b = self.trans_b && b.dims != 1;
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
        Ok(vec![Mat::from_numpy(&plan.shape, &out)?])
    }
}
