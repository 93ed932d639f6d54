//! What BatchNorm, Scale, Bias and PReLU share: `x * a[ch] + b[ch]` (or PReLU's
//! `x < 0 ? x * a[ch] : x`) per channel (w for 1-D, h for 2-D, c otherwise), on the CPU and
//! through the `channel_affine` shaders.

use crate::layer::shared::pipelines::{DeviceSide, PackPipelines};

use crate::error::{InputError, Result};
use crate::gpu::specialize::SpecValue;
use crate::gpu::{DeviceBuffer, Recorder, Resource};
use crate::layer::contract::{GpuSetup, Support};
use crate::layer::shared::grain::GRAIN;
use crate::layer::shared::kernels;
use crate::shaders::Shader;
use crate::tensor::{GpuMat, Mat};
use rayon::prelude::*;

/// The device side of a per-channel affine layer (BatchNorm, Scale, Bias) or of PReLU:
/// pipelines per packing and the coefficients, fp32, uploaded once.
pub(crate) struct AffineGpu {
    pipelines: PackPipelines,
    coefs: Option<(DeviceBuffer, DeviceBuffer)>,
}

impl AffineGpu {
    /// Affine pipelines; `None` without a device.
    pub(crate) fn create(gpu: Option<GpuSetup<'_>>) -> Result<Option<Self>> {
        Self::with_mode(gpu, 0)
    }

    /// PReLU pipelines (`x < 0 ? x * a[ch] : x`); `None` without a device.
    pub(crate) fn create_prelu(gpu: Option<GpuSetup<'_>>) -> Result<Option<Self>> {
        Self::with_mode(gpu, 1)
    }

    fn with_mode(gpu: Option<GpuSetup<'_>>, mode: i32) -> Result<Option<Self>> {
        let Some(gpu) = gpu else {
            return Ok(None);
        };
        let pipelines = PackPipelines::create(
            gpu,
            &[
                (1, Shader::ChannelAffine.module()),
                (4, Shader::ChannelAffinePack4.module()),
                (8, Shader::ChannelAffinePack8.module()),
            ],
            &[(0, SpecValue::I32(mode))],
        )?;
        Ok(Some(AffineGpu {
            pipelines,
            coefs: None,
        }))
    }

    /// Uploads `a` and `b` (zeros where `b` is empty).
    pub(crate) fn upload(&mut self, gpu: GpuSetup<'_>, a: &[f32], b: &[f32]) -> Result<()> {
        let zeros;
        let b = if b.is_empty() {
            zeros = vec![0.0f32; a.len()];
            &zeros
        } else {
            b
        };
        let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        self.coefs = Some((gpu.ctx.upload(&bytes(a))?, gpu.ctx.upload(&bytes(b))?));
        Ok(())
    }

    /// Records `blob = blob * a[ch] + b[ch]` in place.
    pub(crate) fn record(&self, rec: &mut Recorder<'_>, blob: &GpuMat) -> Result<()> {
        let (a, b) = self.coefs.ready()?;
        let channels = blob.c * blob.elempack;
        if a.size() < (channels * 4) as u64 {
            return Err(InputError::Values {
                what: "channels of input",
                got: channels,
                expected: (a.size() / 4) as usize,
            }
            .into());
        }
        let pipeline = self.pipelines.for_mat(blob)?.clone();
        let resources = [blob.resource(), Resource::from(a), Resource::from(b)];
        rec.dispatch(&pipeline, &resources, &blob.shape_words(), blob.grid())
    }
}

/// `upload_model` of the affine layers: the coefficients up where there is a device side.
pub(crate) fn upload_affine(
    slot: &mut Option<AffineGpu>,
    gpu: GpuSetup<'_>,
    a: &[f32],
    b: &[f32],
) -> Result<()> {
    if let Some(g) = slot {
        g.upload(gpu, a, b)?;
    }
    Ok(())
}

/// `y = x * scale[ch] + bias[ch]` over the channel axis, in place.
pub(crate) fn per_channel(blob: &mut Mat, scale: &[f32], bias: &[f32]) -> Result<()> {
    map_channels(blob, scale, bias, |x, a, b| x.mul_add(a, b))
}

/// `y = f(x, a[ch], b[ch])` over the channel axis (`b` may be empty: zeros), in place.
pub(crate) fn map_channels(
    blob: &mut Mat,
    scale: &[f32],
    bias: &[f32],
    f: impl Fn(f32, f32, f32) -> f32 + Sync,
) -> Result<()> {
    let e = blob.numpy_shape();
    let channels = e[0];
    if scale.len() != channels || (!bias.is_empty() && bias.len() != channels) {
        return Err(InputError::Values {
            what: "channels of input",
            got: channels,
            expected: scale.len(),
        }
        .into());
    }
    let inner: usize = e[1..].iter().product();
    // fp32 pack1 (what the net gives a CPU layer): in place, channels in parallel, as many per
    // task as make a grain (one thread walked a copy of every value and copied it back)
    let step = if blob.dims >= 3 { blob.cstep } else { inner };
    if blob.elempack == 1
        && inner > 0
        && step >= inner
        && let Ok(v) = blob.f32_mut()
    {
        let per = (GRAIN / inner).max(1);
        v.par_chunks_mut(step * per)
            .enumerate()
            .for_each(|(g, planes)| {
                for (i, plane) in planes.chunks_mut(step).enumerate() {
                    let ch = g * per + i;
                    if ch < channels && plane.len() >= inner {
                        let (a, b) = (scale[ch], bias.get(ch).copied().unwrap_or(0.0));
                        kernels::map(&mut plane[..inner], |x| f(x, a, b));
                    }
                }
            });
        return Ok(());
    }
    // a packed fp32 map as it comes (any_packing): each block's lanes their own channels'
    // coefficients, blocks in parallel, in place
    let p = blob.elempack;
    if p > 1 && blob.dims >= 3 && inner > 0 && blob.cstep >= inner {
        let block = blob.cstep * p;
        if let Ok(v) = blob.f32_mut() {
            v.par_chunks_mut(block)
                .with_min_len((GRAIN / (inner * p)).max(1))
                .enumerate()
                .for_each(|(q, values)| {
                    let a = &scale[q * p..(q + 1) * p];
                    let zeros = [0.0f32; 16];
                    let b = bias.get(q * p..(q + 1) * p).unwrap_or(&zeros[..p]);
                    for px in values[..inner * p].chunks_exact_mut(p) {
                        for ((x, a), b) in px.iter_mut().zip(a).zip(b) {
                            *x = f(*x, *a, *b);
                        }
                    }
                });
            return Ok(());
        }
    }
    let mut v = blob.to_values();
    for (ch, chunk) in v.chunks_mut(inner.max(1)).enumerate() {
        let b = bias.get(ch).copied().unwrap_or(0.0);
        chunk.iter_mut().for_each(|x| *x = f(*x, scale[ch], b));
    }
    *blob = Mat::from_numpy(&e, &v)?;
    Ok(())
}

/// Support of BatchNorm and Scale: in place, any GPU packing when there is a device side, and
/// CPU blobs in the packing they come in.
pub(crate) fn affine_support(gpu: bool) -> Support {
    Support {
        packing: true,
        any_packing: true,
        ..Support::ONE_BLOB_INPLACE.gpu(gpu).gpu_4d()
    }
}
