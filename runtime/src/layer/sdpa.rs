//! SDPA: `5=attn_mask 6=scale 7=kv_cache 18=int8_scale_term`; PyTorch's
//! `scaled_dot_product_attention` on ncnn's blobs. Inputs: the query (`embed × src × heads`),
//! the key (`embed × cur × groups`) and value (`out_embed × cur × groups`), then the mask
//! (`dst × src`, or one per head) with attn_mask, then the past key and value (`… × past ×
//! groups`) with kv_cache. Heads share their group's key and value (grouped-query attention,
//! `heads / groups` heads per group). Scale 0 is `1/√embed`. With kv_cache the past and current
//! keys and values are concatenated along the sequence and given out as the second and third
//! outputs, the cache for the next step.
//!
//! On the GPU (`sdpa.comp`, pack1 buffers, without the cache) in one pass over blocks of keys:
//! the scores stay in shared memory and each query row keeps an fp32 running maximum and sum
//! (flash attention's order), for output rows of up to 256 values.

use std::sync::Arc;

use rayon::prelude::*;

use crate::error::{Error, InputError, Result};
use crate::gpu::specialize::SpecValue;
use crate::gpu::{Pipeline, Recorder};
use crate::layer::attention::Head;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::cpu_gemm::{MatMut, MatRef};
use crate::layer::params::ParamDict;
use crate::layer::pipelines::DeviceSide;
use crate::layer::run_options::RunOptions;
use crate::tensor::{GpuMat, Mat};

/// The widest value rows the shader takes (64 invocations × 4 columns each).
const GPU_MAX_DV: usize = 256;
/// Query rows per workgroup (the shader's `ROWS`).
const GPU_ROWS: usize = 16;

/// Scaled dot-product attention over prepared heads.
#[derive(Default)]
pub struct SDPA {
    attn_mask: bool,
    scale: f32,
    kv_cache: bool,
    gpu: Option<Arc<Pipeline>>,
}

/// A blob as `channels` matrices of `rows × cols` values.
struct Blob {
    values: Vec<f32>,
    cols: usize,
    rows: usize,
    channels: usize,
}

impl Blob {
    fn of(m: &Mat) -> Blob {
        let [w, h, d, c] = m.shape();
        Blob {
            values: m.to_values(),
            cols: w,
            rows: h * d,
            channels: c,
        }
    }

    fn channel(&self, q: usize) -> &[f32] {
        &self.values[q * self.rows * self.cols..][..self.rows * self.cols]
    }

    fn shape(&self) -> Vec<usize> {
        vec![self.channels, self.rows, self.cols]
    }

    /// The past rows then these, channel by channel (the cache's concatenation).
    fn after(self, past: Option<Blob>) -> Blob {
        let Some(past) = past.filter(|p| p.rows > 0) else {
            return self;
        };
        let mut values = Vec::with_capacity(past.values.len() + self.values.len());
        for q in 0..self.channels {
            values.extend_from_slice(past.channel(q));
            values.extend_from_slice(self.channel(q));
        }
        Blob {
            values,
            rows: past.rows + self.rows,
            ..self
        }
    }
}

fn mismatch(a: &Blob, b: &Blob, why: &'static str) -> Error {
    InputError::Mismatch {
        a: a.shape(),
        b: b.shape(),
        why,
    }
    .into()
}

impl Layer for SDPA {
    fn support(&self) -> Support {
        Support::MANY.gpu_pack1(self.gpu.is_some())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(g) if !self.kv_cache => {
                let module = crate::shaders::Shader::Sdpa.module();
                let mask = SpecValue::I32(i32::from(self.attn_mask));
                Some(g.pipeline(module, &[(0, mask)])?)
            }
            _ => None,
        };
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[(u8, [usize; 4])]) -> bool {
        let [
            (qd, [e, src, _, heads]),
            (kd, [ke, dst, _, groups]),
            (vd, [dv, vdst, _, vg]),
            mask @ ..,
        ] = bottoms
        else {
            return false;
        };
        let mask_fits = match mask {
            [] => !self.attn_mask,
            [(md, [mw, mh, _, mc])] => {
                self.attn_mask && *md <= 3 && mw == dst && mh == src && (*mc == 1 || mc == heads)
            }
            _ => false,
        };
        [qd, kd, vd].iter().all(|d| **d <= 3)
            && e == ke
            && dst == vdst
            && groups == vg
            && *groups > 0
            && heads % groups == 0
            && *dst > 0
            && *dv <= GPU_MAX_DV
            && mask_fits
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let pipeline = self.gpu.ready()?;
        let (q, k, v) = match bottoms {
            [q, k, v, ..] => (q, k, v),
            _ => {
                return Err(InputError::Count {
                    got: bottoms.len(),
                    expected: "query, key and value",
                }
                .into());
            }
        };
        let mask = if self.attn_mask { bottoms.get(3) } else { None };
        // the logical shapes: a 2-D blob's view is w × 1 × h, its rows one "channel" each
        let ([embed, src, _, heads], [_, dst, _, groups], [dv, ..]) =
            (q.shape(), k.shape(), v.shape());
        let top = GpuMat::alloc(rec.context(), 3, [dv, src, heads], 1, q.options);
        let scale = if self.scale == 0.0 {
            1.0 / (embed as f32).sqrt()
        } else {
            self.scale
        };
        let push = [
            embed as u32,
            src as u32,
            dst as u32,
            dv as u32,
            (heads / groups.max(1)) as u32,
            q.cstep as u32,
            k.cstep as u32,
            v.cstep as u32,
            mask.map_or(0, |m| m.cstep) as u32,
            mask.map_or(1, |m| m.shape()[3]) as u32,
            top.cstep as u32,
            scale.to_bits(),
        ];
        let grid = [64, src.div_ceil(GPU_ROWS) as u32, heads as u32];
        rec.dispatch(pipeline, &[q, k, v, mask.unwrap_or(q), &top], &push, grid)?;
        Ok(vec![top])
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.attn_mask = pd.int_in(5, 0, 0..=1, "0 or 1")? == 1;
        self.scale = pd.float(6, 0.0);
        self.kv_cache = pd.int_in(7, 0, 0..=1, "0 or 1")? == 1;
        pd.int_in(18, 0, 0..=0, "0 (int8 SDPA is not supported yet)")?;
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let want = 3 + usize::from(self.attn_mask) + 2 * usize::from(self.kv_cache);
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
        let (query, key, value) = (
            Blob::of(&bottoms[0]),
            Blob::of(&bottoms[1]),
            Blob::of(&bottoms[2]),
        );
        let mask = self.attn_mask.then(|| Blob::of(&bottoms[3]));
        let past = self.kv_cache.then(|| {
            let at = 3 + usize::from(self.attn_mask);
            (Blob::of(&bottoms[at]), Blob::of(&bottoms[at + 1]))
        });
        let (embed, src, heads) = (query.cols, query.rows, query.channels);
        let groups = key.channels;
        if key.cols != embed {
            return Err(mismatch(
                &query,
                &key,
                "are the query and key: their widths differ",
            ));
        }
        if value.rows != key.rows || value.channels != groups {
            return Err(mismatch(
                &key,
                &value,
                "are the key and value: their lengths or groups differ",
            ));
        }
        if groups == 0 || heads % groups != 0 {
            return Err(mismatch(
                &query,
                &key,
                "are the query and key: the key's groups do not divide the query's heads",
            ));
        }
        let (key, value) = match past {
            Some((pk, pv)) => {
                let fits = |p: &Blob, cur: &Blob| {
                    p.rows == 0 || (p.cols == cur.cols && p.channels == cur.channels)
                };
                if !fits(&pk, &key) || !fits(&pv, &value) || pk.rows != pv.rows {
                    return Err(mismatch(
                        &pk,
                        &pv,
                        "are the past key and value: they do not continue the key and value",
                    ));
                }
                (key.after(Some(pk)), value.after(Some(pv)))
            }
            None => (key, value),
        };
        let (dst, out_embed) = (key.rows, value.cols);
        if let Some(m) = &mask
            && (m.cols != dst || m.rows != src || (m.channels != 1 && m.channels != heads))
        {
            return Err(mismatch(
                m,
                &query,
                "are the mask and query: the mask is not key length × query length (per head)",
            ));
        }
        let scale = if self.scale == 0.0 {
            1.0 / (embed as f32).sqrt()
        } else {
            self.scale
        };
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
