//! RotaryEmbed: `0=interleaved`; three inputs, the heads (`embed × seq × heads`) and the cos
//! and sin caches (`embed/2 × seq`, or wider: the first `embed/2` of each row). Each row's
//! pairs turn by their angle: `(x0, x1) → (x0·cos − x1·sin, x0·sin + x1·cos)`, a pair being
//! two neighbours with interleaved (GPT-J) or the same place in the two halves of the row
//! otherwise (GPT-NeoX, LLaMA). On the GPU one
//! invocation per pair (`rotaryembed.comp`, pack1 buffers, 2-D and 3-D heads).

use std::sync::Arc;

use rayon::prelude::*;

use crate::error::{InputError, Result};
use crate::gpu::specialize::SpecValue;
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::grain::GRAIN;
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::view::dense_values;
use crate::tensor::BlobShape;
use crate::tensor::GpuMat;
use crate::tensor::Mat;

/// Rotary position embedding.
#[derive(Default)]
pub struct RotaryEmbed {
    interleaved: bool,
    gpu: Option<Arc<Pipeline>>,
}

impl RotaryEmbed {
    /// Turns one row's pairs by the angles whose cos and sin are given.
    fn turn(&self, row: &mut [f32], cos: &[f32], sin: &[f32]) {
        if self.interleaved {
            for ((p, &c), &s) in row.chunks_exact_mut(2).zip(cos).zip(sin) {
                let (x0, x1) = (p[0], p[1]);
                p[0] = x0 * c - x1 * s;
                p[1] = x0 * s + x1 * c;
            }
        } else {
            let (a, b) = row.split_at_mut(cos.len());
            for (((x0, x1), &c), &s) in a.iter_mut().zip(b).zip(cos).zip(sin) {
                let (v0, v1) = (*x0, *x1);
                *x0 = v0 * c - v1 * s;
                *x1 = v0 * s + v1 * c;
            }
        }
    }
}

/// The heads and their cos and sin caches, or a typed error for another count.
fn three<M>(bottoms: &[M]) -> Result<&[M; 3]> {
    bottoms.try_into().map_err(|_| {
        InputError::Count {
            got: bottoms.len(),
            expected: "three (the heads, the cos and the sin cache)",
        }
        .into()
    })
}

/// Whether a cos or sin cache of `[w, h, d, c]` serves heads of `x`: at least half their
/// (even) width, at least their rows (the CPU and GPU read the first half-width of its rows
/// from the start, as ncnn: a decoder may share one cache between heads of two widths).
fn cache_fits([w, h, d, _]: [usize; 4], [cw, ch, ..]: [usize; 4]) -> bool {
    w % 2 == 0 && cw >= w / 2 && ch >= h * d
}

impl Layer for RotaryEmbed {
    fn support(&self) -> Support {
        Support::MANY.gpu_pack1(self.gpu.is_some())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(g) => {
                let module = crate::shaders::Shader::Rotaryembed.module();
                let interleaved = SpecValue::I32(i32::from(self.interleaved));
                Some(g.pipeline(module, &[(0, interleaved)])?)
            }
            None => None,
        };
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        three(bottoms).is_ok_and(
            |[
                BlobShape { dims: xd, shape: x },
                BlobShape {
                    dims: _,
                    shape: cos,
                },
                BlobShape {
                    dims: _,
                    shape: sin,
                },
            ]| { (2..=3).contains(xd) && cache_fits(*x, *cos) && cache_fits(*x, *sin) },
        )
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let pipeline = self.gpu.ready()?;
        let [x, cos, sin] = three(bottoms)?;
        let [w, h, _, c] = x.shape();
        let top = x.alloc_like(rec.context())?;
        // a 2-D blob is one channel of its rows
        let (c, cstep) = if x.dims == 3 { (c, x.cstep) } else { (1, 0) };
        let out_cstep = if x.dims == 3 { top.cstep } else { 0 };
        let push = [w, h, c, cstep, out_cstep, cos.shape()[0]].map(|v| v as u32);
        let grid = [(w / 2) as u32, h as u32, c as u32];
        rec.dispatch(pipeline, &[x, cos, sin, &top], &push, grid)?;
        Ok(vec![top])
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.interleaved = pd.int_in(0, 0, 0..=1, "0 or 1")? == 1;
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let [x, cos, sin] = three(bottoms)?;
        let [w, h, d, _] = x.shape();
        let rows = h * d;
        let half = w / 2;
        let cache_w = cos.shape()[0];
        for cache in [cos, sin] {
            if !cache_fits(x.shape(), cache.shape()) {
                return Err(InputError::Mismatch {
                    a: x.numpy_shape(),
                    b: cache.numpy_shape(),
                    why: "are the heads and a cos/sin cache: the cache is not at least half the (even) \
                          width × at least the rows",
                }
                .into());
            }
        }
        let (cos, sin) = (dense_values(cos), dense_values(sin));
        let mut values = x.to_values();
        let rows_per_task = (GRAIN / w.max(1)).max(1);
        values
            .par_chunks_mut((rows_per_task * w).max(1))
            .enumerate()
            .for_each(|(t, chunk)| {
                for (r, row) in chunk.chunks_exact_mut(w.max(1)).enumerate() {
                    let i = (t * rows_per_task + r) % rows;
                    let at = i * cache_w;
                    self.turn(row, &cos[at..][..half], &sin[at..][..half]);
                }
            });
        Ok(vec![Mat::from_numpy(&x.numpy_shape(), &values)?])
    }
}
