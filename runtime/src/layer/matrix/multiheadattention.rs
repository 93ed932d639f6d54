//! MultiHeadAttention: `0=embed_dim 1=num_heads 2=weight_data_size 3=kdim 4=vdim 5=attn_mask
//! 6=scale 7=kv_cache 18=int8_scale_term`; weights the query, key, value and output
//! projections, each a matrix (`embed × qdim`, `embed × kdim`, `embed × vdim`, `qdim × embed`,
//! qdim being weight_data_size / embed_dim) and its bias, in that order. PyTorch's
//! `nn.MultiheadAttention` on 2-D blobs (`dim × seq`).
//!
//! Inputs as ncnn counts them: one blob is self-attention (query, key and value the same), two
//! are query and key-value, three query, key and value; then the mask (`dst × src`, or one per
//! head) with attn_mask, then the cached projected key and value (`head_dim × seq × heads`,
//! as the wheel of 2026-10 lays them out; possibly empty) with kv_cache. With a cache, self-attention appends this step's keys and values to
//! the cache, cross-attention uses a non-empty cache as it is (the encoder's keys and values
//! projected once); both give the keys and values used out as the second and third outputs.
//!
//! A nonzero int8_scale_term (18) is ncnn's int8 attention: int8 weights with a scale per
//! output row (query, key, value) or one (output) after the biases, each projection's input
//! quantized as a whole (the output projection's per row), the heads as
//! `layer::matrix::attention` quantizes them; on the CPU only, as ncnn's Vulkan layer leaves it.
//!
//! On the GPU: the projections on the shared GPU GEMM (bias as C; self-attention's q, k and v
//! as one stacked product), the heads read where they lie side by side in the projected rows
//! by SDPA's fused attention, which writes them side by side for the output projection: three
//! dispatches for self-attention, nothing copied. With the cache, each head's projected keys
//! and values are copied after the cache's rows into the cache blobs given out, which the
//! attention reads.

use rayon::prelude::*;

use crate::error::{Error, InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::matrix::attention::{
    self, AttentionPipelines, Fused, GPU_MAX_DV, Head, HeadRows, ProjRef, Projection,
};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::cpu_gemm::{MatMut, MatRef};
use crate::layer::shared::gpu_gemm::{self, Addend, Form, Operand, Pipelines, Sizes};
use crate::layer::shared::grain::min_items;
use crate::layer::shared::int8;
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::strided_copy::{CopyMode, StridedCopy};
use crate::layer::shared::view::{dense_values, numpy_shape};
use crate::layer::weights::Weights;
use crate::tensor::BlobShape;
use crate::tensor::pool::Scratch;
use crate::tensor::{GpuMat, Mat, Strided};

/// Multi-head attention with its projections.
#[derive(Default)]
pub struct MultiHeadAttention {
    embed_dim: usize,
    num_heads: usize,
    qdim: usize,
    kdim: usize,
    vdim: usize,
    attn_mask: bool,
    scale: f32,
    kv_cache: bool,
    int8: bool,
    q: Projection,
    k: Projection,
    v: Projection,
    out: Projection,
    /// The q, k and v projections stacked (`3·embed × qdim`, theirs then emptied) where their
    /// inputs are alike in width: self-attention projects once, three times as wide.
    qkv: Option<Projection>,
    gpu: Option<GpuAttention>,
}

/// The device side: the projection GEMM (`x · Wᵀ`, the bias as C per column), the fused
/// attention, and the projections' weights and biases uploaded once: q, k, v and out, or the
/// stacked q k v and out.
struct GpuAttention {
    project: Pipelines,
    attend: AttentionPipelines,
    /// With kv_cache: the copies into the cache blobs.
    cache: Option<StridedCopy>,
    weights: Vec<(GpuMat, GpuMat)>,
}

/// What one forward computes for its inputs' shapes: `src` queries against `dst` keys (the
/// cache's included), the mask one plane or one per head.
struct Plan {
    slots: Slots,
    src: usize,
    cur: usize,
    dst: usize,
    mask_per_head: bool,
}

/// Where each input is among the blobs (ncnn's rule from their count).
struct Slots {
    q: usize,
    k: usize,
    v: usize,
    mask: Option<usize>,
    cache: Option<usize>,
}

impl MultiHeadAttention {
    fn slots(&self, count: usize) -> Option<Slots> {
        let extra = usize::from(self.attn_mask) + 2 * usize::from(self.kv_cache);
        let (k, v) = match count.checked_sub(extra)? {
            1 => (0, 0),
            2 => (1, 1),
            3 => (1, 2),
            _ => return None,
        };
        let first = v + 1;
        Some(Slots {
            q: 0,
            k,
            v,
            mask: self.attn_mask.then_some(first),
            cache: self.kv_cache.then_some(first + usize::from(self.attn_mask)),
        })
    }

    /// The plan for inputs of `(dims, [w, h, d, c])`, or a typed error naming the shapes.
    fn plan(&self, shapes: &[BlobShape]) -> Result<Plan> {
        let slots = self.slots(shapes.len()).ok_or(InputError::Count {
            got: shapes.len(),
            expected: "query [, key [, value]], then the mask with attn_mask and the cached \
                       key and value with kv_cache",
        })?;
        let rows_of = |BlobShape { dims, shape }: BlobShape, dim: usize| {
            let [w, h, ..] = shape;
            if dims <= 2 && w == dim {
                Ok(h)
            } else {
                Err(InputError::Mismatch {
                    a: numpy_shape(dims, shape),
                    b: vec![dim],
                    why: "are an input and the width the layer's projection takes (qdim, kdim \
                          or vdim; inputs are 2-D)",
                })
            }
        };
        let src = rows_of(shapes[slots.q], self.qdim)?;
        let (k, v) = (shapes[slots.k], shapes[slots.v]);
        let (cur, cur_v) = (rows_of(k, self.kdim)?, rows_of(v, self.vdim)?);
        if cur != cur_v {
            return Err(InputError::Mismatch {
                a: numpy_shape(k.dims, k.shape),
                b: numpy_shape(v.dims, v.shape),
                why: "are the key and value: their lengths differ",
            }
            .into());
        }
        // a cross-attention cache with rows is used as it is
        let past = slots.cache.map_or(0, |c| shapes[c].shape[1]);
        let cross = past > 0 && slots.k != slots.q;
        let dst = past + if cross { 0 } else { cur };
        let mut mask_per_head = false;
        if let Some(i) = slots.mask {
            let BlobShape { dims, shape } = shapes[i];
            let [w, h, d, c] = shape;
            if w != dst || h * d != src || (dims == 3 && c != self.num_heads) {
                return Err(InputError::Mismatch {
                    a: numpy_shape(dims, shape),
                    b: vec![src, dst],
                    why: "are the mask and the query length × key length it must be (per head \
                          when 3-D)",
                }
                .into());
            }
            mask_per_head = dims == 3;
        }
        Ok(Plan {
            slots,
            src,
            cur,
            dst,
            mask_per_head,
        })
    }

    /// A projection's input values: int8 quantized as a whole.
    fn input<'a>(&self, x: &'a Mat) -> std::borrow::Cow<'a, [f32]> {
        let mut v = dense_values(x);
        if self.int8 {
            int8::fake_per_tensor(v.to_mut());
        }
        v
    }

    /// The rows of a cached key or value of `(dims, shape)`, checked against the
    /// `heads × length × head_dim` it must be where it has any.
    fn cache_rows(&self, dims: u8, shape: [usize; 4]) -> Result<usize> {
        let (heads, dph) = (self.num_heads, self.embed_dim / self.num_heads);
        let [w, past, d, ch] = shape;
        if past > 0 && (w != dph || d != 1 || ch != heads) {
            return Err(InputError::Mismatch {
                a: numpy_shape(dims, shape),
                b: vec![heads, past, dph],
                why: "are a cached key or value and the heads × length × head_dim it must be",
            }
            .into());
        }
        Ok(past)
    }

    /// Projection `which` (0 q, 1 k, 2 v): its part of the stacked ones where they are.
    fn projection(&self, which: usize) -> ProjRef<'_> {
        match &self.qkv {
            Some(p) => p.part(which, 3),
            None => [&self.q, &self.k, &self.v][which].view(),
        }
    }

    /// The projected keys or values, head after head (`heads × dst × head_dim`, the cache's
    /// layout): the cache as it is for cross-attention, else the cache's rows then this step's,
    /// projected by projection `which` or `given` already (rows of the given stride).
    fn keys(
        &self,
        which: usize,
        x: &Mat,
        (cache, cross): (Option<&Mat>, bool),
        given: Option<(&[f32], usize)>,
    ) -> Result<(Vec<f32>, usize)> {
        let (embed, heads) = (self.embed_dim, self.num_heads);
        let dph = embed / heads;
        let past = cache.map_or(Ok(0), |c| self.cache_rows(c.dims, c.shape()))?;
        if past > 0 && cross {
            return Ok((cache.map(Mat::to_values).unwrap_or_default(), past));
        }
        let cur = x.shape()[1];
        let dst = past + cur;
        let own;
        let (projected, stride) = match given {
            Some(g) => g,
            None => {
                // every value written by the projection
                let mut p = Scratch::any(cur * embed);
                self.projection(which).apply(&self.input(x), cur, &mut p);
                own = p;
                (&own[..], embed)
            }
        };
        let cached = cache.filter(|_| past > 0).map(dense_values);
        let mut kv = vec![0.0f32; heads * dst * dph];
        kv.par_chunks_exact_mut((dst * dph).max(1))
            .enumerate()
            .for_each(|(h, head)| {
                let (old, new) = head.split_at_mut(past * dph);
                if let Some(c) = &cached {
                    old.copy_from_slice(&c[h * past * dph..][..past * dph]);
                }
                for (row, from) in new.chunks_exact_mut(dph).zip(projected.chunks(stride)) {
                    row.copy_from_slice(&from[h * dph..][..dph]);
                }
            });
        Ok((kv, dst))
    }
}

impl MultiHeadAttention {
    /// Projection `which` (0 q, 1 k, 2 v, 3 out) of the `rows × in` mat `x` on the device,
    /// `x · Wᵀ + b` in new rows: the stacked one's where q, k and v are stacked (only
    /// cross-attention of inputs alike in width computes parts it does not use).
    fn project_gpu(
        &self,
        rec: &mut Recorder<'_>,
        state: &GpuAttention,
        which: usize,
        x: &GpuMat,
        rows: usize,
    ) -> Result<HeadRows> {
        let (slot, offset) = match (self.qkv.is_some(), which) {
            (true, 3) => (1, 0),
            (true, _) => (0, which * self.embed_dim),
            (false, _) => (which, 0),
        };
        let (weight, bias) = &state.weights[slot];
        let (out, inp) = (bias.c, weight.c / bias.c);
        let top = GpuMat::alloc(rec.context(), 2, [out, 1, rows], 1, state.project.options())?;
        let sizes = Sizes::batched(rows, out, inp, 1);
        let c = Addend {
            mat: bias,
            broadcast: 4,
            rs: 0,
        };
        let (x, weight) = (Operand::rows(x), Operand::dense(weight, inp));
        gpu_gemm::record(
            rec,
            &state.project,
            sizes,
            x,
            weight,
            Some(c),
            Operand::rows(&top),
            None,
        )?;
        Ok(HeadRows {
            offset,
            ..HeadRows::rows(top, out)
        })
    }

    /// [`MultiHeadAttention::keys`] on the device: a copy of the cache for cross-attention,
    /// else a new cache blob of the cache's rows then this step's projected ones (projection
    /// `which` of `x`, 1 keys, 2 values, or `given` already: self-attention's part of the
    /// stacked rows), each head's columns of the projected rows copied to its channel.
    fn keys_gpu(
        &self,
        rec: &mut Recorder<'_>,
        state: &GpuAttention,
        (which, x, given): (usize, &GpuMat, Option<HeadRows>),
        cache: &GpuMat,
        cross: bool,
    ) -> Result<HeadRows> {
        let copy = state.cache.ready()?;
        let (e, heads) = (self.embed_dim, self.num_heads);
        let dph = e / heads;
        let past = self.cache_rows(cache.dims, cache.shape())?;
        if past > 0 && cross {
            return cache.record_copy(rec).map(HeadRows::in_channels);
        }
        let cur = x.shape()[1];
        let p = match given {
            Some(p) => p,
            None => self.project_gpu(rec, state, which, x, cur)?,
        };
        // head h is columns h·dph.. of the part in every projected row
        let rows = Strided {
            offset: p.offset,
            shape: vec![heads, cur, dph],
            strides: vec![dph as isize, p.rs as isize, 1],
        };
        attention::record_cache(copy, rec, (cache, past), (&p.mat, &rows))
            .map(HeadRows::in_channels)
    }
}

impl Layer for MultiHeadAttention {
    fn support(&self) -> Support {
        Support::MANY.gpu_pack1(self.gpu.is_some())
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu.filter(|_| !self.int8) {
            Some(g) => {
                let project = Form {
                    trans_b: true,
                    ..Form::PLAIN
                };
                Some(GpuAttention {
                    project: project.pipeline(g, opt)?,
                    attend: attention::gpu_pipeline(g, opt, self.attn_mask)?,
                    cache: StridedCopy::when(Some(g).filter(|_| self.kv_cache), CopyMode::Copy)?,
                    weights: Vec::new(),
                })
            }
            None => None,
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        if self.gpu.is_none() {
            return Ok(());
        }
        let parts = match &self.qkv {
            Some(p) => vec![p.view()],
            None => [0, 1, 2].map(|which| self.projection(which)).to_vec(),
        };
        let weights = parts
            .into_iter()
            .chain([self.out.view()])
            .map(|p| {
                Ok((
                    gpu.upload_values(p.weight, 1)?,
                    gpu.upload_values(p.bias, 1)?,
                ))
            })
            .collect::<Result<_>>()?;
        if let Some(state) = self.gpu.as_mut() {
            state.weights = weights;
        }
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        self.embed_dim / self.num_heads <= GPU_MAX_DV && self.plan(bottoms).is_ok_and(|p| p.dst > 0)
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let state = self.gpu.ready()?;
        if state.weights.len() != if self.qkv.is_some() { 2 } else { 4 } {
            return Err(Error::NotLoaded {
                what: "the projections on the device",
            });
        }
        let shapes: Vec<_> = bottoms.iter().map(|m| m.blob_shape()).collect();
        let plan = self.plan(&shapes)?;
        let Plan { slots: s, src, .. } = plan;
        let (e, heads) = (self.embed_dim, self.num_heads);
        let dph = e / heads;
        let q = self.project_gpu(rec, state, 0, &bottoms[s.q], src)?;
        // keys and values: projected rows, heads side by side (self-attention's the stacked
        // rows' other parts), or the cache's heads × rows
        let stacked = self.qkv.is_some() && s.k == s.q && s.v == s.q;
        let (k, v) = match s.cache {
            Some(c) => {
                let given = |by| stacked.then(|| q.part(by));
                let kb = (1, &bottoms[s.k], given(e));
                let vb = (2, &bottoms[s.v], given(2 * e));
                (
                    self.keys_gpu(rec, state, kb, &bottoms[c], s.k != s.q)?,
                    self.keys_gpu(rec, state, vb, &bottoms[c + 1], s.v != s.q)?,
                )
            }
            None if stacked => (q.part(e), q.part(2 * e)),
            None => (
                self.project_gpu(rec, state, 1, &bottoms[s.k], plan.cur)?,
                self.project_gpu(rec, state, 2, &bottoms[s.v], plan.cur)?,
            ),
        };
        let cached = s.cache.is_some();
        let [kv_rows, v_rows] = [&k, &v].map(|p| if cached { p.mat.shape()[1] } else { plan.cur });
        if kv_rows != plan.dst || v_rows != plan.dst {
            return Err(InputError::Mismatch {
                a: vec![heads, kv_rows, dph],
                b: vec![heads, v_rows, dph],
                why: "are the keys and values with their caches: their lengths differ",
            }
            .into());
        }
        // head h is columns h·dph.. of every query row, and so of the joined output
        let joined = GpuMat::alloc(rec.context(), 2, [e, 1, src], 1, state.project.options())?;
        let joined = HeadRows::rows(joined, e);
        let mask = s.mask.map(|i| {
            let m = &bottoms[i];
            let planes = if plan.mask_per_head { heads } else { 1 };
            (m, m.cstep, planes)
        });
        Fused {
            q: q.heads(dph),
            k: k.heads(dph),
            v: v.heads(dph),
            out: joined.heads(dph),
            mask,
            embed: dph,
            src,
            dst: plan.dst,
            dv: dph,
            heads,
            per_group: 1,
            scale: self.scale,
        }
        .record(rec, &state.attend)?;
        let mut tops = vec![self.project_gpu(rec, state, 3, &joined.mat, src)?.mat];
        if cached {
            tops.extend([k.mat, v.mat]);
        }
        Ok(tops)
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        let embed = pd.int_in(0, 0, 1..=i32::MAX, "at least 1")?;
        let heads = pd.int_in(1, 1, 1..=embed, "1 to embed_dim")?;
        if embed % heads != 0 {
            return Err(Error::BadParam {
                id: 1,
                value: heads.to_string(),
                allowed: "a divisor of embed_dim (0=)",
            });
        }
        let size = pd.int_in(2, 0, 1..=i32::MAX, "embed_dim × qdim")?;
        if size % embed != 0 {
            return Err(Error::BadParam {
                id: 2,
                value: size.to_string(),
                allowed: "a multiple of embed_dim (0=): embed_dim × qdim",
            });
        }
        self.embed_dim = embed as usize;
        self.num_heads = heads as usize;
        self.qdim = (size / embed) as usize;
        self.kdim = pd.int_in(3, embed, 1..=i32::MAX, "at least 1")? as usize;
        self.vdim = pd.int_in(4, embed, 1..=i32::MAX, "at least 1")? as usize;
        self.attn_mask = pd.int_in(5, 0, 0..=1, "0 or 1")? == 1;
        self.scale = pd.float(6, 1.0 / ((embed / heads) as f32).sqrt());
        self.kv_cache = pd.int_in(7, 0, 0..=1, "0 or 1")? == 1;
        self.int8 = int8::quantize_term(pd)?;
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        let e = self.embed_dim;
        self.q = Projection::load(weights, e, self.qdim)?;
        self.k = Projection::load(weights, e, self.kdim)?;
        self.v = Projection::load(weights, e, self.vdim)?;
        self.out = Projection::load(weights, self.qdim, e)?;
        if self.int8 {
            // int8 levels over their scales: a scale per output row, the output's one
            for p in [&mut self.q, &mut self.k, &mut self.v] {
                let scales = weights.load(e, 1)?;
                let inp = p.weight.len() / e;
                for (row, s) in p.weight.chunks_exact_mut(inp).zip(scales) {
                    row.iter_mut().for_each(|w| *w /= s);
                }
            }
            let s = weights.load(1, 1)?[0];
            self.out.weight.iter_mut().for_each(|w| *w /= s);
        }
        // projections of inputs alike in width stacked: self-attention projects once, three
        // times as wide, on the CPU and the device
        self.qkv = (self.qdim == self.kdim && self.kdim == self.vdim)
            .then(|| Projection::stack([&mut self.q, &mut self.k, &mut self.v]));
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let shapes: Vec<_> = bottoms.iter().map(|m| m.blob_shape()).collect();
        let Plan {
            slots: s, src, dst, ..
        } = self.plan(&shapes)?;
        let (q, k, v) = (&bottoms[s.q], &bottoms[s.k], &bottoms[s.v]);
        let cache = s.cache.map(|c| (&bottoms[c], &bottoms[c + 1]));
        let (e, heads) = (self.embed_dim, self.num_heads);
        let dph = e / heads;

        // self-attention in a CPU net: the three projections as one product, q k v side by
        // side in each row; else q alone
        let stacked = self.qkv.as_ref().filter(|_| s.k == s.q && s.v == s.q);
        let qs = if stacked.is_some() { 3 * e } else { e };
        // every value written by the projection
        let mut qa = Scratch::any(src * qs);
        match stacked {
            Some(p) => p.view().apply(&self.input(q), src, &mut qa),
            None => self.projection(0).apply(&self.input(q), src, &mut qa),
        }
        let scale = self.scale;
        qa.par_chunks_mut(qs.max(1))
            .with_min_len(min_items(e))
            .for_each(|row| row[..e].iter_mut().for_each(|x| *x *= scale));
        let given = |which: usize| stacked.map(|_| (&qa[which * e..], qs));
        let (ka, dst_k) = self.keys(1, k, (cache.map(|c| c.0), s.k != s.q), given(1))?;
        let (va, dst_v) = self.keys(2, v, (cache.map(|c| c.1), s.v != s.q), given(2))?;
        if dst_k != dst || dst_v != dst {
            return Err(InputError::Mismatch {
                a: vec![heads, dst_k, dph],
                b: vec![heads, dst_v, dph],
                why: "are the keys and values with their caches: their lengths differ",
            }
            .into());
        }
        let mask = s
            .mask
            .map(|i| (dense_values(&bottoms[i]), bottoms[i].dims == 3));

        // blocks of query rows, every head of a block in one task, written side by side in
        // each row as the output projection takes them: twice as many tasks as threads (one
        // task per head left 16 threads with 12 heads, and the heads were then copied
        // together serially)
        let rows = (src / (2 * rayon::current_num_threads()).max(1)).clamp(4, 64);
        // every value written by some head
        let mut joined = Scratch::any(src * e);
        joined
            .par_chunks_mut((rows * e).max(1))
            .enumerate()
            .for_each_init(Vec::new, |scores, (b, out)| {
                let (i0, n) = (b * rows, out.len() / e.max(1));
                for h in 0..heads {
                    let head = Head {
                        q: MatRef::rows(&qa[i0 * qs + h * dph..], n, dph, qs),
                        kt: MatRef::rows(&ka[h * dst * dph..], dst, dph, dph).t(),
                        v: MatRef::rows(&va[h * dst * dph..], dst, dph, dph),
                        mask: mask.as_ref().map(|(m, per_head)| {
                            let plane = if *per_head { h * src * dst } else { 0 };
                            &m[plane + i0 * dst..][..n * dst]
                        }),
                        scale: 1.0,
                        int8: self.int8,
                    };
                    head.attend(scores, MatMut::rows(&mut out[h * dph..], n, dph, e));
                }
            });
        if self.int8 {
            int8::fake_per_row(&mut joined, src, e, e, 1);
        }
        let mut y = Scratch::any(src * self.qdim);
        self.out.view().apply(&joined, src, &mut y);
        let mut tops = vec![Mat::from_numpy(&[src, self.qdim], &y)?];
        if self.kv_cache {
            tops.push(Mat::from_numpy(&[heads, dst, dph], &ka)?);
            tops.push(Mat::from_numpy(&[heads, dst, dph], &va)?);
        }
        Ok(tops)
    }
}
