//! The attention core SDPA and MultiHeadAttention share: on the CPU one head's
//! `softmax(Q·Kᵀ · scale + mask) · V`, the scores in fp32 with the row's maximum taken out
//! before the exponent (as ncnn and PyTorch), both products on the project's GEMM; on the GPU
//! every head in one dispatch of the fused `sdpa.comp`, or on tensor cores where the blobs are
//! fp16 and the heads fit the tiles: `sdpa_cm2.comp` (flash attention, the scores and running
//! output kept in the accumulators) where the device was opened with VK_NV_cooperative_matrix2's
//! reductions and conversions, else `sdpa_cm.comp`; heads of few query rows over many keys split
//! their keys over more of `sdpa_cm2`'s workgroups, whose parts `sdpa_combine.comp` weighs
//! together. int8 heads (ncnn's `forward_int8`)
//! quantize Q and the probabilities per row, K and V per head ([`crate::layer::shared::int8`]), on the
//! CPU only, as ncnn's Vulkan layers leave them to the CPU. Also MultiHeadAttention's CPU
//! projections (`x · Wᵀ + b` from the bias up).

use std::sync::Arc;

use rayon::prelude::*;

use crate::error::Result;
use crate::gpu::specialize::{SpecValue, Specialization};
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::GpuSetup;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::cpu_gemm::{MatMut, MatRef, gemm};
use crate::layer::shared::gpu_gemm::tensor_cores;
use crate::layer::shared::grain::min_items;
use crate::layer::shared::int8;
use crate::layer::shared::strided_copy::{CopyExtras, StridedCopy};
use crate::layer::weights::Weights;
use crate::shaders::Shader;
use crate::tensor::{GpuMat, Strided};

/// The widest value rows the fused shader takes (64 invocations × 4 columns each).
pub(crate) const GPU_MAX_DV: usize = 256;
/// Query rows per workgroup (the shader's `ROWS`).
const GPU_ROWS: usize = 16;

/// The widest head `sdpa_cm` and `sdpa_cm2` take (their `D16`/`DV16` up to 8).
const CM_MAX_WIDTH: usize = 128;
/// Query rows per workgroup of `sdpa_cm` and `sdpa_cm2`.
const CM_ROWS: usize = 64;

/// The fused attention's pipelines, with or without a mask, in the layer's variant: `sdpa`
/// (FMA, any device and path), and the tensor-core shader that may take the heads that fit it
/// (fp16 blobs, a context with cooperative matrices, a run that allows them: the GEMM's rule):
/// `sdpa_cm2` where the context has the matrix2 extension's reductions and conversions, else
/// `sdpa_cm`.
pub(crate) struct AttentionPipelines {
    fma: Arc<Pipeline>,
    tensor_cores: Option<Shader>,
    attn_mask: bool,
}

/// The layer's attention pipelines.
pub(crate) fn gpu_pipeline(
    gpu: GpuSetup<'_>,
    opt: &RunOptions,
    attn_mask: bool,
) -> Result<AttentionPipelines> {
    let mask = SpecValue::I32(i32::from(attn_mask));
    let fma = gpu.pipeline(Shader::Sdpa.module(), &[(0, mask)])?;
    // the blobs are fp16 where the variant the layer got stores fp16 (`sdpa_cm` reads raw
    // fp16 bits)
    let fp16 = fma.options.contains(crate::Opt::Fp16Storage);
    // the flash form where the device has the extension's reductions and conversions
    let shader = match gpu.ctx.workgroup_attention() {
        true => Shader::SdpaCm2,
        false => Shader::SdpaCm,
    };
    Ok(AttentionPipelines {
        tensor_cores: tensor_cores(gpu, opt, fp16).then_some(shader),
        fma,
        attn_mask,
    })
}

/// A key/value cache blob given out for the next step, `groups × rows × width` (3-D, pack1):
/// each group's `past` rows of the cache, then its current rows, which `current` views as
/// `groups × (rows - past) × width` (SDPA's inputs as they lie; MultiHeadAttention's projected
/// rows, heads side by side).
pub(crate) fn record_cache(
    copy: &StridedCopy,
    rec: &mut Recorder<'_>,
    (cache, past): (&GpuMat, usize),
    (current, view): (&GpuMat, &Strided),
) -> Result<GpuMat> {
    let [groups, cur, width] = [view.shape[0], view.shape[1], view.shape[2]];
    let rows = past + cur;
    let out = GpuMat::alloc(rec.context(), 3, [width, rows, groups], 1, current.options)?;
    let whole = Strided::contiguous(&[groups, rows, width]);
    let cached = Strided::contiguous(&[groups, past, width]);
    let none = CopyExtras::default();
    copy.record(
        rec,
        (cache, &cached),
        (&out, &whole.clone().narrow(1, 0, past)),
        none,
    )?;
    copy.record(
        rec,
        (current, view),
        (&out, &whole.narrow(1, past, cur)),
        none,
    )?;
    Ok(out)
}

/// Heads in a GPU mat: row `i` of head `h` at `offset + h · head + i · rs`.
#[derive(Clone, Copy)]
pub(crate) struct Heads<'a> {
    pub mat: &'a GpuMat,
    pub head: usize,
    pub rs: usize,
    pub offset: usize,
}

impl<'a> Heads<'a> {
    /// Heads in channels of their own, rows `rs` apart.
    pub fn channels(mat: &'a GpuMat, rs: usize) -> Self {
        Heads {
            mat,
            head: mat.cstep,
            rs,
            offset: 0,
        }
    }
}

/// Heads a layer computed on the device, with their mat: side by side in its rows (`offset`
/// values into each row, rows `rs` apart; MultiHeadAttention's projections, q k v stacked in
/// each row of self-attention's) or in channels of their own (`channels`: a kv cache blob).
pub(crate) struct HeadRows {
    pub mat: GpuMat,
    pub offset: usize,
    pub rs: usize,
    pub channels: bool,
}

impl HeadRows {
    /// Heads side by side in rows `rs` apart, from the first value of each.
    pub fn rows(mat: GpuMat, rs: usize) -> Self {
        HeadRows {
            mat,
            offset: 0,
            rs,
            channels: false,
        }
    }

    /// A blob of heads in channels of their own.
    pub fn in_channels(mat: GpuMat) -> Self {
        HeadRows {
            mat,
            offset: 0,
            rs: 0,
            channels: true,
        }
    }

    /// The heads of the same rows `by` values further on (the next part of stacked rows).
    pub fn part(&self, by: usize) -> Self {
        HeadRows {
            mat: self.mat.clone(),
            offset: self.offset + by,
            ..*self
        }
    }

    /// Its heads, `width` values each (rows of that width in the channels' case).
    pub fn heads(&self, width: usize) -> Heads<'_> {
        if self.channels {
            Heads::channels(&self.mat, width)
        } else {
            Heads {
                mat: &self.mat,
                head: width,
                rs: self.rs,
                offset: self.offset,
            }
        }
    }
}

/// One fused attention over `heads` heads of `src` queries against `dst` keys: dot products
/// `embed` long, value rows `dv` wide, `per_group` heads sharing each key and value head; the
/// mask (`dst × src` planes `cstep` apart, one or one per head) with its plane count.
pub(crate) struct Fused<'a> {
    pub q: Heads<'a>,
    pub k: Heads<'a>,
    pub v: Heads<'a>,
    pub out: Heads<'a>,
    pub mask: Option<(&'a GpuMat, usize, usize)>,
    pub embed: usize,
    pub src: usize,
    pub dst: usize,
    pub dv: usize,
    pub heads: usize,
    pub per_group: usize,
    pub scale: f32,
}

impl Fused<'_> {
    /// Whether `sdpa_cm` takes it: head widths in 16s up to 128, and every row and head of
    /// Q, K and V starting on a group of 8 values (its 16-byte loads).
    fn fits_tensor_cores(&self) -> bool {
        let width = |n: usize| n.is_multiple_of(16) && (16..=CM_MAX_WIDTH).contains(&n);
        let aligned = |h: &Heads<'_>| [h.rs, h.head, h.offset].iter().all(|v| v.is_multiple_of(8));
        width(self.embed) && width(self.dv) && [&self.q, &self.k, &self.v].into_iter().all(aligned)
    }

    /// Records it with `pipelines` (of [`gpu_pipeline`], masked as `mask` is).
    pub fn record(&self, rec: &mut Recorder<'_>, pipelines: &AttentionPipelines) -> Result<()> {
        let (mask, mask_cstep, planes) = self.mask.unwrap_or((self.q.mat, 0, 1));
        let push = [
            self.embed as u32,
            self.src as u32,
            self.dst as u32,
            self.dv as u32,
            self.per_group as u32,
            self.q.head as u32,
            self.k.head as u32,
            self.v.head as u32,
            mask_cstep as u32,
            planes as u32,
            self.out.head as u32,
            self.scale.to_bits(),
            self.q.rs as u32,
            self.k.rs as u32,
            self.v.rs as u32,
            self.out.rs as u32,
            self.q.offset as u32,
            self.k.offset as u32,
            self.v.offset as u32,
        ];
        let bindings = [self.q.mat, self.k.mat, self.v.mat, mask, self.out.mat];
        if let Some(shader) = pipelines.tensor_cores.filter(|_| self.fits_tensor_cores()) {
            let mut spec = Specialization {
                values: vec![
                    (0, SpecValue::I32(i32::from(pipelines.attn_mask))),
                    (1, SpecValue::I32((self.embed / 16) as i32)),
                    (2, SpecValue::I32((self.dv / 16) as i32)),
                ],
                local_size: None,
            };
            // sdpa_cm2 leaves its scores' pass out where nothing but the scale would change
            // them (its keys per block: 64, or 32 past 64-wide heads)
            if shader == Shader::SdpaCm2 {
                let keys = match self.embed <= 64 && self.dv <= 64 {
                    true => 64,
                    false => 32,
                };
                let folded =
                    !pipelines.attn_mask && self.scale > 0.0 && self.dst.is_multiple_of(keys);
                spec.values.push((3, SpecValue::I32(i32::from(folded))));
            }
            let splits = match shader {
                Shader::SdpaCm2 => self.splits(),
                _ => 1,
            };
            spec.values.push((4, SpecValue::I32(splits as i32)));
            let ctx = rec.context();
            let pipeline = ctx.pipeline(shader.module(), pipelines.fma.options, &spec)?;
            let grid = [
                128,
                self.src.div_ceil(CM_ROWS) as u32,
                (self.heads * splits) as u32,
            ];
            if shader == Shader::SdpaCm {
                return rec.dispatch(&pipeline, &bindings, &push, grid);
            }
            // sdpa_cm2's parts where it splits; the output stands in, unread, where not
            let parts = match splits {
                1 => None,
                _ => Some(self.parts(rec, splits)?),
            };
            let at_parts = [parts.as_ref().unwrap_or(self.out.mat)];
            rec.dispatch(&pipeline, &[&bindings[..], &at_parts].concat(), &push, grid)?;
            return match &parts {
                Some(parts) => self.combine(rec, parts, (pipelines.fma.options, splits), &push),
                None => Ok(()),
            };
        }
        let grid = [64, self.src.div_ceil(GPU_ROWS) as u32, self.heads as u32];
        rec.dispatch(&pipelines.fma, &bindings, &push, grid)
    }

    /// The parts `sdpa_cm2` splits each head's keys into: more while the heads' row blocks are
    /// fewer workgroups than [`SPLIT_WORKGROUPS`] and each part keeps [`SPLIT_MIN_KEYS`] keys.
    fn splits(&self) -> usize {
        let workgroups = self.heads * self.src.div_ceil(CM_ROWS);
        let mut splits = 1;
        while splits < SPLIT_MAX
            && workgroups * splits * 2 <= SPLIT_WORKGROUPS
            && self.dst / (splits * 2) >= SPLIT_MIN_KEYS
        {
            splits *= 2;
        }
        splits
    }

    /// The fp32 buffer `sdpa_cm2` writes `splits` parts of each head into: each part's rows
    /// (padded to the workgroup's 64), then their log-sum-exps.
    fn parts(&self, rec: &Recorder<'_>, splits: usize) -> Result<GpuMat> {
        let rows = self.src.div_ceil(CM_ROWS) * CM_ROWS;
        let values = self.heads * splits * rows * (self.dv + 1);
        GpuMat::alloc(rec.context(), 2, [values, 1, 1], 1, crate::OptionSet::FP32)
    }

    /// Records `sdpa_combine` weighing the `splits` parts in `parts` into the output, in the
    /// layer's variant `options`.
    fn combine(
        &self,
        rec: &mut Recorder<'_>,
        parts: &GpuMat,
        (options, splits): (crate::OptionSet, usize),
        push: &[u32],
    ) -> Result<()> {
        let spec = Specialization {
            values: vec![(4, SpecValue::I32(splits as i32))],
            local_size: None,
        };
        let combine = rec
            .context()
            .pipeline(Shader::SdpaCombine.module(), options, &spec)?;
        let grid = [self.dv as u32, self.src as u32, self.heads as u32];
        rec.dispatch(&combine, &[parts, self.out.mat], push, grid)
    }
}

/// `sdpa_cm2` splits heads' keys while its workgroups would number at most this many. Measured
/// on an H200 (132 SMs), 16 heads of 64, µs of both dispatches: 1 query over 4096 keys 72 → 27
/// in 8 parts (51 in 2, 35 in 4, 32 in 16); 256 queries over 4096 keys 77 → 59 in 2 parts (68
/// in 4, 83 in 8); 1024 over 1024 (256 workgroups) stays whole at 53: in a probe that did not
/// keep its parts, 2 parts left the main dispatch at 49–56.
const SPLIT_WORKGROUPS: usize = 128;
/// The fewest keys a part of a split head takes.
const SPLIT_MIN_KEYS: usize = 256;
/// The most parts a head's keys are split into.
const SPLIT_MAX: usize = 8;

/// One head's operands: `q` is `src × d`, `kt` is Kᵀ (`d × dst`), `v` is `dst × dv`; `mask`
/// `src × dst` values added to the scaled scores.
pub(crate) struct Head<'a> {
    pub q: MatRef<'a>,
    pub kt: MatRef<'a>,
    pub v: MatRef<'a>,
    pub mask: Option<&'a [f32]>,
    pub scale: f32,
    /// ncnn's int8 attention.
    pub int8: bool,
}

impl Head<'_> {
    /// Writes the head's `src × dv` output into `out` (rows `dv` apart); `scores` is the
    /// caller's `src × dst` workspace.
    pub fn attend(&self, scores: &mut Vec<f32>, out: MatMut<'_>) {
        let (src, dst) = (self.q.rows, self.kt.cols);
        let quantized = self.int8.then(|| {
            let (d, dv) = (self.q.cols, self.v.cols);
            let mut q = self.q.to_dense();
            int8::fake_per_row(&mut q, src, d, d, 1);
            let [mut kt, mut v] = [self.kt.to_dense(), self.v.to_dense()];
            int8::fake_per_tensor(&mut kt);
            int8::fake_per_tensor(&mut v);
            ([q, kt, v], d, dv)
        });
        let (q, kt, v) = match &quantized {
            Some(([q, kt, v], d, dv)) => (
                MatRef::rows(q, src, *d, *d),
                MatRef::rows(kt, *d, dst, dst),
                MatRef::rows(v, dst, *dv, *dv),
            ),
            None => (self.q, self.kt, self.v),
        };
        scores.clear();
        scores.resize(src * dst, 0.0);
        gemm(q, kt, MatMut::rows(scores, src, dst, dst), false);
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
        if self.int8 {
            int8::fake_per_row(scores, src, dst, dst, 1);
        }
        gemm(MatRef::rows(scores, src, dst, dst), v, out, false);
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

/// A projection: `dim_out × dim_in` weights and their bias.
#[derive(Default)]
pub(crate) struct Projection {
    pub weight: Vec<f32>,
    pub bias: Vec<f32>,
}

impl Projection {
    /// The weights then the bias, as ncnn stores them.
    pub fn load(weights: &mut Weights<'_>, out: usize, inp: usize) -> Result<Projection> {
        Ok(Projection {
            weight: weights.load(out * inp, 0)?,
            bias: weights.load(out, 1)?,
        })
    }

    /// `parts` as one projection to all their outputs, theirs one after the other (the parts
    /// emptied).
    pub fn stack(parts: [&mut Projection; 3]) -> Projection {
        let parts = parts.map(std::mem::take);
        Projection {
            weight: parts
                .iter()
                .flat_map(|p| p.weight.iter().copied())
                .collect(),
            bias: parts.iter().flat_map(|p| p.bias.iter().copied()).collect(),
        }
    }

    /// Part `i` of `parts` stacked ones ([`Projection::stack`]) where it lies.
    pub fn part(&self, i: usize, parts: usize) -> ProjRef<'_> {
        let (w, b) = (self.weight.len() / parts, self.bias.len() / parts);
        ProjRef {
            weight: &self.weight[i * w..(i + 1) * w],
            bias: &self.bias[i * b..(i + 1) * b],
        }
    }

    /// Its weights and bias where they lie.
    pub fn view(&self) -> ProjRef<'_> {
        ProjRef {
            weight: &self.weight,
            bias: &self.bias,
        }
    }
}

/// A projection's weights and bias where they lie (its own, or a part of the stacked ones).
#[derive(Clone, Copy)]
pub(crate) struct ProjRef<'a> {
    pub weight: &'a [f32],
    pub bias: &'a [f32],
}

impl ProjRef<'_> {
    /// `x · Wᵀ + b` for `rows × in` x, into the first `rows × out` values of `y`: the bias
    /// copied into every row in parallel, then the product added onto it (a serial pass adding
    /// the bias afterwards was a tenth of a ViT-B layer at 16 threads).
    pub fn apply(self, x: &[f32], rows: usize, y: &mut [f32]) {
        let out = self.bias.len();
        let inp = self.weight.len() / out.max(1);
        y[..rows * out]
            .par_chunks_mut(out.max(1))
            .with_min_len(min_items(out))
            .for_each(|row| row.copy_from_slice(self.bias));
        let w = MatRef::rows(self.weight, out, inp, inp).t();
        let view = MatMut::rows(y, rows, out, out);
        gemm(MatRef::rows(x, rows, inp, inp), w, view, true);
    }
}
