//! SDPA: `5=attn_mask 6=scale 7=kv_cache 18=int8_scale_term`; PyTorch's
//! `scaled_dot_product_attention` on ncnn's blobs. Inputs: the query (`embed × src × heads`),
//! the key (`embed × cur × groups`) and value (`out_embed × cur × groups`), then the mask
//! (`dst × src`, or one per head) with attn_mask, then the past key and value (`… × past ×
//! groups`) with kv_cache. Heads share their group's key and value (grouped-query attention,
//! `heads / groups` heads per group). Scale 0 is `1/√embed`. With kv_cache the past and current
//! keys and values are concatenated along the sequence and given out as the second and third
//! outputs, the cache for the next step.
//!
//! A nonzero int8_scale_term is ncnn's int8 attention (`layer::matrix::attention`), on the CPU
//! only (ncnn's Vulkan SDPA turns itself off for it).
//!
//! On the GPU (`sdpa.comp`, pack1 buffers) in one pass over blocks of keys: the scores stay in
//! shared memory and each query row keeps an fp32 running maximum and sum (flash attention's
//! order), for output rows of up to 256 values. With the cache, the past and current keys and
//! values are first copied into the cache blobs it gives out (strided copies), which the pass
//! then reads.

use std::borrow::Cow;

use rayon::prelude::*;

use crate::error::{InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::matrix::attention::{self, AttentionPipelines, Fused, GPU_MAX_DV, Head, Heads};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::cpu_gemm::{MatMut, MatRef};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::strided_copy::{CopyMode, StridedCopy};
use crate::layer::shared::view::{dense_values, numpy_shape};
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat, Strided};

/// Scaled dot-product attention over prepared heads.
#[derive(Default)]
pub struct SDPA {
    attn_mask: bool,
    scale: f32,
    kv_cache: bool,
    int8: bool,
    gpu: Option<AttentionPipelines>,
    /// With kv_cache: the copies into the cache blobs.
    gpu_cache: Option<StridedCopy>,
}

/// A blob as `channels` matrices of `rows × cols` values (a 4-D blob's depth joins its rows),
/// borrowed where the net's mat already lies so.
struct Blob<'a> {
    values: Cow<'a, [f32]>,
    cols: usize,
    rows: usize,
    channels: usize,
}

impl Blob<'_> {
    fn of(m: &Mat) -> Blob<'_> {
        let [cols, rows, channels] = view(m.blob_shape());
        Blob {
            values: dense_values(m),
            cols,
            rows,
            channels,
        }
    }

    fn channel(&self, q: usize) -> &[f32] {
        &self.values[q * self.rows * self.cols..][..self.rows * self.cols]
    }

    fn shape(&self) -> Vec<usize> {
        vec![self.channels, self.rows, self.cols]
    }

    /// The past rows then these, channel by channel (the cache's concatenation).
    fn after(self, past: &Blob<'_>) -> Self {
        if past.rows == 0 {
            return self;
        }
        let mut values = Vec::with_capacity(past.values.len() + self.values.len());
        for q in 0..self.channels {
            values.extend_from_slice(past.channel(q));
            values.extend_from_slice(self.channel(q));
        }
        Blob {
            values: Cow::Owned(values),
            rows: past.rows + self.rows,
            ..self
        }
    }
}

/// A blob's `[cols, rows, channels]` as [`Blob`] reads it; an empty blob (a cache no one fed:
/// no past) has none of any.
fn view(blob: BlobShape) -> [usize; 3] {
    let [w, h, d, c] = blob.shape;
    if w * h * d * c == 0 {
        return [0; 3];
    }
    [w, h * d, c]
}

/// What one forward computes, from the blobs' shapes.
struct Plan {
    embed: usize,
    src: usize,
    heads: usize,
    groups: usize,
    /// Keys: the past ones and the current ones.
    dst: usize,
    out_embed: usize,
}

/// Two blobs (by input index) that do not fit each other, and how they must.
type Misfit = (usize, usize, &'static str);

impl SDPA {
    /// How many inputs the layer takes with its flags.
    fn inputs(&self) -> usize {
        3 + usize::from(self.attn_mask) + 2 * usize::from(self.kv_cache)
    }

    /// The plan for inputs of `shapes` (as many as [`SDPA::inputs`]), or the misfit; the CPU
    /// and GPU forwards take one rule.
    fn plan(&self, shapes: &[BlobShape]) -> Result<Plan, Misfit> {
        let [q, k, v] = [0, 1, 2].map(|i| view(shapes[i]));
        let ([embed, src, heads], [_, cur, groups]) = (q, k);
        if k[0] != embed {
            return Err((0, 1, "are the query and key: their widths differ"));
        }
        if v[1] != cur || v[2] != groups {
            return Err((
                1,
                2,
                "are the key and value: their lengths or groups differ",
            ));
        }
        if groups == 0 || heads % groups != 0 {
            return Err((
                0,
                1,
                "are the query and key: the key's groups do not divide the query's heads",
            ));
        }
        let mut dst = cur;
        if self.kv_cache {
            let at = 3 + usize::from(self.attn_mask);
            let (pk, pv) = (view(shapes[at]), view(shapes[at + 1]));
            let fits =
                |p: [usize; 3], cur: [usize; 3]| p[1] == 0 || (p[0] == cur[0] && p[2] == cur[2]);
            if !fits(pk, k) || !fits(pv, v) || pk[1] != pv[1] {
                return Err((
                    at,
                    at + 1,
                    "are the past key and value: they do not continue the key and value",
                ));
            }
            dst += pk[1];
        }
        if self.attn_mask {
            let [mw, mh, mc] = view(shapes[3]);
            if mw != dst || mh != src || (mc != 1 && mc != heads) {
                return Err((
                    3,
                    0,
                    "are the mask and query: the mask is not key length × query length (per head)",
                ));
            }
        }
        Ok(Plan {
            embed,
            src,
            heads,
            groups,
            dst,
            out_embed: v[0],
        })
    }

    /// [`SDPA::plan`] for `bottoms` (CPU or GPU mats, their dims and shape by `shape`), or a
    /// typed error: the wrong count, or the misfit naming both numpy shapes.
    fn checked_plan<M>(&self, bottoms: &[M], shape: impl Fn(&M) -> BlobShape) -> Result<Plan> {
        let want = self.inputs();
        if bottoms.len() != want {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: match (self.attn_mask, self.kv_cache) {
                    (false, false) => "three (query, key, value)",
                    (true, false) => "four (query, key, value, mask)",
                    (false, true) => "five (query, key, value, past key, past value)",
                    (true, true) => "six (query, key, value, mask, past key, past value)",
                },
            }
            .into());
        }
        let shapes: Vec<BlobShape> = bottoms.iter().map(shape).collect();
        self.plan(&shapes).map_err(|(a, b, why)| {
            InputError::Mismatch {
                a: numpy_shape(shapes[a].dims, shapes[a].shape),
                b: numpy_shape(shapes[b].dims, shapes[b].shape),
                why,
            }
            .into()
        })
    }

    /// The scores' scale: the layer's, or `1/√embed` for 0.
    fn scale_for(&self, embed: usize) -> f32 {
        if self.scale == 0.0 {
            1.0 / (embed as f32).sqrt()
        } else {
            self.scale
        }
    }
}

impl Layer for SDPA {
    fn support(&self) -> Support {
        Support::MANY.gpu_pack1(self.gpu.is_some())
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        let gpu = gpu.filter(|_| !self.int8);
        self.gpu = match gpu {
            Some(g) => Some(attention::gpu_pipeline(g, opt, self.attn_mask)?),
            None => None,
        };
        self.gpu_cache = StridedCopy::when(gpu.filter(|_| self.kv_cache), CopyMode::Copy)?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms.len() == self.inputs()
            && self
                .plan(bottoms)
                .is_ok_and(|p| p.dst > 0 && p.out_embed <= GPU_MAX_DV)
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let pipeline = self.gpu.ready()?;
        let p = self.checked_plan(bottoms, |m| m.blob_shape())?;
        let q = &bottoms[0];
        let mask = self.attn_mask.then(|| &bottoms[3]);
        // the keys and values the pass reads: the inputs, or the cache blobs made of the past
        // ones and them
        let caches = match &self.gpu_cache {
            Some(copy) => {
                let at = 3 + usize::from(self.attn_mask);
                let cur = view(BlobShape {
                    dims: bottoms[1].dims,
                    shape: bottoms[1].shape(),
                })[1];
                let past = p.dst - cur;
                let mut cache = |which: usize, width| {
                    let current = Strided::contiguous(&[p.groups, cur, width]);
                    let cached = (&bottoms[at + which - 1], past);
                    attention::record_cache(copy, rec, cached, (&bottoms[which], &current))
                };
                Some((cache(1, p.embed)?, cache(2, p.out_embed)?))
            }
            None => None,
        };
        let (k, v) = match &caches {
            Some((k, v)) => (k, v),
            None => (&bottoms[1], &bottoms[2]),
        };
        let top = GpuMat::alloc(
            rec.context(),
            3,
            [p.out_embed, p.src, p.heads],
            1,
            q.options,
        )?;
        Fused {
            q: Heads::channels(q, p.embed),
            k: Heads::channels(k, p.embed),
            v: Heads::channels(v, p.out_embed),
            out: Heads::channels(&top, p.out_embed),
            mask: mask.map(|m| (m, m.cstep, m.shape()[3])),
            embed: p.embed,
            src: p.src,
            dst: p.dst,
            dv: p.out_embed,
            heads: p.heads,
            per_group: p.heads / p.groups,
            scale: self.scale_for(p.embed),
        }
        .record(rec, pipeline)?;
        let mut tops = vec![top];
        tops.extend(caches.map(|(k, v)| [k, v]).into_iter().flatten());
        Ok(tops)
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.attn_mask = pd.int_in(5, 0, 0..=1, "0 or 1")? == 1;
        self.scale = pd.float(6, 0.0);
        self.kv_cache = pd.int_in(7, 0, 0..=1, "0 or 1")? == 1;
        self.int8 = pd.int(18, 0) != 0;
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let Plan {
            embed,
            src,
            heads,
            groups,
            dst,
            out_embed,
        } = self.checked_plan(bottoms, |m| m.blob_shape())?;
        let blob = |i: usize| Blob::of(&bottoms[i]);
        let (query, mut key, mut value) = (blob(0), blob(1), blob(2));
        let mask = self.attn_mask.then(|| blob(3));
        if self.kv_cache {
            let at = 3 + usize::from(self.attn_mask);
            key = key.after(&blob(at));
            value = value.after(&blob(at + 1));
        }
        let scale = self.scale_for(embed);
        let per_group = heads / groups;
        let mut out = vec![0.0f32; heads * src * out_embed];
        out.par_chunks_mut((src * out_embed).max(1))
            .enumerate()
            .for_each_init(Vec::new, |scores, (h, y)| {
                let g = h / per_group;
                let head = Head {
                    q: MatRef::rows(query.channel(h), src, embed, embed),
                    kt: MatRef::rows(key.channel(g), dst, embed, embed).t(),
                    v: MatRef::rows(value.channel(g), dst, out_embed, out_embed),
                    mask: mask
                        .as_ref()
                        .map(|m| m.channel(if m.channels > 1 { h } else { 0 })),
                    scale,
                    int8: self.int8,
                };
                head.attend(scores, MatMut::rows(y, src, out_embed, out_embed));
            });
        let mut tops = vec![Mat::from_numpy(&[heads, src, out_embed], &out)?];
        if self.kv_cache {
            tops.push(Mat::from_numpy(&key.shape(), &key.values)?);
            tops.push(Mat::from_numpy(&value.shape(), &value.values)?);
        }
        Ok(tops)
    }
}
