//! Reductions over groups of a blob's values (`shaders/reduce.comp` on the GPU, the same math
//! here on the CPU): what Reduction, the normalizations, StatisticsPooling and CumulativeSum
//! are made of. Sums run in fp32 in order within a group, as ncnn's do.

use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use crate::OptionSet;
use crate::error::{Result, TensorError};
use crate::gpu::specialize::{SpecValue, Specialization};
use crate::gpu::{Context, Pipeline, Recorder};
use crate::layer::contract::GpuSetup;
use crate::layer::kernels;
use crate::layer::pipelines::{expect_pack1_buffer, index_word, workgroup_rows};
use crate::shaders::Shader;
use crate::tensor::{GpuMat, StorageFormat, Strided, contiguous_strides};

/// A blob's values in groups: group `g`'s value `j` lies at logical index (numpy order)
/// `outer(g) + inner(j)`, each a row-major walk of a view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Groups {
    /// One entry per group: where it starts.
    pub outer: Strided,
    /// One entry per value of a group: its place from the group's start.
    pub inner: Strided,
}

impl Groups {
    /// The groups of a blob of numpy shape `np` over the axes `reduced` marks: one group per
    /// index of the other axes, in their order.
    pub fn over(np: &[usize], reduced: &[bool]) -> Groups {
        let strides = contiguous_strides(np);
        let pick = |want: bool| {
            let axes: Vec<usize> = (0..np.len()).filter(|a| reduced[*a] == want).collect();
            Strided {
                offset: 0,
                shape: axes.iter().map(|a| np[*a]).collect(),
                strides: axes.iter().map(|a| strides[*a]).collect(),
            }
        };
        Groups {
            outer: pick(false),
            inner: pick(true),
        }
    }

    /// Contiguous groups of `n` values over `total` values.
    pub fn runs(total: usize, n: usize) -> Groups {
        Groups {
            outer: Strided {
                offset: 0,
                shape: vec![total / n.max(1)],
                strides: vec![n as isize],
            },
            inner: Strided::contiguous(&[n]),
        }
    }

    /// The number of groups.
    pub fn count(&self) -> usize {
        self.outer.len()
    }

    /// Values per group.
    pub fn size(&self) -> usize {
        self.inner.len()
    }

    /// Each group's logical indices, in parallel over groups.
    fn each<T: Send>(&self, f: impl Fn(usize, Vec<usize>) -> T + Sync) -> Vec<T> {
        let n = self.size();
        let inner: Vec<usize> = (0..n).map(|j| self.inner.index(j)).collect();
        (0..self.count())
            .into_par_iter()
            .map(|g| {
                let base = self.outer.index(g);
                f(g, inner.iter().map(|j| base + j).collect())
            })
            .collect()
    }
}

/// ncnn's Reduction operations by number, with 11 the standard deviation (StatisticsPooling).
pub const REDUCE_OPS: i32 = 12;

/// The value of reduction `op` over `x`, times `coeff` (mean: `coeff / n`).
pub fn reduce_values(x: &[f32], op: i32, coeff: f32) -> f32 {
    let n = x.len() as f32;
    let v = match op {
        1 | 7 => x.iter().fold(0.0, |a, v| a + v.abs()),
        2 | 8 => x.iter().fold(0.0, |a, v| a + v * v),
        4 => x.iter().fold(f32::MIN, |a, v| a.max(*v)),
        5 => x.iter().fold(f32::MAX, |a, v| a.min(*v)),
        6 => x.iter().product(),
        10 => x.iter().fold(0.0, |a, v| a + kernels::exp(*v)),
        11 => {
            let mean = x.iter().sum::<f32>() / n;
            (x.iter().fold(0.0, |a, v| a + (v - mean) * (v - mean)) / n).sqrt()
        }
        _ => x.iter().sum(),
    };
    let v = match op {
        9 | 10 => v.ln(),
        8 => (if v < f32::MIN_POSITIVE { 0.0 } else { v }).sqrt(),
        3 => v / n,
        _ => v,
    };
    v * coeff
}

/// How a normalization scales each group (the shader's `norm`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Norm {
    /// `(x - mean) / sqrt(var + eps)`: LayerNorm, GroupNorm, InstanceNorm.
    MeanVar = 0,
    /// `x / sqrt(mean(x²) + eps)`: RMSNorm.
    Rms = 1,
    /// `x - mean`: MVN without variance.
    Center = 2,
    /// `(x - mean) / (sqrt(var) + eps)`: MVN.
    MeanStd = 3,
    /// `x / sqrt(Σx² + eps)`: Normalize, eps mode 0 (Caffe).
    L2 = 4,
    /// `x / max(sqrt(Σx²), eps)`: eps mode 1 (PyTorch).
    L2Max = 5,
    /// `x / sqrt(max(Σx², eps))`: eps mode 2 (TensorFlow).
    L2MaxSquared = 6,
}

impl Norm {
    /// `(a, b)` such that each value becomes `x * a + b`.
    pub fn scale(self, x: &[f32], eps: f32) -> (f32, f32) {
        let n = x.len() as f32;
        let ssum = || x.iter().fold(0.0f32, |a, v| a + v * v);
        match self {
            Norm::Rms => (1.0 / (ssum() / n + eps).sqrt(), 0.0),
            Norm::L2 => (1.0 / (ssum() + eps).sqrt(), 0.0),
            Norm::L2Max => (1.0 / ssum().sqrt().max(eps), 0.0),
            Norm::L2MaxSquared => (1.0 / ssum().max(eps).sqrt(), 0.0),
            _ => {
                let mean = x.iter().sum::<f32>() / n;
                let var = x.iter().fold(0.0f32, |a, v| a + (v - mean) * (v - mean)) / n;
                let a = match self {
                    Norm::MeanVar => 1.0 / (var + eps).sqrt(),
                    Norm::MeanStd => 1.0 / (var.sqrt() + eps),
                    _ => 1.0,
                };
                (a, -mean * a)
            }
        }
    }
}

/// Where a normalization's gamma and beta for value `j` of group `g` are:
/// `(j / div) % modulo + g * mul`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AffineIndex {
    /// Values per affine entry within a group.
    pub div: usize,
    /// Entries per group.
    pub modulo: usize,
    /// Entries a group moves on.
    pub mul: usize,
}

impl AffineIndex {
    /// Entry `j` of every group (LayerNorm, RMSNorm, Normalize across channels).
    pub const PER_VALUE: AffineIndex = AffineIndex {
        div: 1,
        modulo: usize::MAX,
        mul: 0,
    };
    /// Entry `g` for group `g` (InstanceNorm, Normalize per channel).
    pub const PER_GROUP: AffineIndex = AffineIndex {
        div: 1,
        modulo: 1,
        mul: 1,
    };
    /// Entry 0 everywhere (a shared scale).
    pub const SHARED: AffineIndex = AffineIndex {
        div: 1,
        modulo: 1,
        mul: 0,
    };

    fn at(&self, g: usize, j: usize) -> usize {
        (j / self.div) % self.modulo + g * self.mul
    }
}

/// A normalization's gamma (and beta) and where each value finds them.
#[derive(Clone, Copy, Debug)]
pub struct Affine<'a> {
    /// Scales.
    pub gamma: &'a [f32],
    /// Offsets, or none.
    pub beta: Option<&'a [f32]>,
    /// Which entry a value takes.
    pub index: AffineIndex,
}

/// The values of `values` (logical order) normalized within each group; values outside
/// every group keep theirs.
pub fn normalize(
    values: &[f32],
    groups: &Groups,
    norm: Norm,
    eps: f32,
    affine: Option<Affine<'_>>,
) -> Vec<f32> {
    let results = groups.each(|g, idx| {
        let x: Vec<f32> = idx.iter().map(|i| values[*i]).collect();
        let (a, b) = norm.scale(&x, eps);
        let out: Vec<f32> = x
            .iter()
            .enumerate()
            .map(|(j, v)| {
                let y = v * a + b;
                match &affine {
                    Some(af) => {
                        let k = af.index.at(g, j);
                        y * af.gamma[k] + af.beta.map_or(0.0, |b| b[k])
                    }
                    None => y,
                }
            })
            .collect();
        (idx, out)
    });
    write_back(values, results)
}

/// `values` with each group's new values written at its indices.
fn write_back(values: &[f32], groups: Vec<(Vec<usize>, Vec<f32>)>) -> Vec<f32> {
    let mut out = values.to_vec();
    for (idx, v) in groups {
        for (i, y) in idx.into_iter().zip(v) {
            out[i] = y;
        }
    }
    out
}

/// One value per group: reduction `op` times `coeff`.
pub fn reduce(values: &[f32], groups: &Groups, op: i32, coeff: f32) -> Vec<f32> {
    groups.each(|_, idx| {
        let x: Vec<f32> = idx.iter().map(|i| values[*i]).collect();
        reduce_values(&x, op, coeff)
    })
}

/// The running sum along each group, at each value's place.
pub fn scan(values: &[f32], groups: &Groups) -> Vec<f32> {
    let results = groups.each(|_, idx| {
        let mut s = 0.0f32;
        let v: Vec<f32> = idx
            .iter()
            .map(|i| {
                s += values[*i];
                s
            })
            .collect();
        (idx, v)
    });
    write_back(values, results)
}

/// What a group pipeline computes (the shader's `mode` and its constants).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GroupOp {
    /// One value per group: reduction `op` (see [`REDUCE_OPS`]).
    Reduce(i32),
    /// Every value normalized, with gamma (and beta) when `affine` is 1 (2).
    Normalize {
        /// The scaling.
        norm: Norm,
        /// 0 none, 1 gamma, 2 gamma and beta.
        affine: i32,
    },
    /// Running sums.
    Scan,
    /// Every value at its int8 level under the group's dynamic scale, as level / scale (see
    /// [`crate::layer::int8`]).
    Int8,
}

/// The numbers a [`GroupPipeline`] dispatch takes besides the groups.
#[derive(Clone, Copy, Debug)]
pub struct GroupExtras {
    /// [`GroupOp::Reduce`]: the output's logical index of group 0.
    pub dst_offset: usize,
    /// [`GroupOp::Reduce`]: the factor on each result.
    pub coeff: f32,
    /// [`GroupOp::Normalize`]: epsilon.
    pub eps: f32,
    /// [`GroupOp::Normalize`]: where gamma and beta are.
    pub index: AffineIndex,
    /// [`GroupOp::Normalize`]: beta's offset in the affine mat.
    pub beta_at: usize,
}

impl Default for GroupExtras {
    fn default() -> Self {
        GroupExtras {
            dst_offset: 0,
            coeff: 1.0,
            eps: 0.0,
            index: AffineIndex::SHARED,
            beta_at: 0,
        }
    }
}

/// The reduce pipeline of one [`GroupOp`] (buffer nets, pack1).
pub struct GroupPipeline {
    pipeline: Arc<Pipeline>,
    /// [`GroupOp::Normalize`]: `normalize_vec4.comp` for contiguous vec4 groups.
    vec4: Option<Vec4Norm>,
}

/// `normalize_vec4.comp` (or its subgroup twin) for one normalization: its constants besides the mode and
/// workgroup size, and the pipelines made so far.
struct Vec4Norm {
    options: OptionSet,
    norm: Norm,
    affine: i32,
    /// Mode 0 at 32, 64, 128 and 256 lanes, then modes 1 to 3 (256 lanes), narrow then wide:
    /// made on first use, as the lanes depend on the blob, and kept so that a run does no
    /// cache lookups.
    made: [[OnceLock<Arc<Pipeline>>; 7]; 2],
}

/// Values of a group one lane of `normalize_vec4.comp` holds in registers.
const LANE_VALUES: usize = 4 * 8;

/// `normalize_vec4.comp`'s most lanes per workgroup.
const MAX_LANES: usize = 256;

/// `(constant_id, value)` for integer constants 0, 1, 2, ... in order.
fn int_constants(values: &[i32]) -> Vec<(u32, SpecValue)> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| (i as u32, SpecValue::I32(*v)))
        .collect()
}

impl AffineIndex {
    /// The shaders' `aff_div, aff_mod, aff_mul` words.
    fn words(&self, word: impl Fn(usize, &str) -> Result<u32>) -> Result<[u32; 3]> {
        let what = "the affine index";
        Ok([
            word(self.div, what)?,
            word(self.modulo.min(i32::MAX as usize), what)?,
            word(self.mul, what)?,
        ])
    }
}

impl Vec4Norm {
    /// The pipeline of `mode` with `lanes` (a power of two from 32; 256 but for mode 0)
    /// invocations per workgroup.
    /// `wide`: 8 fp16 values per access (the shader's constant 4).
    fn pipeline(
        &self,
        ctx: &Context,
        mode: i32,
        lanes: usize,
        wide: bool,
    ) -> Result<Arc<Pipeline>> {
        let slot = match mode {
            0 => lanes.ilog2() as usize - 5,
            _ => 3 + mode as usize,
        };
        let made = &self.made[usize::from(wide)][slot];
        if let Some(p) = made.get() {
            return Ok(p.clone());
        }
        let mut values = int_constants(&[mode, self.norm as i32, self.affine]);
        values.push((4, SpecValue::I32(i32::from(wide))));
        let spec = Specialization {
            values,
            local_size: Some([lanes as u32, 1, 1]),
        };
        // its sums on subgroup arithmetic where the device has it and the path takes it
        let subgroups = Shader::NormalizeVec4Subgroup.module();
        let p = match ctx.candidates(subgroups, self.options).is_empty() {
            false => ctx.pipeline(subgroups, self.options, &spec).ok(),
            true => None,
        };
        let p = match p {
            Some(p) => p,
            None => ctx.pipeline(Shader::NormalizeVec4.module(), self.options, &spec)?,
        };
        Ok(made.get_or_init(|| p).clone())
    }

    /// Records a normalization of contiguous vec4 groups: one dispatch when a group fits a
    /// tile, else partials, their combination and the apply.
    fn record(
        &self,
        rec: &mut Recorder<'_>,
        (src, dst, affine): (&GpuMat, &GpuMat, &GpuMat),
        groups: &Groups,
        extras: GroupExtras,
    ) -> Result<()> {
        let (count, n) = (groups.count(), groups.size());
        // a group in one workgroup's registers when it fits, with as few lanes as hold it
        // (a row of 2048 values takes 64: a tree of 256 lanes over it cost 2x), else split
        // over tiles of 256 lanes
        let lanes = n
            .div_ceil(LANE_VALUES)
            .next_power_of_two()
            .clamp(32, MAX_LANES);
        let segs = n.div_ceil(MAX_LANES * LANE_VALUES);
        let ctx = rec.context();
        // 16-byte accesses of fp16 values where every group starts on a multiple of 8
        let wide = src.format == StorageFormat::Fp16
            && dst.format == StorageFormat::Fp16
            && n.is_multiple_of(8)
            && groups.outer.strides.iter().all(|v| v % 8 == 0);
        let first = self.pipeline(ctx, if segs == 1 { 0 } else { 1 }, lanes, wide)?;
        let word = |v: usize, what: &str| index_word(&first, v as isize, what);
        let (outer_size, outer_stride) = three(word, &groups.outer, "the groups")?;
        let mut words = Vec::with_capacity(15);
        words.extend(outer_size);
        words.extend(outer_stride);
        for (v, what) in [(count, "the groups"), (n, "a group"), (segs, "the tiles")] {
            words.push(word(v, what)?);
        }
        let i = extras.index;
        words.extend(i.words(word)?);
        // how the four values of a vec4 find their entries (the shader's aff_kind)
        let kind = if i.div.is_multiple_of(4) || i.modulo == 1 {
            1
        } else if i.div == 1
            && i.modulo >= n
            && i.mul.is_multiple_of(4)
            && extras.beta_at.is_multiple_of(4)
        {
            2
        } else {
            0
        };
        words.push(kind);
        words.push(word(extras.beta_at, "the affine index")?);
        words.push(extras.eps.to_bits());
        // mean and squared deviations per tile, then (a, b) per group: fp32 pairs
        let pairs = if segs > 1 { count * segs + count } else { 1 };
        let partials = GpuMat::alloc(ctx, 2, [pairs * 2, 1, 1], 1, OptionSet::FP32);
        let bindings = [src, dst, affine, &partials];
        if segs == 1 {
            return rec.dispatch(&first, &bindings, &words, workgroup_rows(count, lanes));
        }
        let (combine, apply) = (
            self.pipeline(ctx, 2, MAX_LANES, wide)?,
            self.pipeline(ctx, 3, MAX_LANES, wide)?,
        );
        let tiles = workgroup_rows(count * segs, MAX_LANES);
        rec.dispatch(&first, &bindings, &words, tiles)?;
        rec.dispatch(
            &combine,
            &bindings,
            &words,
            workgroup_rows(count, MAX_LANES),
        )?;
        rec.dispatch(&apply, &bindings, &words, tiles)
    }
}

/// Whether `normalize_vec4.comp` can take these groups: each group contiguous in memory (a
/// blob whose channels lie back to back, so logical is physical) and in whole vec4s.
fn vec4_groups(groups: &Groups, src: &GpuMat, dst: &GpuMat) -> bool {
    // 1-D and 2-D mats are one row of channels or of rows, whatever their cstep
    let back_to_back = |m: &GpuMat| m.dims <= 2 || m.cstep == m.w * m.h;
    let (inner, _) = groups.inner.simplified_with(&groups.inner);
    back_to_back(src)
        && back_to_back(dst)
        && groups.inner.offset == 0
        && groups.outer.offset == 0
        && inner.shape.len() == 1
        && inner.strides[0] == 1
        && inner.shape[0].is_multiple_of(4)
        && groups.outer.strides.iter().all(|v| *v >= 0 && *v % 4 == 0)
}

/// A view's sizes and strides as three axes (outermost padded with ones).
fn three(
    word: impl Fn(usize, &str) -> Result<u32>,
    view: &Strided,
    what: &str,
) -> Result<([u32; 3], [u32; 3])> {
    let (v, _) = view.simplified_with(view);
    let n = v.shape.len();
    if n > 3 {
        return Err(TensorError::View {
            shape: v.shape.clone(),
            extent: 3,
            len: n,
        }
        .into());
    }
    let mut sizes = [1u32; 3];
    let mut strides = [0u32; 3];
    for k in 0..n {
        sizes[3 - n + k] = word(v.shape[k], what)?;
        strides[3 - n + k] = word(v.strides[k].max(0) as usize, what)?;
    }
    Ok((sizes, strides))
}

impl GroupPipeline {
    /// The pipeline for `op` with `gpu`'s options.
    pub fn create(gpu: GpuSetup<'_>, op: GroupOp) -> Result<Self> {
        let (mode, reduce, norm, affine) = match op {
            GroupOp::Reduce(o) => (0, o, 0, 0),
            GroupOp::Normalize { norm, affine } => (1, 0, norm as i32, affine),
            GroupOp::Scan => (2, 0, 0, 0),
            GroupOp::Int8 => (3, 0, 0, 0),
        };
        let values = int_constants(&[mode, reduce, norm, affine]);
        let module = Shader::Reduce.module();
        let vec4 = match op {
            GroupOp::Normalize { norm, affine } => Some(Vec4Norm {
                options: gpu.options,
                norm,
                affine,
                made: Default::default(),
            }),
            _ => None,
        };
        Ok(GroupPipeline {
            pipeline: gpu.pipeline(module, &values)?,
            vec4,
        })
    }

    /// Records the groups of pack1 `src` into `dst` (one value per group from
    /// `extras.dst_offset` for a reduction; each value's own place otherwise), with `affine`
    /// bound as the gamma/beta mat (any mat when there are none), a whole number of vec4s.
    pub fn record(
        &self,
        rec: &mut Recorder<'_>,
        (src, dst, affine): (&GpuMat, &GpuMat, &GpuMat),
        groups: &Groups,
        extras: GroupExtras,
    ) -> Result<()> {
        self.record_with_side(rec, (src, dst, affine, dst), groups, extras)
    }

    /// [`GroupOp::Int8`]'s record: the levels of `src` into `dst`, each group's descale into
    /// the fp32 mat `descales` from index `dst_offset`.
    pub fn record_int8(
        &self,
        rec: &mut Recorder<'_>,
        (src, dst, descales): (&GpuMat, &GpuMat, &GpuMat),
        groups: &Groups,
        dst_offset: usize,
    ) -> Result<()> {
        let extras = GroupExtras {
            dst_offset,
            ..GroupExtras::default()
        };
        self.record_with_side(rec, (src, dst, src, descales), groups, extras)
    }

    /// [`GroupPipeline::record`] with the fp32 side buffer (binding 3) given.
    fn record_with_side(
        &self,
        rec: &mut Recorder<'_>,
        (src, dst, affine, side): (&GpuMat, &GpuMat, &GpuMat, &GpuMat),
        groups: &Groups,
        extras: GroupExtras,
    ) -> Result<()> {
        for m in [src, dst, affine] {
            expect_pack1_buffer(&self.pipeline, m)?;
        }
        let word = |v: usize, what: &str| index_word(&self.pipeline, v as isize, what);
        let (outer_size, outer_stride) = three(word, &groups.outer, "the groups")?;
        let (inner_size, inner_stride) = three(word, &groups.inner, "a group")?;
        let count = groups.count();
        if count == 0 || groups.size() == 0 {
            return Ok(());
        }
        if let Some(vec4) = &self.vec4
            && vec4_groups(groups, src, dst)
        {
            return vec4.record(rec, (src, dst, affine), groups, extras);
        }
        let mut words = Vec::with_capacity(29);
        for part in [outer_size, outer_stride, inner_size, inner_stride] {
            words.extend(part);
        }
        words.push(word(count, "the groups")?);
        words.push(word(groups.size(), "a group")?);
        for m in [src, dst] {
            words.push(word(m.w * m.h, "a plane")?);
            words.push(word(m.cstep, "a channel step")?);
        }
        let i = extras.index;
        words.push(word(extras.dst_offset, "an offset")?);
        words.extend(i.words(word)?);
        words.push(word(extras.beta_at, "the affine index")?);
        words.push(extras.eps.to_bits());
        words.push(extras.coeff.to_bits());
        // one workgroup of 256 per group
        let grid = workgroup_rows(count, 256);
        rec.dispatch(&self.pipeline, &[src, dst, affine, side], &words, grid)
    }
}
