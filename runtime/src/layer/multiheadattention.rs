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

use rayon::prelude::*;

use crate::error::{Error, InputError, Result};
use crate::layer::attention::Head;
use crate::layer::contract::{Layer, Support};
use crate::layer::cpu_gemm::{MatMut, MatRef, gemm};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::view::dense_values;
use crate::layer::weights::Weights;
use crate::tensor::Mat;

/// A projection: `dim_out × dim_in` weights and their bias.
#[derive(Default)]
struct Projection {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

impl Projection {
    fn load(weights: &mut Weights<'_>, out: usize, inp: usize) -> Result<Projection> {
        Ok(Projection {
            weight: weights.load(out * inp, 0)?,
            bias: weights.load(out, 1)?,
        })
    }

    /// `x · Wᵀ + b` for `rows × in` x, into `y` (`rows × out`, laid out as the view says).
    fn apply(&self, x: &[f32], rows: usize, y: MatMut<'_>) {
        let out = self.bias.len();
        let inp = self.weight.len() / out;
        let MatMut { data, rs, cs, .. } = y;
        let w = MatRef::rows(&self.weight, out, inp, inp).t();
        let view = MatMut {
            data: &mut *data,
            rows,
            cols: out,
            rs,
            cs,
        };
        gemm(MatRef::rows(x, rows, inp, inp), w, view, false);
        for i in 0..rows {
            for (j, b) in self.bias.iter().enumerate() {
                data[i * rs + j * cs] += b;
            }
        }
    }
}

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
    q: Projection,
    k: Projection,
    v: Projection,
    out: Projection,
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

    /// The projected keys or values, head after head (`heads × dst × head_dim`, the cache's
    /// layout): the cache as it is for cross-attention, else the cache's rows then this step's.
    fn keys(
        &self,
        p: &Projection,
        x: &Mat,
        cache: Option<&Mat>,
        cross: bool,
    ) -> Result<(Vec<f32>, usize)> {
        let (embed, heads) = (self.embed_dim, self.num_heads);
        let dph = embed / heads;
        let past = cache.map_or(0, |c| c.shape()[1]);
        if let Some(c) = cache.filter(|_| past > 0) {
            let [w, _, d, ch] = c.shape();
            if w != dph || d != 1 || ch != heads {
                return Err(InputError::Mismatch {
                    a: c.numpy_shape(),
                    b: vec![heads, past, dph],
                    why: "are a cached key or value and the heads × length × head_dim it must be",
                }
                .into());
            }
        }
        if past > 0 && cross {
            return Ok((cache.map(Mat::to_values).unwrap_or_default(), past));
        }
        let cur = x.shape()[1];
        let dst = past + cur;
        let mut projected = vec![0.0f32; cur * embed];
        p.apply(
            &dense_values(x),
            cur,
            MatMut::rows(&mut projected, cur, embed, embed),
        );
        let cached = cache.filter(|_| past > 0).map(dense_values);
        let mut kv = vec![0.0f32; heads * dst * dph];
        for (h, head) in kv.chunks_exact_mut(dst * dph).enumerate() {
            let (old, new) = head.split_at_mut(past * dph);
            if let Some(c) = &cached {
                old.copy_from_slice(&c[h * past * dph..][..past * dph]);
            }
            for (row, from) in new.chunks_exact_mut(dph).zip(projected.chunks_exact(embed)) {
                row.copy_from_slice(&from[h * dph..][..dph]);
            }
        }
        Ok((kv, dst))
    }
}

impl Layer for MultiHeadAttention {
    fn support(&self) -> Support {
        Support::MANY
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
        pd.int_in(18, 0, 0..=0, "0 (quantized attention is not supported yet)")?;
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        let e = self.embed_dim;
        self.q = Projection::load(weights, e, self.qdim)?;
        self.k = Projection::load(weights, e, self.kdim)?;
        self.v = Projection::load(weights, e, self.vdim)?;
        self.out = Projection::load(weights, self.qdim, e)?;
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let s = self.slots(bottoms.len()).ok_or(InputError::Count {
            got: bottoms.len(),
            expected: "query [, key [, value]], then the mask with attn_mask and the cached \
                       key and value with kv_cache",
        })?;
        let (q, k, v) = (&bottoms[s.q], &bottoms[s.k], &bottoms[s.v]);
        let rows_of = |m: &Mat, dim: usize| {
            let [w, h, ..] = m.shape();
            if m.dims <= 2 && w == dim {
                Ok(h)
            } else {
                Err(InputError::Mismatch {
                    a: m.numpy_shape(),
                    b: vec![dim],
                    why: "are an input and the width the layer's projection takes (qdim, kdim \
                          or vdim; inputs are 2-D)",
                })
            }
        };
        let src = rows_of(q, self.qdim)?;
        let (cur_k, cur_v) = (rows_of(k, self.kdim)?, rows_of(v, self.vdim)?);
        if cur_k != cur_v {
            return Err(InputError::Mismatch {
                a: k.numpy_shape(),
                b: v.numpy_shape(),
                why: "are the key and value: their lengths differ",
            }
            .into());
        }
        let cache = s.cache.map(|c| (&bottoms[c], &bottoms[c + 1]));
        let (e, heads) = (self.embed_dim, self.num_heads);
        let dph = e / heads;

        let mut qa = vec![0.0f32; src * e];
        self.q
            .apply(&dense_values(q), src, MatMut::rows(&mut qa, src, e, e));
        qa.iter_mut().for_each(|x| *x *= self.scale);
        let (ka, dst) = self.keys(&self.k, k, cache.map(|c| c.0), s.k != s.q)?;
        let (va, dst_v) = self.keys(&self.v, v, cache.map(|c| c.1), s.v != s.q)?;
        if dst != dst_v {
            return Err(InputError::Mismatch {
                a: vec![heads, dst, dph],
                b: vec![heads, dst_v, dph],
                why: "are the keys and values with their caches: their lengths differ",
            }
            .into());
        }
        let mask = match s.mask.map(|i| &bottoms[i]) {
            Some(m) => {
                let [w, h, d, c] = m.shape();
                if w != dst || h * d != src || (m.dims == 3 && c != heads) {
                    return Err(InputError::Mismatch {
                        a: m.numpy_shape(),
                        b: vec![src, dst],
                        why: "are the mask and the query length × key length it must be (per \
                              head when 3-D)",
                    }
                    .into());
                }
                Some((dense_values(m), m.dims == 3))
            }
            None => None,
        };

        let mut heads_out = vec![0.0f32; heads * src * dph];
        heads_out
            .par_chunks_mut((src * dph).max(1))
            .enumerate()
            .for_each_init(Vec::new, |scores, (h, y)| {
                let head = Head {
                    q: MatRef::rows(&qa[h * dph..], src, dph, e),
                    kt: MatRef::rows(&ka[h * dst * dph..], dst, dph, dph).t(),
                    v: MatRef::rows(&va[h * dst * dph..], dst, dph, dph),
                    mask: mask.as_ref().map(|(m, per_head)| {
                        let plane = src * dst;
                        &m[if *per_head { h * plane } else { 0 }..][..plane]
                    }),
                    scale: 1.0,
                };
                head.attend(scores, MatMut::rows(y, src, dph, dph));
            });
        // heads side by side in each row, as the output projection takes them
        let mut joined = vec![0.0f32; src * e];
        for (h, block) in heads_out.chunks_exact(src * dph).enumerate() {
            for (i, row) in block.chunks_exact(dph).enumerate() {
                joined[i * e + h * dph..][..dph].copy_from_slice(row);
            }
        }
        let mut y = vec![0.0f32; src * self.qdim];
        self.out.apply(
            &joined,
            src,
            MatMut::rows(&mut y, src, self.qdim, self.qdim),
        );
        let mut tops = vec![Mat::from_numpy(&[src, self.qdim], &y)?];
        if self.kv_cache {
            tops.push(Mat::from_numpy(&[heads, dst, dph], &ka)?);
            tops.push(Mat::from_numpy(&[heads, dst, dph], &va)?);
        }
        Ok(tops)
    }
}
