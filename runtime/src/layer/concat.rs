//! Concat: `0=axis`. Inputs agreeing on every other axis, joined along it.

use crate::error::{InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Packs, Support};
use crate::layer::params::ParamDict;
use crate::layer::pipelines::{DeviceSide, PackPipelines};
use crate::layer::run_options::RunOptions;
use crate::layer::strided_copy::{CopyExtras, CopyMode, StridedCopy, alloc_numpy};
use crate::layer::view::{channel_planes, first_input, gather_channels, numpy_shape};
use crate::layer::view::{positive_axis, view_axis_of};
use crate::shaders::Shader;
use crate::tensor::{GpuMat, Mat, Strided};

/// Concat: `0=axis`.
#[derive(Default)]
pub struct Concat {
    axis: i32,
    /// pack1 and pack4 buffer pipelines (pack8 inputs go through pack4).
    gpu: Option<PackPipelines>,
    /// The pack1 strided copy for an axis that is none of the 3-D view's (a 4-D blob's h
    /// between slabs).
    copy: Option<StridedCopy>,
}

impl Layer for Concat {
    fn support(&self) -> Support {
        Support {
            vulkan_same_packing: true,
            ..Support::MANY
                .gpu(self.gpu.is_some())
                .packs(Packs::UP_TO_4)
                .gpu_4d()
        }
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        // buffer shaders only: image nets concatenate on the CPU
        self.gpu = match gpu {
            Some(gpu) => Some(PackPipelines::create(
                gpu,
                &[
                    (1, Shader::Concat.module()),
                    (4, Shader::ConcatPack4.module()),
                ],
                &[],
            )?),
            _ => None,
        };
        self.copy = StridedCopy::when(gpu, CopyMode::Copy)?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[(u8, [usize; 4])]) -> bool {
        let Some(&(dims, _)) = bottoms.first() else {
            return false;
        };
        bottoms.iter().all(|&(d, _)| d == dims) && positive_axis(self.axis, dims.into()).is_ok()
    }

    fn gpu_packs(&self, bottoms: &[(u8, [usize; 4])]) -> Option<Packs> {
        let &(dims, shape) = bottoms.first()?;
        let axis = positive_axis(self.axis, dims.into()).ok()?;
        concat_axis(dims, shape, axis)
            .is_none()
            .then_some(Packs::ONE)
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let pipelines = self.gpu.ready()?;
        let first = first_input(bottoms)?;
        let dims = first.dims;
        let axis = positive_axis(self.axis, usize::from(dims))?;
        let Some(at) = concat_axis(dims, first.shape(), axis) else {
            return Ok(vec![self.copy_along(rec, bottoms, axis)?]);
        };
        let ctx = rec.context();
        // the net gives every input one packing (vulkan_same_packing)
        let pack = first.elempack;
        let view = |m: &GpuMat| [m.w, m.h, m.c];
        let mut out = view(&bottoms[0]);
        out[at] = 0;
        for m in bottoms {
            let v = view(m);
            // 4-D slabs of one height (a concat along d appends the view's rows)
            let slabs_differ = dims == 4 && m.space()[1] != first.space()[1];
            if (0..3).any(|i| i != at && v[i] != out[i]) || m.dims != dims || slabs_differ {
                return Err(InputError::Mismatch {
                    a: first.shape().to_vec(),
                    b: m.shape().to_vec(),
                    why: "differ off the concat axis",
                }
                .into());
            }
            out[at] += v[at];
        }
        let slab = if dims == 4 { first.space()[1] } else { out[1] };
        let space = [out[0], slab, out[1] / slab.max(1), out[2]];
        let top = GpuMat::alloc_space(ctx, dims, space, pack, bottoms[0].options);
        let mut offset = 0;
        for m in bottoms {
            let pipeline = pipelines.for_mat(m)?.clone();
            let mut offsets = [0u32; 3];
            offsets[at] = offset as u32;
            let mut words = m.shape_words().to_vec();
            words.extend([top.w as u32, top.cstep as u32]);
            words.extend(offsets);
            rec.dispatch(&pipeline, &[m, &top], &words, m.grid())?;
            offset += view(m)[at];
        }
        Ok(vec![top])
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.axis = pd.int(0, 0);
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let first = first_input(bottoms)?;
        let e0 = first.numpy_shape();
        let axis = positive_axis(self.axis, e0.len())?;
        let mut total = 0;
        for b in bottoms {
            let e = b.numpy_shape();
            let same_rest = e.len() == e0.len() && (0..e.len()).all(|i| i == axis || e[i] == e0[i]);
            if !same_rest {
                return Err(InputError::Mismatch {
                    a: e0.to_vec(),
                    b: e.to_vec(),
                    why: "differ off the concat axis",
                }
                .into());
            }
            total += e[axis];
        }
        if axis == 0 && first.dims >= 3 {
            // channel q of the output: input i's channel q - starts[i]
            let inputs: Vec<_> = bottoms.iter().map(channel_planes).collect();
            let mut starts = Vec::with_capacity(bottoms.len());
            let mut at = 0;
            for b in bottoms {
                starts.push(at);
                at += b.numpy_shape()[0];
            }
            let pick = |q: usize| {
                let i = starts.partition_point(|&s| s <= q) - 1;
                (i, q - starts[i])
            };
            return Ok(vec![gather_channels(first, total, &inputs, pick)?]);
        }
        let outer: usize = e0[..axis].iter().product();
        let inner: usize = e0[axis + 1..].iter().product();
        let parts: Vec<(Vec<f32>, usize)> = bottoms
            .iter()
            .map(|b| (b.to_values(), b.numpy_shape()[axis]))
            .collect();
        let mut out = Vec::with_capacity(outer * total * inner);
        for o in 0..outer {
            for (v, n) in &parts {
                out.extend_from_slice(&v[o * n * inner..(o + 1) * n * inner]);
            }
        }
        let mut e = e0;
        e[axis] = total;
        Ok(vec![Mat::from_numpy(&e, &out)?])
    }
}

impl Concat {
    /// The concat along numpy `axis` as one strided copy per input into its place (pack1).
    fn copy_along(
        &self,
        rec: &mut Recorder<'_>,
        bottoms: &[GpuMat],
        axis: usize,
    ) -> Result<GpuMat> {
        let copy = self.copy.ready()?;
        let shapes: Vec<Vec<usize>> = bottoms
            .iter()
            .map(|m| numpy_shape(m.dims, m.shape()))
            .collect();
        let mut out = shapes[0].clone();
        out[axis] = 0;
        for s in &shapes {
            if s.len() != out.len() || (0..s.len()).any(|i| i != axis && s[i] != out[i]) {
                return Err(InputError::Mismatch {
                    a: shapes[0].clone(),
                    b: s.clone(),
                    why: "differ off the concat axis",
                }
                .into());
            }
            out[axis] += s[axis];
        }
        let top = alloc_numpy(rec, &out, &bottoms[0])?;
        let whole = Strided::contiguous(&out);
        let mut start = 0;
        for (m, s) in bottoms.iter().zip(&shapes) {
            let to = whole.clone().narrow(axis, start, s[axis]);
            let from = Strided::contiguous(s);
            copy.record(rec, (m, &from), (&top, &to), CopyExtras::default())?;
            start += s[axis];
        }
        Ok(top)
    }
}

/// The view axis a concat along numpy axis `axis` appends to: [`view_axis_of`], and a 4-D
/// blob's d, whose slabs of one height append the view's rows.
fn concat_axis(dims: u8, shape: [usize; 4], axis: usize) -> Option<usize> {
    match (dims, axis) {
        (4, 1) => Some(1),
        _ => view_axis_of(dims, shape, axis),
    }
}
