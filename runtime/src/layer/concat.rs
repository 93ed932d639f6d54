//! Concat: `0=axis`. Inputs agreeing on every other axis, joined along it.

use crate::error::{InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Packs, Support};
use crate::layer::params::ParamDict;
use crate::layer::pipelines::{DeviceSide, PackPipelines};
use crate::layer::run_options::RunOptions;
use crate::layer::view::{channel_planes, first_input, gather_channels};
use crate::layer::view::{positive_axis, view_axis};
use crate::shaders::Shader;
use crate::tensor::{GpuMat, Mat};

/// Concat: `0=axis`.
#[derive(Default)]
pub struct Concat {
    axis: i32,
    /// pack1 and pack4 buffer pipelines (pack8 inputs go through pack4).
    gpu: Option<PackPipelines>,
}

impl Layer for Concat {
    fn support(&self) -> Support {
        Support {
            vulkan_same_packing: true,
            ..Support::MANY.gpu(self.gpu.is_some()).packs(Packs::UP_TO_4)
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
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[(u8, [usize; 4])]) -> bool {
        let Some((dims, _)) = bottoms.first() else {
            return false;
        };
        bottoms.iter().all(|(d, _)| d == dims)
            && positive_axis(self.axis, usize::from(*dims))
                .is_ok_and(|a| view_axis(*dims, a).is_some())
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let pipelines = self.gpu.ready()?;
        let first = first_input(bottoms)?;
        let dims = first.dims;
        let at = positive_axis(self.axis, usize::from(dims))
            .ok()
            .and_then(|a| view_axis(dims, a))
            .ok_or(InputError::Axis {
                axis: self.axis,
                dims: dims.into(),
            })?;
        let ctx = rec.context();
        // the net gives every input one packing (vulkan_same_packing)
        let pack = first.elempack;
        let view = |m: &GpuMat| [m.w, m.h, m.c];
        let mut out = view(&bottoms[0]);
        out[at] = 0;
        for m in bottoms {
            let v = view(m);
            if (0..3).any(|i| i != at && v[i] != out[i]) || m.dims != dims {
                return Err(InputError::Mismatch {
                    a: first.shape().to_vec(),
                    b: m.shape().to_vec(),
                    why: "differ off the concat axis",
                }
                .into());
            }
            out[at] += v[at];
        }
        let top = GpuMat::alloc(ctx, dims, out, pack, bottoms[0].options);
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
