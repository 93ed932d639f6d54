//! Layers along an axis (in ncnn's order: `c, d, h, w` of the dims the mat has): Softmax,
//! Concat, BatchNorm and Scale (per "channel": w for 1-D, h for 2-D, c otherwise).

use crate::error::{Error, Result};
use crate::gpu::specialize::SpecValue;
use crate::gpu::{DeviceBuffer, Recorder, Resource};
use crate::layer::contract::{GpuSetup, Implements, Layer, Support};
use rayon::prelude::*;

use crate::layer::gpu_util::{PackPipelines, no_device, pack8_as_pack4, view_axis};
use crate::layer::kernels;
use crate::layer::option::Option;
use crate::layer::params::ParamDict;
use crate::layer::weights::Weights;
use crate::shaders::Shader;
use crate::tensor::{GpuMat, Mat};

/// Extents outermost first (`[w]`, `[h, w]`, `[c, h, w]`, `[c, d, h, w]`).
fn extents(m: &Mat) -> Vec<usize> {
    let [w, h, d, c] = m.shape();
    match m.dims {
        1 => vec![w],
        2 => vec![h, w],
        3 => vec![c, h, w],
        _ => vec![c, d, h, w],
    }
}

fn from_extents(e: &[usize], values: &[f32]) -> Result<Mat> {
    let (dims, shape) = match e {
        [w] => (1, [*w, 1, 1, 1]),
        [h, w] => (2, [*w, *h, 1, 1]),
        [c, h, w] => (3, [*w, *h, 1, *c]),
        [c, d, h, w] => (4, [*w, *h, *d, *c]),
        _ => return Err(Error::Shape(format!("{} dims", e.len()))),
    };
    Mat::from_shape_values(dims, shape, values)
}

fn positive_axis(axis: i32, dims: usize) -> Result<usize> {
    let a = if axis < 0 { axis + dims as i32 } else { axis };
    if (0..dims as i32).contains(&a) {
        Ok(a as usize)
    } else {
        Err(Error::Shape(format!("axis {axis} of a {dims}-D blob")))
    }
}

/// Softmax over the `n` rows of an `n × inner` block (rows `stride` values apart), along the
/// rows (each column is one line). Passes run along rows, so that they vectorize.
fn softmax_block(block: &mut [f32], n: usize, inner: usize, stride: usize) {
    if inner == 1 && stride == 1 {
        let block = &mut block[..n];
        let m = kernels::max(block);
        kernels::map(block, |x| kernels::exp(x - m));
        let inv = 1.0 / kernels::sum(block);
        kernels::map(block, |x| x * inv);
        return;
    }
    // tiles of COLUMNS columns × all rows, split across threads: each tile's three passes
    // (max, exp and sum, scale) run over data its core has just read (256 rows of 256 columns
    // stay in L2), so memory sees one read and one write per value
    const COLUMNS: usize = 256;
    let mut tiles: Vec<Vec<&mut [f32]>> = (0..inner.div_ceil(COLUMNS))
        .map(|_| Vec::with_capacity(n))
        .collect();
    for row in block.chunks_mut(stride).take(n) {
        for (tile, piece) in tiles.iter_mut().zip(row[..inner].chunks_mut(COLUMNS)) {
            tile.push(piece);
        }
    }
    tiles.into_par_iter().for_each(|mut rows| {
        let width = rows.first().map_or(0, |r| r.len());
        let mut max = vec![f32::NEG_INFINITY; width];
        for r in &rows {
            kernels::zip_with(&mut max, r, f32::max);
        }
        let mut sum = vec![0.0f32; width];
        for r in rows.iter_mut() {
            kernels::zip_with(r, &max, |x, m| kernels::exp(x - m));
            kernels::zip_with(&mut sum, r, |a, b| a + b);
        }
        kernels::map(&mut sum, |s| 1.0 / s);
        for r in rows.iter_mut() {
            kernels::zip_with(r, &sum, |x, s| x * s);
        }
    });
}

/// Softmax: `0=axis`.
#[derive(Default)]
pub struct Softmax {
    axis: i32,
    /// pack1 and pack4 buffer pipelines per axis of the 3-D view (pack8 goes through pack4),
    /// and for c when it is the only line (the shader's `axis` 3).
    gpu: core::option::Option<[PackPipelines; 4]>,
}

impl Layer for Softmax {
    fn support(&self) -> Support {
        Support {
            vulkan: self.gpu.is_some(),
            vulkan_packing: true,
            ..Support::ONE_BLOB_INPLACE
        }
    }

    fn implements(&self) -> Implements {
        Implements {
            forward_inplace: true,
            forward_gpu_inplace: true,
            ..Implements::default()
        }
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.axis = pd.int(0, 0);
        Ok(())
    }

    fn create_pipeline(
        &mut self,
        _opt: &Option,
        gpu: core::option::Option<GpuSetup<'_>>,
    ) -> Result<()> {
        self.gpu = match gpu {
            Some(gpu) if !gpu.options.contains(crate::Opt::Image) => {
                let along = |axis: i32| {
                    PackPipelines::create(
                        gpu,
                        &[
                            (1, Shader::Softmax.module()),
                            (4, Shader::SoftmaxPack4.module()),
                        ],
                        &[(0, SpecValue::I32(axis))],
                    )
                };
                Some([along(0)?, along(1)?, along(2)?, along(3)?])
            }
            _ => None,
        };
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[(u8, [usize; 4])]) -> bool {
        bottoms.iter().all(|(dims, _)| {
            positive_axis(self.axis, usize::from(*dims))
                .is_ok_and(|a| view_axis(*dims, a).is_some())
        })
    }

    fn forward_gpu_inplace(
        &self,
        blob: &mut GpuMat,
        rec: &mut Recorder<'_>,
        _opt: &Option,
    ) -> Result<()> {
        let pipelines = self.gpu.as_ref().ok_or_else(|| no_device("Softmax"))?;
        let along = positive_axis(self.axis, usize::from(blob.dims))
            .ok()
            .and_then(|a| view_axis(blob.dims, a))
            .ok_or_else(|| Error::Shape(format!("Softmax axis {} on the GPU", self.axis)))?;
        *blob = pack8_as_pack4(rec, blob)?;
        let [w, h, c] = blob.grid();
        // along c with a single line, the whole workgroup takes it
        let along = if along == 2 && w == 1 && h == 1 {
            3
        } else {
            along
        };
        let pipeline = pipelines[along].for_mat(blob)?.clone();
        // the shader's 256 invocations per row along w or the single line; one per line
        // otherwise
        let grid = match along {
            0 => [256, h, c],
            1 => [w, 1, c],
            2 => [w, h, 1],
            _ => [256, 1, 1],
        };
        rec.dispatch(&pipeline, &[&*blob], &blob.shape_words(), grid)
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &Option) -> Result<()> {
        let e = extents(blob);
        let axis = positive_axis(self.axis, e.len())?;
        let (outer, n, inner): (usize, usize, usize) = (
            e[..axis].iter().product(),
            e[axis],
            e[axis + 1..].iter().product(),
        );
        if n == 0 || inner == 0 {
            return Ok(());
        }
        let (dims, cstep) = (blob.dims, blob.cstep);
        let Ok(data) = blob.f32_mut() else {
            // the net hands this layer fp32 pack1 mats; anything else goes through values
            let mut v = blob.to_values();
            v.par_chunks_mut(n * inner)
                .for_each(|block| softmax_block(block, n, inner, inner));
            *blob = from_extents(&e, &v)?;
            return Ok(());
        };
        // in the storage itself: channels of 3-D and 4-D blobs lie `cstep` apart
        if dims >= 3 && axis == 0 {
            softmax_block(data, n, inner, cstep);
        } else if dims >= 3 {
            let plane: usize = e[1..].iter().product();
            data.par_chunks_mut(cstep).for_each(|ch| {
                ch[..plane]
                    .chunks_mut(n * inner)
                    .for_each(|block| softmax_block(block, n, inner, inner))
            });
        } else {
            data[..outer * n * inner]
                .par_chunks_mut(n * inner)
                .for_each(|block| softmax_block(block, n, inner, inner));
        }
        Ok(())
    }
}

/// Concat: `0=axis`.
#[derive(Default)]
pub struct Concat {
    axis: i32,
    /// pack1 and pack4 buffer pipelines (pack8 inputs go through pack4).
    gpu: core::option::Option<PackPipelines>,
}

impl Layer for Concat {
    fn support(&self) -> Support {
        Support {
            vulkan: self.gpu.is_some(),
            vulkan_packing: true,
            ..Support::default()
        }
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD_MANY_CPU_GPU
    }

    fn create_pipeline(
        &mut self,
        _opt: &Option,
        gpu: core::option::Option<GpuSetup<'_>>,
    ) -> Result<()> {
        // buffer shaders only: image nets concatenate on the CPU
        self.gpu = match gpu {
            Some(gpu) if !gpu.options.contains(crate::Opt::Image) => Some(PackPipelines::create(
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

    fn forward_gpu_many(
        &self,
        bottoms: &[GpuMat],
        rec: &mut Recorder<'_>,
        _opt: &Option,
    ) -> Result<Vec<GpuMat>> {
        let pipelines = self.gpu.as_ref().ok_or_else(|| no_device("Concat"))?;
        let first = bottoms
            .first()
            .ok_or_else(|| Error::Shape("Concat needs inputs".into()))?;
        let dims = first.dims;
        let at = positive_axis(self.axis, usize::from(dims))
            .ok()
            .and_then(|a| view_axis(dims, a))
            .ok_or_else(|| Error::Shape(format!("Concat axis {} on the GPU", self.axis)))?;
        let ctx = rec.context();
        // one packing for all: theirs when they agree (pack8 as pack4), else pack1
        let same = bottoms.iter().all(|b| b.elempack == first.elempack);
        let pack = match first.elempack {
            8 if same => 4,
            p if same => p,
            _ => 1,
        };
        let parts = bottoms
            .iter()
            .map(|b| ctx.record_packing(rec, b, pack))
            .collect::<Result<Vec<_>>>()?;
        let view = |m: &GpuMat| [m.w, m.h, m.c];
        let mut out = view(&parts[0]);
        out[at] = 0;
        for m in &parts {
            let v = view(m);
            if (0..3).any(|i| i != at && v[i] != out[i]) || m.dims != dims {
                return Err(Error::Shape(format!(
                    "Concat on the GPU: {:?} does not fit {:?} along axis {}",
                    m.shape(),
                    first.shape(),
                    self.axis
                )));
            }
            out[at] += v[at];
        }
        let top = ctx.alloc_mat(dims, out, pack, parts[0].options);
        let mut offset = 0;
        for m in &parts {
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

    fn forward_many(&self, bottoms: &[Mat], _opt: &Option) -> Result<Vec<Mat>> {
        let first = bottoms
            .first()
            .ok_or_else(|| Error::Shape("Concat needs inputs".into()))?;
        let e0 = extents(first);
        let axis = positive_axis(self.axis, e0.len())?;
        let mut total = 0;
        for b in bottoms {
            let e = extents(b);
            let same_rest = e.len() == e0.len() && (0..e.len()).all(|i| i == axis || e[i] == e0[i]);
            if !same_rest {
                return Err(Error::Shape(format!(
                    "Concat on axis {axis}: {e:?} does not fit {e0:?}"
                )));
            }
            total += e[axis];
        }
        let outer: usize = e0[..axis].iter().product();
        let inner: usize = e0[axis + 1..].iter().product();
        let parts: Vec<(Vec<f32>, usize)> = bottoms
            .iter()
            .map(|b| (b.to_values(), extents(b)[axis]))
            .collect();
        let mut out = Vec::with_capacity(outer * total * inner);
        for o in 0..outer {
            for (v, n) in &parts {
                out.extend_from_slice(&v[o * n * inner..(o + 1) * n * inner]);
            }
        }
        let mut e = e0;
        e[axis] = total;
        Ok(vec![from_extents(&e, &out)?])
    }
}

/// The device side of a per-channel affine layer (BatchNorm, Scale): pipelines per packing
/// and the coefficients, fp32, uploaded once.
struct AffineGpu {
    pipelines: PackPipelines,
    coefs: core::option::Option<(DeviceBuffer, DeviceBuffer)>,
}

impl AffineGpu {
    /// Pipelines for buffer nets; `None` for image nets, which run these on the CPU.
    fn create(gpu: core::option::Option<GpuSetup<'_>>) -> Result<core::option::Option<Self>> {
        let Some(gpu) = gpu.filter(|g| !g.options.contains(crate::Opt::Image)) else {
            return Ok(None);
        };
        let pipelines = PackPipelines::create(
            gpu,
            &[
                (1, Shader::ChannelAffine.module()),
                (4, Shader::ChannelAffinePack4.module()),
                (8, Shader::ChannelAffinePack8.module()),
            ],
            &[],
        )?;
        Ok(Some(AffineGpu {
            pipelines,
            coefs: None,
        }))
    }

    /// Uploads `a` and `b` (zeros where `b` is empty).
    fn upload(&mut self, gpu: GpuSetup<'_>, a: &[f32], b: &[f32]) {
        let zeros;
        let b = if b.is_empty() {
            zeros = vec![0.0f32; a.len()];
            &zeros
        } else {
            b
        };
        let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        self.coefs = Some((gpu.ctx.upload(&bytes(a)), gpu.ctx.upload(&bytes(b))));
    }

    /// Records `blob = blob * a[ch] + b[ch]` in place.
    fn record(&self, rec: &mut Recorder<'_>, blob: &GpuMat, kind: &str) -> Result<()> {
        let (a, b) = self.coefs.as_ref().ok_or_else(|| no_device(kind))?;
        let channels = blob.c * blob.elempack;
        if a.size() < (channels * 4) as u64 {
            return Err(Error::Shape(format!(
                "{kind} has {} per-channel values for {channels} channels",
                a.size() / 4
            )));
        }
        let pipeline = self.pipelines.for_mat(blob)?.clone();
        let resources = [blob.resource(), Resource::from(a), Resource::from(b)];
        rec.dispatch(&pipeline, &resources, &blob.shape_words(), blob.grid())
    }
}

/// `y = x * scale[ch] + bias[ch]` over the channel axis, in place.
fn per_channel(blob: &mut Mat, scale: &[f32], bias: &[f32]) -> Result<()> {
    let e = extents(blob);
    let channels = e[0];
    if scale.len() != channels || (!bias.is_empty() && bias.len() != channels) {
        return Err(Error::Shape(format!(
            "{} per-channel values for {channels} channels",
            scale.len()
        )));
    }
    let inner: usize = e[1..].iter().product();
    let mut v = blob.to_values();
    for (ch, chunk) in v.chunks_mut(inner.max(1)).enumerate() {
        let b = bias.get(ch).copied().unwrap_or(0.0);
        chunk.iter_mut().for_each(|x| *x = *x * scale[ch] + b);
    }
    *blob = from_extents(&e, &v)?;
    Ok(())
}

/// BatchNorm: `0=channels 1=eps`; weights slope, mean, var, bias.
#[derive(Default)]
pub struct BatchNorm {
    channels: usize,
    eps: f32,
    a: Vec<f32>,
    b: Vec<f32>,
    gpu: core::option::Option<AffineGpu>,
}

/// Support of BatchNorm and Scale: in place, any GPU packing when there is a device side.
fn affine_support(gpu: bool) -> Support {
    Support {
        vulkan: gpu,
        vulkan_packing: true,
        ..Support::ONE_BLOB_INPLACE
    }
}

impl Layer for BatchNorm {
    fn support(&self) -> Support {
        affine_support(self.gpu.is_some())
    }

    fn implements(&self) -> Implements {
        Implements {
            forward_inplace: true,
            forward_gpu_inplace: true,
            ..Implements::default()
        }
    }

    fn create_pipeline(
        &mut self,
        _opt: &Option,
        gpu: core::option::Option<GpuSetup<'_>>,
    ) -> Result<()> {
        self.gpu = AffineGpu::create(gpu)?;
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &Option) -> Result<()> {
        if let Some(g) = &mut self.gpu {
            g.upload(gpu, &self.a, &self.b);
        }
        Ok(())
    }

    fn forward_gpu_inplace(
        &self,
        blob: &mut GpuMat,
        rec: &mut Recorder<'_>,
        _opt: &Option,
    ) -> Result<()> {
        let gpu = self.gpu.as_ref().ok_or_else(|| no_device("BatchNorm"))?;
        gpu.record(rec, blob, "BatchNorm")
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.channels = pd.int(0, 0).max(0) as usize;
        self.eps = pd.float(1, 0.0);
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        let n = self.channels;
        let slope = weights.load(n, 1)?;
        let mean = weights.load(n, 1)?;
        let var = weights.load(n, 1)?;
        let bias = weights.load(n, 1)?;
        // y = (x - mean) / sqrt(var + eps) * slope + bias, folded into x * a + b
        self.a = (0..n)
            .map(|i| slope[i] / (var[i] + self.eps).sqrt())
            .collect();
        self.b = (0..n).map(|i| bias[i] - mean[i] * self.a[i]).collect();
        Ok(())
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &Option) -> Result<()> {
        per_channel(blob, &self.a, &self.b)
    }
}

/// Scale: `0=scale_data_size 1=bias_term`; with `0=-233` the scale is a second input.
#[derive(Default)]
pub struct Scale {
    size: i32,
    bias_term: bool,
    scale: Vec<f32>,
    bias: Vec<f32>,
    gpu: core::option::Option<AffineGpu>,
}

impl Layer for Scale {
    fn support(&self) -> Support {
        Support {
            one_blob_only: self.size != -233,
            ..affine_support(self.gpu.is_some())
        }
    }

    fn implements(&self) -> Implements {
        Implements {
            forward_inplace: true,
            forward_many_inplace: true,
            forward_gpu_inplace: true,
            ..Implements::default()
        }
    }

    fn create_pipeline(
        &mut self,
        _opt: &Option,
        gpu: core::option::Option<GpuSetup<'_>>,
    ) -> Result<()> {
        // a scale given as a second blob stays on the CPU
        self.gpu = if self.size == -233 {
            None
        } else {
            AffineGpu::create(gpu)?
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &Option) -> Result<()> {
        if let Some(g) = &mut self.gpu {
            g.upload(gpu, &self.scale, &self.bias);
        }
        Ok(())
    }

    fn forward_gpu_inplace(
        &self,
        blob: &mut GpuMat,
        rec: &mut Recorder<'_>,
        _opt: &Option,
    ) -> Result<()> {
        let gpu = self.gpu.as_ref().ok_or_else(|| no_device("Scale"))?;
        gpu.record(rec, blob, "Scale")
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.size = pd.int(0, 0);
        self.bias_term = pd.int(1, 0) != 0;
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        if self.size != -233 {
            self.scale = weights.load(self.size.max(0) as usize, 1)?;
        }
        if self.bias_term {
            let n = if self.size == -233 {
                0
            } else {
                self.size.max(0) as usize
            };
            self.bias = weights.load(n, 1)?;
        }
        Ok(())
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &Option) -> Result<()> {
        per_channel(blob, &self.scale, &self.bias)
    }

    fn forward_many_inplace(&self, blobs: &mut [Mat], _opt: &Option) -> Result<()> {
        let [blob, scale] = blobs else {
            return Err(Error::Shape("Scale with -233 takes 2 inputs".into()));
        };
        let s = scale.to_values();
        per_channel(blob, &s, &self.bias)
    }
}
