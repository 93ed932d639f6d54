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
    /// Flat pipelines with the storage format they read, known when made so that dispatches
    /// need not work it out (fp16 packed keeps pack1 mats in fp32: two formats then).
    flat: Vec<(StorageFormat, Arc<Pipeline>)>,
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

    /// Adds the flat pipelines of `module` with specialization `values`; image mats have none.
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
            let format = StorageFormat::of(options, 8);
            self.flat
                .push((format, gpu.ctx.pipeline(module, options, &spec)?));
        }
        Ok(self)
    }

    /// The flat pipeline for `mats` when they line up value for value (one layout, buffers
    /// of one byte size, a whole number of flat elements) in a format it reads.
    pub fn flat_for(&self, mats: &[&GpuMat]) -> core::option::Option<&Arc<Pipeline>> {
        let first = mats.first()?;
        let size = first.buffer()?.size();
        let fits =
            |m: &&GpuMat| m.same_layout(first) && m.buffer().is_some_and(|b| b.size() == size);
        if !size.is_multiple_of(FLAT_BYTES) || !mats.iter().all(fits) {
            return None;
        }
        self.flat
            .iter()
            .find(|(format, _)| *format == first.format)
            .map(|(_, p)| p)
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

/// Records a flat shader over `bindings` (the last written, whose buffer size sets the
/// count), in rows of at most 2^20 invocations so that no grid dimension passes the dispatch
/// limit; `extra` push constant words follow the shader's two (`FLAT_PUSH_EXTRA`).
pub fn dispatch_flat(
    rec: &mut Recorder<'_>,
    pipeline: &Arc<Pipeline>,
    bindings: &[&GpuMat],
    extra: &[u32],
) -> Result<()> {
    let bytes = bindings
        .last()
        .and_then(|m| m.buffer())
        .map_or(0, |b| b.size());
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

/// `m` as pack4 when it is pack8 (recorded into `rec`), for layers with no pack8 shader.
pub fn pack8_as_pack4(rec: &mut Recorder<'_>, m: &GpuMat) -> Result<GpuMat> {
    if m.elempack == 8 {
        rec.context().record_packing(rec, m, 4)
    } else {
        Ok(m.clone())
    }
}

/// Runs an elementwise `bottom → top` shader over a new mat like `bottom`: the flat one over
/// buffers, else the packing's (push constants `w, h, c, cstep`); pack8 mats go through pack4
/// where the layer has no pack8 shader.
pub fn unary(rec: &mut Recorder<'_>, pipelines: &PackPipelines, bottom: &GpuMat) -> Result<GpuMat> {
    let top = rec.context().alloc_like(bottom)?;
    if let Some(flat) = pipelines.flat_for(&[bottom, &top]) {
        let flat = flat.clone();
        dispatch_flat(rec, &flat, &[bottom, &top], &[])?;
        return Ok(top);
    }
    if !pipelines.has(bottom.elempack) && bottom.elempack == 8 {
        let four = pack8_as_pack4(rec, bottom)?;
        return unary(rec, pipelines, &four);
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
