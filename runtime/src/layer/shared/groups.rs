//! Reductions over groups of a blob's values (the groups and their math on the CPU; `group_pipeline`
//! records `shaders/reduce.comp` over them): what Reduction, the normalizations, StatisticsPooling and CumulativeSum
//! are made of. Sums run in fp32 in order within a group, as ncnn's do.

use rayon::prelude::*;

use crate::error::{Result, TensorError};
use crate::gpu::specialize::SpecValue;
use crate::layer::shared::kernels;
use crate::tensor::{Strided, contiguous_strides};

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

    /// `Some(n)` where the groups are back-to-back runs of `n` values in logical order (group
    /// `g` the values `g·n..(g + 1)·n`): normalizations over the last axes, GroupNorm,
    /// InstanceNorm.
    pub fn contiguous_size(&self) -> Option<usize> {
        let n = self.size();
        let inner = (0..n).all(|j| self.inner.index(j) == j);
        let outer = (0..self.count()).all(|g| self.outer.index(g) == g * n);
        (n > 0 && inner && outer).then_some(n)
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
        10 => kernels::sum_of(x, kernels::exp),
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

/// [`normalize`] in place, for groups of `n` back-to-back values ([`Groups::contiguous_size`])
/// stored as runs of `len` values `step` apart (a mat's channel planes; `len` a multiple of
/// `n`): each group normalized where it lies, in parallel, with no index lists.
pub fn normalize_runs(
    data: &mut [f32],
    [len, step]: [usize; 2],
    n: usize,
    (norm, eps): (Norm, f32),
    affine: Option<Affine<'_>>,
) {
    if len == 0 || n == 0 {
        return;
    }
    let per_run = len / n;
    // the groups as slices (a few thousand at most per blob), split for the threads by size
    let groups: Vec<(usize, &mut [f32])> = data
        .chunks_mut(step)
        .enumerate()
        .flat_map(|(q, run)| {
            run[..len]
                .chunks_exact_mut(n)
                .enumerate()
                .map(move |(k, x)| (q * per_run + k, x))
        })
        .collect();
    groups
        .into_par_iter()
        .with_min_len(crate::layer::shared::grain::min_items(n))
        .for_each(|(g, x)| {
            let (a, b) = norm.scale(x, eps);
            match &affine {
                // gamma and beta per value (LayerNorm, RMSNorm): zipped, so it vectorizes;
                // the layer's plan checked that they reach every value of a group
                Some(af) if af.index == AffineIndex::PER_VALUE => {
                    let gamma = &af.gamma[..n];
                    match af.beta {
                        Some(beta) => x
                            .iter_mut()
                            .zip(gamma)
                            .zip(&beta[..n])
                            .for_each(|((v, gm), bt)| *v = (*v * a + b) * gm + bt),
                        None => x
                            .iter_mut()
                            .zip(gamma)
                            .for_each(|(v, gm)| *v = (*v * a + b) * gm),
                    }
                }
                Some(af) => affine_each(x, g, (a, b), af),
                None => x.iter_mut().for_each(|v| *v = *v * a + b),
            }
        });
}

/// Group `g`'s values `x` scaled by `(a, b)`, then through gamma and beta wherever its
/// index puts them.
fn affine_each(x: &mut [f32], g: usize, (a, b): (f32, f32), af: &Affine<'_>) {
    for (j, v) in x.iter_mut().enumerate() {
        let k = af.index.at(g, j);
        *v = (*v * a + b) * af.gamma[k] + af.beta.map_or(0.0, |b| b[k]);
    }
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
    /// `layer::shared::int8`).
    Int8,
}

/// The numbers a [`GroupPipeline`](super::group_pipeline::GroupPipeline) dispatch takes besides the groups.
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

/// `(constant_id, value)` for integer constants 0, 1, 2, ... in order.
pub(crate) fn int_constants(values: &[i32]) -> Vec<(u32, SpecValue)> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| (i as u32, SpecValue::I32(*v)))
        .collect()
}

impl AffineIndex {
    /// The shaders' `aff_div, aff_mod, aff_mul` words.
    pub(crate) fn words(&self, word: impl Fn(usize, &str) -> Result<u32>) -> Result<[u32; 3]> {
        let what = "the affine index";
        Ok([
            word(self.div, what)?,
            word(self.modulo.min(i32::MAX as usize), what)?,
            word(self.mul, what)?,
        ])
    }
}

/// A view's sizes and strides as three axes (outermost padded with ones).
pub(crate) fn three(
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
