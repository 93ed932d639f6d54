//! Slice: one blob into several along an axis (`0=slices` sizes, -233 an equal share of the
//! rest; `1=axis`; `2=indices`, each output ending at its index but the last, which takes the
//! rest). As many outputs as the net gives it, as ncnn.

use crate::error::{Error, InputError, Result};
use crate::gpu::Pipeline;
use crate::gpu::Recorder;
use crate::layer::contract::{ChannelMoves, GpuSetup, Layer, Packs, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shape::gather::{Gather, box_packs, record_box, scalar_view, scalars_of};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::view::{move_channels, numpy_shape, positive_axis};
use crate::shaders::Shader;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat, Strided};
use std::sync::Arc;

/// Slice: `0=slices` (sizes, -233 = an equal share of the rest), `1=axis`, `2=indices`
/// (boundaries, the alternative to sizes).
#[derive(Default)]
pub struct Slice {
    slices: Vec<i32>,
    indices: Vec<i32>,
    axis: i32,
    /// The outputs the net gives it (0: as many as the list says).
    tops: usize,
    gpu: Option<Gather>,
    /// `slice_pair`: two parts along the channels in one dispatch.
    pair: Option<Arc<Pipeline>>,
}

impl Slice {
    /// `(start, len)` of each part along an axis of `extent`, one per output: with indices each
    /// output but the last ends at its index and the last takes the rest; with sizes -233 is an
    /// equal share of what the outputs after it leave (both as ncnn reads them).
    fn parts(&self, extent: usize) -> Result<Vec<(usize, usize)>> {
        let n = extent as i64;
        let by_indices = !self.indices.is_empty();
        let count = match (self.tops, by_indices) {
            (0, true) => self.indices.len(),
            (0, false) => self.slices.len(),
            (t, _) => t,
        };
        let listed = if by_indices {
            self.indices.len() + 1
        } else {
            self.slices.len()
        };
        if count > listed {
            return Err(Error::BadParam {
                id: if by_indices { 2 } else { 0 },
                value: format!(
                    "{} values for {count} outputs",
                    listed - usize::from(by_indices)
                ),
                allowed: "a size per output, or an index per output but the last",
            });
        }
        let mut out = Vec::with_capacity(count);
        let mut start = 0i64;
        for i in 0..count {
            let len = if by_indices {
                if i + 1 == count {
                    n - start
                } else {
                    let at = i64::from(self.indices[i]);
                    let at = if at < 0 { at + n } else { at.min(n) };
                    at - start
                }
            } else {
                match self.slices[i] {
                    -233 => (n - start) / (count - i) as i64,
                    s => i64::from(s),
                }
            };
            if len < 0 || start + len > n {
                return Err(InputError::Range {
                    what: "slice",
                    start,
                    len,
                    extent,
                }
                .into());
            }
            out.push((start as usize, len as usize));
            start += len;
        }
        Ok(out)
    }
}

impl Layer for Slice {
    fn support(&self) -> Support {
        Support::MANY.gpu(self.gpu.is_some()).gpu_4d()
    }

    fn set_top_count(&mut self, count: usize) {
        self.tops = count;
    }

    fn gpu_packs(&self, bottoms: &[BlobShape]) -> Option<Packs> {
        // packed along other axes, or where every part is whole blocks of the packed one
        let [BlobShape { dims, shape }] = bottoms else {
            return None;
        };
        let np = numpy_shape(*dims, *shape);
        let axis = positive_axis(self.axis, np.len()).ok()?;
        if axis != 0 {
            return Some(Packs::ALL);
        }
        let parts = self.parts(np[0]).ok()?;
        Some(box_packs(&parts))
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = Gather::for_boxes(gpu)?;
        self.pair = gpu
            .map(|g| g.pipeline(Shader::SlicePair.module(), &[]))
            .transpose()?;
        Ok(())
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let gather = self.gpu.ready()?;
        let [bottom] = bottoms else {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "1",
            }
            .into());
        };
        let shape = numpy_shape(bottom.dims, bottom.shape());
        let axis = positive_axis(self.axis, shape.len())?;
        let whole: Vec<(usize, usize)> = shape.iter().map(|&n| (0, n)).collect();
        let parts = self.parts(shape[axis])?;
        let box_of = |rec: &mut Recorder<'_>, part| {
            let mut roi = whole.clone();
            roi[axis] = part;
            record_box(rec, gather, bottom, &roi)
        };
        // along the channels, two parts per dispatch
        let p = bottom.elempack;
        let whole_packs = parts.iter().all(|&(s, l)| s % p == 0 && l % p == 0);
        let view = scalars_of(bottom).filter(|_| axis == 0 && bottom.dims >= 3 && whole_packs);
        let (Some(pair), Some(src)) = (self.pair.as_ref(), view) else {
            return parts.into_iter().map(|part| box_of(rec, part)).collect();
        };
        let mut tops = Vec::with_capacity(parts.len());
        for two in parts.chunks(2) {
            let [(start, a_len), (_, b_len)] = *two else {
                tops.push(box_of(rec, two[0])?);
                continue;
            };
            let [w, h, d, _] = bottom.space();
            let ctx = rec.context();
            let part = |len: usize| {
                GpuMat::alloc_space(ctx, bottom.dims, [w, h, d, len / p], p, bottom.options)
            };
            let (a, b) = (part(a_len)?, part(b_len)?);
            let what = "a part of a slice";
            let (av, bv) = (
                scalar_view(&a, "slice_pair", what)?,
                scalar_view(&b, "slice_pair", what)?,
            );
            // (a mat's h holds a 4-D blob's d slabs of rows)
            let words = [
                src.w,
                src.h,
                src.cstep,
                av.c,
                av.cstep,
                bv.c,
                bv.cstep,
                start / p,
            ]
            .map(|n| n as u32);
            let grid = [src.w, src.h, av.c + bv.c].map(|n| n as u32);
            rec.dispatch(pair, &[&src, &av, &bv], &words, grid)?;
            tops.extend([a, b]);
        }
        Ok(tops)
    }

    fn channel_moves(&self, bottoms: &[BlobShape]) -> Option<ChannelMoves> {
        let &[
            BlobShape {
                dims,
                shape: [.., c],
            },
        ] = bottoms
        else {
            return None;
        };
        let along = dims >= 3 && positive_axis(self.axis, dims.into()).ok()? == 0;
        let parts = along.then(|| self.parts(c).ok()).flatten()?;
        let top = |(start, len)| (start..start + len).map(|q| (0, q)).collect();
        Some(parts.into_iter().map(top).collect())
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.slices = pd.ints(0);
        self.axis = pd.int(1, 0);
        self.indices = pd.ints(2);
        if self.slices.is_empty() && self.indices.is_empty() {
            return Err(Error::BadParam {
                id: 0,
                value: "[]".into(),
                allowed: "slices (0) or indices (2), one of them not empty",
            });
        }
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let [bottom] = bottoms else {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "1",
            }
            .into());
        };
        let shape = bottom.numpy_shape();
        let axis = positive_axis(self.axis, shape.len())?;
        if axis == 0 && bottom.dims >= 3 {
            // the parts' errors first: `channel_moves` declines what they refuse
            self.parts(shape[0])?;
        }
        if let Some(moves) = self.channel_moves(&[bottom.blob_shape()]) {
            return move_channels(bottoms, &moves);
        }
        let all = Strided::contiguous(&shape);
        let values = bottom.to_values();
        self.parts(shape[axis])?
            .into_iter()
            .map(|(start, len)| all.clone().narrow(axis, start, len).gather_mat(&values))
            .collect()
    }
}
