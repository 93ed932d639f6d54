//! What GPU layers share: pipelines per packing, checked against the mats they run on.

use std::sync::Arc;

use crate::Opt;
use crate::error::{Error, Result};
use crate::gpu::specialize::{SpecValue, Specialization};
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::GpuSetup;
use crate::meta::ShaderModule;
use crate::tensor::{GpuData, GpuMat, StorageFormat};

/// A layer's pipelines for elempack 1, 4 and 8 (`None` where it has no shader), and the flat
/// one for buffer mats of one layout, any packing (`shaders/include/flat.comp`).
#[derive(Default)]
pub struct PackPipelines {
    by_pack: [core::option::Option<Arc<Pipeline>>; 3],
    /// Flat pipelines by the storage format they read (fp16 packed keeps pack1 mats in fp32).
    flat: Vec<Arc<Pipeline>>,
}

/// The index of `elempack` (1, 4, 8) in per-packing arrays.
pub(crate) fn slot(elempack: usize) -> usize {
    match elempack {
        1 => 0,
        4 => 1,
        _ => 2,
    }
}

impl PackPipelines {
    /// Pipelines for each `(elempack, module)` given, with the same specialization values.
    pub fn create(
        gpu: GpuSetup<'_>,
        modules: &[(usize, &'static ShaderModule)],
        values: &[(u32, SpecValue)],
    ) -> Result<Self> {
        let spec = Specialization {
            values: values.to_vec(),
            local_size: None,
        };
        let mut out = PackPipelines::default();
        for (pack, module) in modules {
            out.by_pack[slot(*pack)] = Some(gpu.ctx.pipeline(module, gpu.options, &spec)?);
        }
        Ok(out)
    }

    /// Adds the flat pipeline of `module` (same specialization values plus `extra`); image
    /// mats have none.
    pub fn with_flat(
        mut self,
        gpu: GpuSetup<'_>,
        module: &'static ShaderModule,
        values: &[(u32, SpecValue)],
    ) -> Result<Self> {
        if gpu.options.contains(Opt::Image) {
            return Ok(self);
        }
        let spec = Specialization {
            values: values.to_vec(),
            local_size: None,
        };
        let mut variants = vec![gpu.options];
        if StorageFormat::of(gpu.options, 1) != StorageFormat::of(gpu.options, 8) {
            variants.push(
                gpu.options
                    .without(Opt::Fp16Packed)
                    .without(Opt::Fp16Arithmetic),
            );
        }
        for options in variants {
            self.flat.push(gpu.ctx.pipeline(module, options, &spec)?);
        }
        Ok(self)
    }

    /// The flat pipeline, when `mats` are buffers of its storage format (that of packed data:
    /// 16-bit with fp16 packed or storage), one byte size, a whole number of flat elements.
    pub fn flat_for(&self, mats: &[&GpuMat]) -> core::option::Option<&Arc<Pipeline>> {
        let first = mats.first()?;
        let size = first.buffer()?.size();
        let fits =
            |m: &&GpuMat| m.buffer().is_some_and(|b| b.size() == size) && m.format == first.format;
        if !size.is_multiple_of(FLAT_BYTES) || !mats.iter().all(fits) {
            return None;
        }
        self.flat
            .iter()
            .find(|p| StorageFormat::of(p.options, 8) == first.format)
    }

    /// The pipeline for `m`'s packing, checked to read and write `m`'s storage layout.
    pub fn for_mat(&self, m: &GpuMat) -> Result<&Arc<Pipeline>> {
        let p = self.by_pack[slot(m.elempack)]
            .as_ref()
            .ok_or_else(|| Error::Shape(format!("no shader for elempack {}", m.elempack)))?;
        let image = matches!(m.data, GpuData::Image { .. });
        if StorageFormat::of(p.options, m.elempack) != m.format
            || p.options.contains(Opt::Image) != image
        {
            return Err(Error::Shape(format!(
                "`{}` variant {} does not store {:?} {} mats",
                p.shader,
                p.options.name(),
                m.format,
                if image { "image" } else { "buffer" }
            )));
        }
        Ok(p)
    }

    /// Whether a shader exists for `elempack`.
    pub fn has(&self, elempack: usize) -> bool {
        self.by_pack[slot(elempack)].is_some()
    }
}

/// The error of a GPU forward whose `create_pipeline` had no device.
pub(crate) fn no_device(kind: &str) -> Error {
    Error::Layer {
        layer: String::new(),
        kind: kind.to_string(),
        message: "create_pipeline ran without a device".into(),
    }
}

/// Bytes per invocation of a flat shader.
const FLAT_BYTES: u64 = 16;

/// Records a flat shader over `bindings` (the last written) of `bytes` each, in rows of at
/// most 2^20 invocations so that no grid dimension passes the dispatch limit; `extra` push
/// constant words follow the shader's two (`FLAT_PUSH_EXTRA`).
pub fn dispatch_flat(
    rec: &mut Recorder<'_>,
    pipeline: &Arc<Pipeline>,
    bindings: &[&GpuMat],
    bytes: u64,
    extra: &[u32],
) -> Result<()> {
    let n = bytes / FLAT_BYTES;
    let row = n.clamp(1, 1 << 20);
    let mut words = vec![n as u32, row as u32];
    words.extend_from_slice(extra);
    rec.dispatch(
        pipeline,
        bindings,
        &words,
        [row as u32, n.div_ceil(row) as u32, 1],
    )
}

/// Runs an elementwise `bottom → top` shader (push constants `w, h, c, cstep`) over a new
/// mat like `bottom`; pack8 mats go through pack4 where the layer has no pack8 shader.
pub fn unary(rec: &mut Recorder<'_>, pipelines: &PackPipelines, bottom: &GpuMat) -> Result<GpuMat> {
    let ctx = rec.context();
    if !pipelines.has(bottom.elempack) && bottom.elempack == 8 {
        let four = ctx.record_packing(rec, bottom, 4)?;
        return unary(rec, pipelines, &four);
    }
    let top = rec.context().alloc_like(bottom)?;
    if let Some(flat) = pipelines.flat_for(&[bottom, &top]) {
        let flat = flat.clone();
        let bytes = top.buffer().map_or(0, |b| b.size());
        dispatch_flat(rec, &flat, &[bottom, &top], bytes, &[])?;
        return Ok(top);
    }
    let pipeline = pipelines.for_mat(bottom)?.clone();
    rec.dispatch(
        &pipeline,
        &[bottom, &top],
        &bottom.shape_words(),
        bottom.grid(),
    )?;
    Ok(top)
}
