//! BinaryOp: `0=op_type 1=with_scalar 2=b`: broadcasting, scalar and reversed ops, on the CPU
//! here and on the GPU through `binary_gpu` (which says which broadcasts the shaders take).

use crate::error::{InputError, Result};
use crate::gpu::Recorder;
use crate::layer::activation::map_inplace;
use crate::layer::contract::Packs;
use crate::layer::contract::{GpuSetup, Implements, Layer, Support};
use crate::layer::elementwise::binary_gpu::{BinaryGpu, binary_support};
use crate::layer::elementwise::broadcast_rule::broadcast;
use crate::layer::epilogue::FusedActivation;
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::grain::GRAIN;
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::view::{channel_planes, dense_values};
use crate::tensor::BlobShape;
use crate::tensor::{ElemType, GpuMat, Mat, MatData};
use rayon::prelude::*;
use std::borrow::Cow;

/// ncnn's BinaryOp `op_type` on two values.
pub fn binary(op: i32, x: f32, y: f32) -> f32 {
    match op {
        0 => x + y,
        1 => x - y,
        2 => x * y,
        3 => x / y,
        4 => x.max(y),
        5 => x.min(y),
        6 => x.powf(y),
        7 => y - x,
        8 => y / x,
        9 => y.powf(x),
        10 => x.atan2(y),
        11 => y.atan2(x),
        12 => x % y,
        13 => y % x,
        14 => x.max(y) + (x.min(y) - x.max(y)).exp().ln_1p(),
        15 => (x / y).floor(),
        16 => (y / x).floor(),
        17 => libm::remainderf(x, y),
        18 => libm::remainderf(y, x),
        _ => f32::NAN,
    }
}

/// BinaryOp: `0=op_type 1=with_scalar 2=b`.
#[derive(Default)]
pub struct BinaryOp {
    op: i32,
    scalar: Option<f32>,
    gpu: Option<BinaryGpu>,
}

/// One operand of a broadcast output row: a run of the row's length, or one value stretched.
#[derive(Clone, Copy)]
enum Side<'a> {
    Row(&'a [f32]),
    Scalar(f32),
}

impl<'a> Side<'a> {
    /// The `w` values from `at` with step `step` (0: one value stretched, else 1).
    fn of(v: &'a [f32], at: usize, step: usize, w: usize) -> Self {
        if step == 0 {
            Side::Scalar(v[at])
        } else {
            Side::Row(&v[at..at + w])
        }
    }
}

/// `out[i] = f(a[i], b[i])` with either side a run or a scalar: each case its own loop, which
/// the compiler vectorizes.
#[inline(always)]
fn row_with(out: &mut [f32], a: Side<'_>, b: Side<'_>, f: impl Fn(f32, f32) -> f32) {
    match (a, b) {
        (Side::Row(a), Side::Row(b)) => {
            for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
                *o = f(*x, *y);
            }
        }
        (Side::Row(a), Side::Scalar(y)) => {
            for (o, x) in out.iter_mut().zip(a) {
                *o = f(*x, y);
            }
        }
        (Side::Scalar(x), Side::Row(b)) => {
            for (o, y) in out.iter_mut().zip(b) {
                *o = f(x, *y);
            }
        }
        (Side::Scalar(x), Side::Scalar(y)) => out.fill(f(x, y)),
    }
}

/// One output row of `a op b`, the common ops as their own loops.
fn binary_row(op: i32, out: &mut [f32], a: Side<'_>, b: Side<'_>) {
    match op {
        0 => row_with(out, a, b, |x, y| x + y),
        1 => row_with(out, a, b, |x, y| x - y),
        2 => row_with(out, a, b, |x, y| x * y),
        3 => row_with(out, a, b, |x, y| x / y),
        4 => row_with(out, a, b, f32::max),
        5 => row_with(out, a, b, f32::min),
        7 => row_with(out, a, b, |x, y| y - x),
        8 => row_with(out, a, b, |x, y| y / x),
        op => row_with(out, a, b, move |x, y| binary(op, x, y)),
    }
}

/// `out[i] = x[i] op y[i]` in parallel chunks, each through [`binary_row`].
fn zip_op(op: i32, out: &mut [f32], x: &[f32], y: &[f32]) {
    out.par_chunks_mut(GRAIN)
        .zip(x.par_chunks(GRAIN).zip(y.par_chunks(GRAIN)))
        .for_each(|(o, (x, y))| binary_row(op, o, Side::Row(x), Side::Row(y)));
}

/// An operand's values and its steps along `[c, d, h, w]` for its broadcast extents `s` (0
/// where it broadcasts): a mat of 3 or more dims read in place, its channels `cstep` apart
/// (read densely, a map whose planes are not a multiple of 4 values was first copied whole).
fn operand(m: &Mat, s: [usize; 4]) -> (Cow<'_, [f32]>, [usize; 4]) {
    let (values, channel_step) = if m.dims >= 3 {
        channel_planes(m)
    } else {
        (dense_values(m), s[1] * s[2] * s[3])
    };
    let st = [channel_step, s[2] * s[3], s[3], 1];
    (
        values,
        [0, 1, 2, 3].map(|i| if s[i] == 1 { 0 } else { st[i] }),
    )
}

impl BinaryOp {
    /// `a op b` where one is a packed fp32 3-D map and the other, by the broadcast rule, one
    /// value per channel (a 1-D blob of the map's channels, or a `1×1×c` one): the
    /// output keeps the map's packing (a squeeze-excitation's scale between two pack8
    /// convolutions), each group's lanes repeated along a run of positions so that the rows
    /// are whole vectors.
    fn per_channel_packed(&self, a: &Mat, b: &Mat) -> Result<Option<Mat>> {
        /// Positions per run.
        const RUN: usize = 128;
        let (map, other, map_first) = match (a.elempack, b.elempack) {
            (p, _) if p > 1 && a.dims == 3 => (a, b, true),
            (_, p) if p > 1 && b.dims == 3 => (b, a, false),
            _ => return Ok(None),
        };
        let [w, h, _, c] = map.shape();
        // the broadcast rule's own reading: the map whole, the other along the channels alone
        let (sa, sb, out, _) = broadcast(a, b)?;
        let (s_map, s_other) = if map_first { (sa, sb) } else { (sb, sa) };
        let per_channel = s_map == out && s_other == [c, 1, 1, 1];
        let Ok(src) = map.f32() else {
            return Ok(None);
        };
        if !per_channel || other.elemtype() != ElemType::F32 {
            return Ok(None);
        }
        let values = other.to_values();
        let p = map.elempack;
        let (gs, n) = (map.cstep * p, w * h * p);
        // every position of every group written below
        let mut top = Mat::for_writing(3, [w, h, 1, c / p], p, ElemType::F32)?;
        let ogs = top.cstep * p;
        let op = self.op;
        top.f32_mut()?
            .par_chunks_mut(ogs.max(1))
            .with_min_len(GRAIN.div_ceil(n.max(1)))
            .enumerate()
            .for_each(|(q, o)| {
                let lanes = &values[q * p..q * p + p];
                // as long as the first run (a 7² map's 49 positions, not 128)
                let mut repeated = [0.0f32; RUN * 16];
                let repeated = &mut repeated[..(RUN * p).min(n)];
                repeated
                    .chunks_exact_mut(p)
                    .for_each(|r| r.copy_from_slice(lanes));
                let runs = o[..n]
                    .chunks_mut(RUN * p)
                    .zip(src[q * gs..][..n].chunks(RUN * p));
                for (o, x) in runs {
                    let (x, y) = (Side::Row(x), Side::Row(&repeated[..o.len()]));
                    let (l, r) = if map_first { (x, y) } else { (y, x) };
                    binary_row(op, o, l, r);
                }
            });
        Ok(Some(top))
    }

    /// `a op b` straight over the stored values when both are fp32 with the same shape and
    /// layout (any packing): no broadcast, no unpacking.
    fn same_layout(&self, a: &Mat, b: &Mat) -> Option<Mat> {
        if !a.same_shape(b) || a.elempack != b.elempack || a.cstep != b.cstep {
            return None;
        }
        let (x, y) = (a.f32().ok()?, b.f32().ok()?);
        let mut out = a.with_data(MatData::for_writing(ElemType::F32, x.len()));
        let o = out.f32_mut().ok()?;
        zip_op(self.op, o, x, y);
        Some(out)
    }
}

impl Layer for BinaryOp {
    fn support(&self) -> Support {
        binary_support(self.scalar.is_some())
    }

    fn implements(&self) -> Implements {
        Implements {
            forward_many: true,
            forward_inplace: true,
            forward_gpu_many: true,
            forward_gpu_inplace: true,
            ..Implements::default()
        }
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(gpu) => Some(BinaryGpu::create(gpu, opt, self.op, self.scalar)?),
            None => None,
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        match self.gpu.as_mut() {
            Some(state) => state.upload(gpu),
            None => Ok(()),
        }
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        self.gpu.as_ref().is_some_and(|g| g.accepts(bottoms))
    }

    fn gpu_packs(&self, bottoms: &[BlobShape]) -> Option<Packs> {
        self.gpu.as_ref()?.packs(bottoms)
    }

    fn forward_gpu_inplace(&self, blob: &mut GpuMat, rec: &mut Recorder<'_>) -> Result<()> {
        self.gpu.ready()?.forward_scalar(blob, rec)
    }

    fn gpu_residual_sum(&self) -> bool {
        // ncnn's op_type 0, of two blobs
        self.op == 0 && self.scalar.is_none()
    }

    fn forward_gpu_activated(
        &self,
        bottoms: &[GpuMat],
        act: FusedActivation,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<GpuMat>> {
        // two blobs (the scalar form runs in place: the net fuses nothing into it)
        if bottoms.len() != 2 {
            return Ok(None);
        }
        let gpu = self.gpu.ready()?;
        gpu.forward_pair_activated(bottoms, act, rec).map(Some)
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        Ok(vec![self.gpu.ready()?.forward_pair(bottoms, rec)?])
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.op = pd.int_in(0, 0, 0..=18, "op_type 0 to 18")?;
        self.scalar = (pd.int(1, 0) != 0).then(|| pd.float(2, 0.0));
        Ok(())
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &RunOptions) -> Result<()> {
        let (op, b) = (self.op, self.scalar.unwrap_or(0.0));
        map_inplace(blob, move |x| binary(op, x, b));
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let [a, b] = bottoms else {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "2",
            }
            .into());
        };
        if let Some(out) = self.same_layout(a, b) {
            return Ok(vec![out]);
        }
        if let Some(out) = self.per_channel_packed(a, b)? {
            return Ok(vec![out]);
        }
        let (sa, sb, out, dims) = broadcast(a, b)?;
        let ((va, ta), (vb, tb)) = (operand(a, sa), operand(b, sb));
        let shape = match dims {
            1 => [out[3], 1, 1, 1],
            2 => [out[3], out[2], 1, 1],
            3 => [out[3], out[2], 1, out[0]],
            _ => [out[3], out[2], out[1], out[0]],
        };
        let mut top = Mat::for_writing(dims, shape, 1, ElemType::F32)?;
        let [w, plane] = [out[3].max(1), (out[1] * out[2] * out[3]).max(1)];
        let cstep = if dims >= 3 { top.cstep } else { plane }.max(1);
        let op = self.op;
        // rows `row0..` of channel `q`, each `run` values: `w`, or a whole plane where both
        // operands read it as one run or one value
        let fill = |q: usize, row0: usize, rows: &mut [f32], run: usize| {
            for (i, row) in rows.chunks_exact_mut(run).enumerate() {
                let (z, y) = if run == w {
                    ((row0 + i) / out[2], (row0 + i) % out[2])
                } else {
                    (0, 0)
                };
                let at = |t: [usize; 4]| q * t[0] + z * t[1] + y * t[2];
                let (a, b) = (
                    Side::of(&va, at(ta), ta[3], run),
                    Side::of(&vb, at(tb), tb[3], run),
                );
                binary_row(op, row, a, b);
            }
        };
        let data = top.f32_mut()?;
        if plane >= GRAIN {
            // rows of a channel in tasks of at least GRAIN values
            let rows_per_task = (GRAIN / w).max(1);
            data.par_chunks_mut(cstep)
                .take(out[0])
                .enumerate()
                .flat_map(|(q, channel)| {
                    channel[..plane]
                        .par_chunks_mut(rows_per_task * w)
                        .enumerate()
                        .map(move |(k, rows)| (q, k * rows_per_task, rows))
                })
                .for_each(|(q, row0, rows)| fill(q, row0, rows, w));
        } else {
            // whole channels per task, as many as make GRAIN values (a task per channel made
            // efficientnet's 7²·1152 squeeze-excitation scale 1152 tasks of 49 values)
            let per = GRAIN / plane;
            // a plane as one run where each operand's is one run or one value (short rows
            // went one call each: 7 values at a time for a 7×7 map)
            let whole = |t: [usize; 4]| {
                let dense = t[3] == 1
                    && (out[2] == 1 || t[2] == w)
                    && (out[1] == 1 || t[1] == plane / out[1]);
                dense || t[1..] == [0, 0, 0]
            };
            let run = if whole(ta) && whole(tb) { plane } else { w };
            data.par_chunks_mut(cstep * per)
                .take(out[0].div_ceil(per))
                .enumerate()
                .for_each(|(g, channels)| {
                    for (i, channel) in channels.chunks_mut(cstep).enumerate() {
                        let q = g * per + i;
                        if q < out[0] {
                            fill(q, 0, &mut channel[..plane], run);
                        }
                    }
                });
        }
        Ok(vec![top])
    }
}
