//! Gemm: `0=alpha 1=beta 2=transA 3=transB 4=constantA 5=constantB 6=constantC 7=constantM
//! 8=constantN 9=constantK 10=constant_broadcast_type_C 11=output_N1M 12=output_elempack
//! 13=output_elemtype 14=output_transpose 18=int8_scale_term 20-22=constant_TILE_M/N/K`;
//! weights the constant A (`M×K`, or `K×M` with transA), B (`K×N`, or `N×K` with transB) and C
//! in that order, each only where constant.
//!
//! `Y = alpha · (A·B + beta · C)` (ncnn scales the C term by alpha too), `M×N`, or `N×M` with
//! output_transpose, as `N×1×M` / `M×1×N` 3-D blobs with output_N1M. A 2-D blob is a matrix of
//! its rows, a 3-D blob of height 1 one of its channels (pnnx's `N×1×M` layout), a 1-D blob one
//! row. C broadcasts as ncnn's types: 0 a scalar, 1/2 one value per row of Y (`M` values or an
//! `M×1` blob), 3 the whole `M×N`, 4 one value per column (`N` or `1×N`); an input C's
//! type comes from its shape, checked in ncnn's order (a 1-D C of `M == N` values is per column).
//! The tiles (20-22) and output layout hints (12, 13) are ncnn's CPU tuning, read only. With
//! an int8 term (18) the product is ncnn's int8 one (`layer::shared::int8`): A's levels
//! per row, B's as a whole (quantized dynamically, or int8 in the model with A's per-row scales
//! and B's one scale after the weights), their exact product on the same GEMM, scaled by the
//! descales before C; on the GPU the dynamic quantization is one `reduce.comp` pass per input
//! operand and the GEMM applies the descales. On the CPU through the project's GEMM (`layer::shared::cpu_gemm`), on the net's threads;
//! on the GPU through the shared `layer::shared::gpu_gemm` (transposes, C and the scaling in
//! the shader's one pass; constant operands uploaded once), pack1 buffers.

use std::borrow::Cow;

use rayon::prelude::*;

use crate::OptionSet;
use crate::error::{Error, InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::matrix::gemm_rule::{Broadcast, matrix_of};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::cpu_gemm::{MatMut, MatRef, gemm};
use crate::layer::shared::gpu_gemm::{self, Descales, Form, Operand, Pipelines, Sizes};
use crate::layer::shared::grain::{GRAIN, min_items};
use crate::layer::shared::group_pipeline::GroupPipeline;
use crate::layer::shared::groups::{GroupOp, Groups};
use crate::layer::shared::int8;
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::view::{dense_values, numpy_shape};
use crate::layer::weights::Weights;
use crate::tensor::BlobShape;
use crate::tensor::pool::Scratch;
use crate::tensor::{GpuMat, Mat, Strided};

/// A constant operand of the model: its values row after row, as stored (int8: its levels).
#[derive(Clone)]
struct Held {
    values: Vec<f32>,
    rows: usize,
    cols: usize,
    /// int8: the descales (A: one per row of A; B: one).
    descale: Vec<f32>,
}

/// What one Gemm computes for its inputs' shapes: `M×K` by `K×N`, and C's broadcast.
struct Plan {
    m: usize,
    n: usize,
    k: usize,
    c: Option<Broadcast>,
}

/// General matrix multiplication (ONNX's Gemm, pnnx's `nn.Linear` on 2-D and 3-D inputs).
#[derive(Default)]
pub struct Gemm {
    alpha: f32,
    beta: f32,
    trans_a: bool,
    trans_b: bool,
    constant_a: bool,
    constant_b: bool,
    constant_c: bool,
    m: usize,
    n: usize,
    k: usize,
    /// The constant C's broadcast (`None`: no constant C, or type -1).
    constant_c_type: Option<Broadcast>,
    output_n1m: bool,
    output_transpose: bool,
    /// ncnn's int8 product (a nonzero `int8_scale_term`).
    int8: bool,
    a: Option<Held>,
    b: Option<Held>,
    c: Vec<f32>,
    gpu: Option<GpuGemm>,
}

/// The device side: the pipeline and the constant operands, uploaded once.
struct GpuGemm {
    pipeline: Pipelines,
    /// int8: the dynamic quantization of input operands.
    int8: Option<GroupPipeline>,
    a: Option<GpuMat>,
    b: Option<GpuMat>,
    c: Option<GpuMat>,
    /// int8: the constant A's and B's descales (fp32).
    descales: [Option<GpuMat>; 2],
}

impl Gemm {
    /// The plan for inputs of these shapes (A, B and C where the model does not hold them), or
    /// a typed error naming the shapes.
    fn plan(&self, bottoms: &[BlobShape]) -> Result<Plan> {
        let wanted = usize::from(!self.constant_a) + usize::from(!self.constant_b);
        let takes_c = !self.constant_c;
        if bottoms.len() < wanted || bottoms.len() > wanted + usize::from(takes_c) {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "A and B where not constant, then C where not constant (optional)",
            }
            .into());
        }
        let mut next = bottoms.iter();
        let mut side = |held: &Option<Held>, takes: &'static str| match held {
            Some(h) => Ok((h.rows, h.cols)),
            None => {
                let blob = *next.next().expect("counted");
                let got = blob.dims;
                matrix_of(blob).ok_or(InputError::Dims { got, takes })
            }
        };
        let (ra, ca) = side(&self.a, "A: 1-D, 2-D or N×1×M")?;
        let (rb, cb) = side(&self.b, "B: 1-D, 2-D or N×1×K")?;
        let (m, k) = if self.trans_a { (ca, ra) } else { (ra, ca) };
        let (kb, n) = if self.trans_b { (cb, rb) } else { (rb, cb) };
        if kb != k {
            return Err(InputError::Mismatch {
                a: vec![m, k],
                b: vec![kb, n],
                why: "are A and B as multiplied (transA/transB applied): the inner sizes differ",
            }
            .into());
        }
        let c = match next.next() {
            Some(&BlobShape { dims, shape }) => {
                let [w, h, ..] = shape;
                Some(Broadcast::infer(dims, [w, h], m, n).ok_or_else(|| {
                    Error::from(InputError::Mismatch {
                        a: vec![m, n],
                        b: numpy_shape(dims, shape),
                        why: "are the output and C: C is not 1, M, N, M×1, 1×N or M×N",
                    })
                })?)
            }
            None => {
                let needed = self.constant_c_type.map_or(0, |t| t.len(m, n));
                if self.c.len() != needed {
                    return Err(InputError::Values {
                        what: "values of the constant C",
                        got: self.c.len(),
                        expected: needed,
                    }
                    .into());
                }
                self.constant_c_type
            }
        };
        Ok(Plan { m, n, k, c })
    }

    /// The output's numpy shape: `M×N` (`N×M` transposed), as `rows×1×cols` with output_N1M.
    fn output_shape(&self, plan: &Plan) -> Vec<usize> {
        let (rows, cols) = if self.output_transpose {
            (plan.n, plan.m)
        } else {
            (plan.m, plan.n)
        };
        if self.output_n1m {
            vec![rows, 1, cols]
        } else {
            vec![rows, cols]
        }
    }

    /// `Y` from the inputs the model does not hold, in ncnn's order (A, B, C).
    fn run(&self, bottoms: &[&Mat]) -> Result<Mat> {
        let shapes: Vec<_> = bottoms.iter().map(|b| b.blob_shape()).collect();
        let plan = self.plan(&shapes)?;
        let Plan { m, n, k, .. } = plan;
        let mut inputs: Vec<Cow<'_, [f32]>> = bottoms.iter().map(|b| dense_values(b)).collect();
        // int8: the inputs' levels, and both operands' descales
        let descales = self.int8.then(|| {
            let (a, b) = self.input_slots();
            let da: Cow<'_, [f32]> = match (a, &self.a) {
                (Some(i), _) => {
                    let (rs, cs) = self.a_strides(m, k);
                    Cow::Owned(int8::per_row(inputs[i].to_mut(), m, k, rs, cs))
                }
                (None, held) => Cow::Borrowed(held.as_ref().map_or(&[][..], |h| &h.descale[..])),
            };
            let db = match (b, &self.b) {
                (Some(i), _) => int8::per_tensor(inputs[i].to_mut()),
                (None, held) => held.as_ref().map_or(1.0, |h| h.descale[0]),
            };
            (da, db)
        });
        let mut next = inputs.iter().map(|v| &v[..]);
        let a = take(&self.a, &mut next, |h| &h.values[..]);
        let b = take(&self.b, &mut next, |h| &h.values[..]);
        let c = next.next().unwrap_or(&self.c[..]);
        let av = if self.trans_a {
            MatRef::rows(a, k, m, m).t()
        } else {
            MatRef::rows(a, m, k, k)
        };
        let bv = if self.trans_b {
            MatRef::rows(b, n, k, k).t()
        } else {
            MatRef::rows(b, k, n, n)
        };
        // Y (i, j) at i·N + j, or at j·M + i when transposed
        let (rs, cs) = if self.output_transpose {
            (1, m)
        } else {
            (n, 1)
        };
        let c_at = |t: Broadcast, i: usize, j: usize| match t {
            Broadcast::Scalar => c[0],
            Broadcast::Rows => c[i],
            Broadcast::Columns => c[j],
            Broadcast::Full => c[i * n + j],
        };
        // each pass over Y in parallel, one stored row (Y's row, or column when transposed) per
        // task: serial, C's broadcast and the copies around a ViT-B MLP's product took longer
        // than the product at 16 threads
        let (lines, len) = if self.output_transpose {
            (n, m)
        } else {
            (m, n)
        };
        // every value written: C first (fp32), or the product alone
        let mut y = Scratch::any(m * n);
        let beta = self.beta;
        // fp32: C first, the product added; int8: the product, descaled, then C
        let c_first = plan.c.filter(|_| descales.is_none());
        if let Some(t) = c_first {
            for_each_entry(&mut y, [lines, len], self.output_transpose, &|i, j, v| {
                *v = beta * c_at(t, i, j)
            });
        }
        let out = MatMut {
            data: &mut y,
            rows: m,
            cols: n,
            rs,
            cs,
        };
        gemm(av, bv, out, c_first.is_some());
        if let Some((da, db)) = &descales {
            for_each_entry(&mut y, [lines, len], self.output_transpose, &|i, j, v| {
                *v *= da[i] * db;
                if let Some(t) = plan.c {
                    *v += beta * c_at(t, i, j);
                }
            });
        }
        if self.alpha != 1.0 {
            let alpha = self.alpha;
            y.par_chunks_mut(GRAIN)
                .for_each(|c| c.iter_mut().for_each(|v| *v *= alpha));
        }
        Mat::from_numpy(&self.output_shape(&plan), &y)
    }

    /// Which inputs are A and B (`None` where the model holds it).
    fn input_slots(&self) -> (Option<usize>, Option<usize>) {
        let a = (!self.constant_a).then_some(0);
        let b = (!self.constant_b).then_some(usize::from(!self.constant_a));
        (a, b)
    }

    /// Where value `(i, k)` of the `M×K` A lies in its stored rows: `(rs, cs)` per row and column
    /// of A as multiplied.
    fn a_strides(&self, m: usize, k: usize) -> (usize, usize) {
        if self.trans_a { (1, m) } else { (k, 1) }
    }

    /// int8 on the device: the input operands as their levels (A per row, B as a whole), the
    /// others as they are; and the descales of A's rows and of B (the constant ones' where
    /// held).
    fn quantize_gpu(
        &self,
        state: &GpuGemm,
        quantize: &GroupPipeline,
        bottoms: &[&GpuMat],
        (m, k): (usize, usize),
        rec: &mut Recorder<'_>,
    ) -> Result<(Vec<GpuMat>, [GpuMat; 2])> {
        let (a, b) = self.input_slots();
        let ctx = rec.context();
        let fresh = |n: usize| GpuMat::alloc(ctx, 2, [n, 1, 1], 1, OptionSet::FP32);
        let held = |d: &Option<GpuMat>| {
            d.clone().ok_or(Error::NotLoaded {
                what: "the constant operands' descales on the device",
            })
        };
        let da = if a.is_some() {
            fresh(m)?
        } else {
            held(&state.descales[0])?
        };
        let db = if b.is_some() {
            fresh(1)?
        } else {
            held(&state.descales[1])?
        };
        let mut out = Vec::with_capacity(bottoms.len());
        for (i, &mat) in bottoms.iter().enumerate() {
            let groups = if Some(i) == a {
                // A's rows, in the stored matrix's logical (numpy) indices
                let (rs, cs) = self.a_strides(m, k);
                Groups {
                    outer: Strided {
                        offset: 0,
                        shape: vec![m],
                        strides: vec![rs as isize],
                    },
                    inner: Strided {
                        offset: 0,
                        shape: vec![k],
                        strides: vec![cs as isize],
                    },
                }
            } else if Some(i) == b {
                let total = matrix_of(mat.blob_shape()).map_or(0, |(r, c)| r * c);
                Groups::runs(total, total)
            } else {
                out.push(mat.clone());
                continue;
            };
            let q = mat.alloc_like(rec.context())?;
            let descales = if Some(i) == a { &da } else { &db };
            quantize.record_int8(rec, (mat, &q, descales), &groups, 0)?;
            out.push(q);
        }
        Ok((out, [da, db]))
    }

    /// [`Gemm::run`] on the device.
    fn run_gpu<'a>(&'a self, bottoms: &[&'a GpuMat], rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let state = self.gpu.ready()?;
        let shapes: Vec<_> = bottoms.iter().map(|b| b.blob_shape()).collect();
        let plan = self.plan(&shapes)?;
        let Plan { m, n, k, .. } = plan;
        let not_loaded = || Error::NotLoaded {
            what: "the constant operands on the device",
        };
        let quantized = match &state.int8 {
            Some(q) => Some(self.quantize_gpu(state, q, bottoms, (m, k), rec)?),
            None => None,
        };
        let inputs: Vec<&GpuMat> = match &quantized {
            Some((levels, _)) => levels.iter().collect(),
            None => bottoms.to_vec(),
        };
        let descales = quantized.as_ref().map(|(_, [a, b])| Descales { a, b });
        let mut next = inputs.iter().map(|&m| Some(Operand::rows(m)));
        let held =
            |h: &Held, up: &'a Option<GpuMat>| up.as_ref().map(|u| Operand::dense(u, h.cols));
        let a = take(&self.a, &mut next, |h| held(h, &state.a));
        let b = take(&self.b, &mut next, |h| held(h, &state.b));
        let (a, b) = a.zip(b).ok_or_else(not_loaded)?;
        let c = match (next.next().flatten(), plan.c) {
            (Some(input), Some(t)) => Some((input, t)),
            (None, Some(t)) => Some((
                Operand::dense(state.c.as_ref().ok_or_else(not_loaded)?, n),
                t,
            )),
            _ => None,
        }
        .map(|(c, t)| gpu_gemm::Addend {
            mat: c.mat,
            broadcast: t.shader_type(),
            rs: c.rs,
        });
        let shape = self.output_shape(&plan);
        let (dims, view) = match shape[..] {
            [rows, 1, cols] => (3, [cols, 1, rows]),
            [rows, cols] => (2, [cols, 1, rows]),
            _ => unreachable!("output_shape is 2-D or 3-D"),
        };
        let top = GpuMat::alloc(rec.context(), dims, view, 1, state.pipeline.options())?;
        let sizes = Sizes::batched(m, n, k, 1);
        let out = Operand::rows(&top);
        gpu_gemm::record(rec, &state.pipeline, sizes, a, b, c, out, descales)?;
        Ok(top)
    }
}

/// The held operand through `held`, or else the next input.
fn take<'a, T>(
    held: &'a Option<Held>,
    inputs: &mut impl Iterator<Item = T>,
    held_as: impl FnOnce(&'a Held) -> T,
) -> T {
    match held {
        Some(h) => held_as(h),
        None => inputs.next().expect("counted by the plan"),
    }
}

impl Layer for Gemm {
    fn support(&self) -> Support {
        // ncnn's one_blob_only: two of A, B and C in the model
        let constants =
            u8::from(self.constant_a) + u8::from(self.constant_b) + u8::from(self.constant_c);
        let support = if constants == 2 {
            Support::ONE_BLOB
        } else {
            Support::MANY
        };
        support.gpu_pack1(self.gpu.is_some())
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(g) => {
                let form = Form {
                    trans_a: self.trans_a,
                    trans_b: self.trans_b,
                    out_trans: self.output_transpose,
                    alpha: self.alpha,
                    beta: self.beta,
                    int8: self.int8,
                    ..Form::PLAIN
                };
                Some(GpuGemm {
                    pipeline: form.pipeline(g, opt)?,
                    int8: self
                        .int8
                        .then(|| GroupPipeline::create(g, GroupOp::Int8))
                        .transpose()?,
                    a: None,
                    b: None,
                    c: None,
                    descales: [None, None],
                })
            }
            None => None,
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        let Some(state) = self.gpu.as_mut() else {
            return Ok(());
        };
        let up = |h: &Option<Held>| {
            h.as_ref()
                .map(|h| gpu.upload_values(&h.values, 1))
                .transpose()
        };
        state.a = up(&self.a)?;
        state.b = up(&self.b)?;
        state.c = if self.c.is_empty() {
            None
        } else {
            Some(gpu.upload_values(&self.c, 1)?)
        };
        if self.int8 {
            let fp32 = |h: &Option<Held>| -> Result<Option<GpuMat>> {
                let Some(d) = h.as_ref().map(|h| &h.descale) else {
                    return Ok(None);
                };
                let flat = Mat::from_shape_values(1, [d.len(), 1, 1, 1], d)?;
                Ok(Some(GpuMat::upload(gpu.ctx, &flat, OptionSet::FP32)?))
            };
            state.descales = [fp32(&self.a)?, fp32(&self.b)?];
        }
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        self.plan(bottoms).is_ok()
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        self.run_gpu(&[bottom], rec)
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let refs: Vec<&GpuMat> = bottoms.iter().collect();
        Ok(vec![self.run_gpu(&refs, rec)?])
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.alpha = pd.float(0, 1.0);
        self.beta = pd.float(1, 1.0);
        self.trans_a = pd.int_in(2, 0, 0..=1, "0 or 1")? == 1;
        self.trans_b = pd.int_in(3, 0, 0..=1, "0 or 1")? == 1;
        self.constant_a = pd.int_in(4, 0, 0..=1, "0 or 1")? == 1;
        self.constant_b = pd.int_in(5, 0, 0..=1, "0 or 1")? == 1;
        self.constant_c = pd.int_in(6, 0, 0..=1, "0 or 1")? == 1;
        self.constant_c_type = if self.constant_c {
            Broadcast::from_type(pd.int_in(10, 0, -1..=4, "-1 (no C) or 0-4")?)
        } else {
            None
        };
        let size = |id: u32, needed: bool| -> Result<usize> {
            let allowed = "a size, at least 1 where a constant operand has it";
            Ok(pd.int_in(id, 0, i32::from(needed)..=i32::MAX, allowed)? as usize)
        };
        let c_has = |types: &[Broadcast]| self.constant_c_type.is_some_and(|t| types.contains(&t));
        self.m = size(
            7,
            self.constant_a || c_has(&[Broadcast::Rows, Broadcast::Full]),
        )?;
        self.n = size(
            8,
            self.constant_b || c_has(&[Broadcast::Columns, Broadcast::Full]),
        )?;
        self.k = size(9, self.constant_a || self.constant_b)?;
        self.output_n1m = pd.int_in(11, 0, 0..=1, "0 or 1")? == 1;
        pd.int_in(13, 0, 0..=3, "0 (auto), 1 (fp32), 2 (fp16) or 3 (bf16)")?;
        self.output_transpose = pd.int_in(14, 0, 0..=1, "0 or 1")? == 1;
        self.int8 = int8::quantize_term(pd)?;
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        let (m, n, k) = (self.m, self.n, self.k);
        let mut stored_int8 = (false, false);
        if self.constant_a {
            let (rows, cols) = if self.trans_a { (k, m) } else { (m, k) };
            let (values, int8) = weights.load_stored(m * k, 0)?;
            stored_int8.0 = int8;
            self.a = Some(Held {
                values,
                rows,
                cols,
                descale: Vec::new(),
            });
        }
        if self.constant_b {
            let (rows, cols) = if self.trans_b { (n, k) } else { (k, n) };
            let (values, int8) = weights.load_stored(n * k, 0)?;
            stored_int8.1 = int8;
            self.b = Some(Held {
                values,
                rows,
                cols,
                descale: Vec::new(),
            });
        }
        if let Some(t) = self.constant_c_type {
            self.c = weights.load(t.len(m, n), 0)?;
        }
        if self.int8 {
            // the scales follow every weight; fp32 constants are quantized as inputs are
            let strides = self.a_strides(m, k);
            if let Some(a) = self.a.as_mut() {
                let scales = weights.load(m, 1)?;
                a.descale = if stored_int8.0 {
                    scales.iter().map(|s| 1.0 / s).collect()
                } else {
                    int8::per_row(&mut a.values, m, k, strides.0, strides.1)
                };
            }
            if let Some(b) = self.b.as_mut() {
                let scale = weights.load(1, 1)?[0];
                b.descale = vec![if stored_int8.1 {
                    1.0 / scale
                } else {
                    int8::per_tensor(&mut b.values)
                }];
            }
        }
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        self.run(&[bottom])
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let refs: Vec<&Mat> = bottoms.iter().collect();
        Ok(vec![self.run(&refs)?])
    }
}

/// `f(i, j, value)` over every entry of `Y` stored as `lines × len` (`Y`'s rows, or its columns
/// when `transposed`), one stored line per task.
fn for_each_entry<F: Fn(usize, usize, &mut f32) + Sync>(
    y: &mut [f32],
    [lines, len]: [usize; 2],
    transposed: bool,
    f: &F,
) {
    y.par_chunks_mut(len.max(1))
        .take(lines)
        .with_min_len(min_items(len))
        .enumerate()
        .for_each(|(line, vals)| {
            for (x, v) in vals.iter_mut().enumerate() {
                let (i, j) = if transposed { (x, line) } else { (line, x) };
                f(i, j, v);
            }
        });
}
