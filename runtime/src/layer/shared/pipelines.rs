//! A layer's pipelines per elempack (and the flat one over buffers), checked against the mats
//! they run on.

use crate::Opt;
use crate::error::{Error, Result, TensorError};
use crate::gpu::Pipeline;
use crate::gpu::specialize::{SpecValue, Specialization};
use crate::layer::contract::GpuSetup;
use crate::layer::epilogue::FusedActivation;
use crate::meta::ShaderModule;
use crate::tensor::{GpuData, GpuMat, StorageFormat};
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

/// Bytes per invocation of a flat shader: the whole buffer in blocks of 16.
pub(crate) const FLAT_BYTES: u64 = 16;

/// A layer's pipelines for elempack 1, 4 and 8 (`None` where it has no shader), and the flat
/// one for buffer mats of one layout, any packing (`shaders/include/flat.comp`).
#[derive(Clone, Default)]
pub struct PackPipelines {
    by_pack: [Option<Arc<Pipeline>>; 3],
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
        let mut out = PackPipelines::default();
        for (pack, module) in modules {
            out.by_pack[slot(*pack)] = Some(gpu.pipeline(module, values)?);
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
    /// holding at least its bytes, a whole number of flat elements) in a format it reads.
    pub fn flat_for(&self, mats: &[&GpuMat]) -> Option<&Arc<Pipeline>> {
        let first = mats.first()?;
        let size = first.byte_size();
        let fits =
            |m: &&GpuMat| m.same_layout(first) && m.buffer().is_some_and(|b| b.size() >= size);
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
            .ok_or(Error::NoShader {
                elempack: m.elempack,
            })?;
        let image = matches!(m.data, GpuData::Image { .. });
        if StorageFormat::of(p.options, m.elempack) != m.format
            || p.options.contains(Opt::Image) != image
        {
            return Err(TensorError::VariantStorage {
                shader: p.shader.to_string(),
                variant: p.options.name(),
                stores: format!("{:?}", StorageFormat::of(p.options, m.elempack)),
                mats: format!("{:?} {}", m.format, if image { "image" } else { "buffer" }),
            }
            .into());
        }
        Ok(p)
    }
}

/// Checks that `m` is a pack1 buffer in the storage format `pipeline`'s pack1 shaders read
/// (the strided copy and reduce families, which index values one by one).
pub(crate) fn expect_pack1_buffer(pipeline: &Pipeline, m: &GpuMat) -> Result<()> {
    let format = StorageFormat::of(pipeline.options, 1);
    if m.elempack != 1 || m.format != format || m.buffer().is_none() {
        return Err(TensorError::VariantStorage {
            shader: pipeline.shader.to_string(),
            variant: pipeline.options.name(),
            stores: format!("{format:?} pack1 buffers"),
            mats: format!("{:?} elempack {}", m.format, m.elempack),
        }
        .into());
    }
    Ok(())
}

/// `v` (a count, stride or offset) as a push-constant word of `pipeline`'s 32-bit indices, or
/// an error naming `what` it is.
pub(crate) fn index_word(pipeline: &Pipeline, v: isize, what: &str) -> Result<u32> {
    i32::try_from(v).map(|v| v as u32).map_err(|_| {
        TensorError::VariantStorage {
            shader: pipeline.shader.to_string(),
            variant: "32-bit indices".into(),
            stores: "indices below 2^31".into(),
            mats: format!("{what} of {v}"),
        }
        .into()
    })
}

/// A layer's device side: set by `create_pipeline` when it had a device.
pub(crate) trait DeviceSide<T> {
    /// The state, or [`Error::NoDevice`] for a GPU forward without one.
    fn ready(&self) -> Result<&T>;
}

impl<T> DeviceSide<T> for Option<T> {
    fn ready(&self) -> Result<&T> {
        self.as_ref().ok_or(Error::NoDevice {
            what: "a GPU forward (create_pipeline had no device)",
        })
    }
}

/// A dispatch grid of `items` workgroups of `lanes` invocations, in rows of at most the
/// workgroups a dimension may have on `ctx`'s device: shaders index `y * rows + x`. `items`
/// must not be 0.
pub(crate) fn workgroup_rows(ctx: &crate::gpu::Context, items: usize, lanes: usize) -> [u32; 3] {
    let limit = ctx.limits().max_compute_workgroups_per_dimension.max(1) as usize;
    let row = items.min(limit);
    [(row * lanes) as u32, items.div_ceil(row) as u32, 1]
}

/// `global` (invocations of `pipeline`'s workgroups) with the workgroups along `axis` that
/// pass the device's per-dimension limit continued along z, for shaders that read their
/// index there as `id[axis] + id.z * gl_NumWorkGroups[axis]` where their z is otherwise 1
/// (the GEMM convolutions' position tiles, InnerProduct's outputs). A grid within the limit,
/// or one whose z is in use, is returned as it is.
pub(crate) fn fold_into_z(
    ctx: &crate::gpu::Context,
    pipeline: &Pipeline,
    global: [u32; 3],
    axis: usize,
) -> [u32; 3] {
    let limit = ctx.limits().max_compute_workgroups_per_dimension.max(1);
    let local = pipeline.local_size;
    let groups = global[axis].div_ceil(local[axis].max(1));
    if global[2] > local[2] || groups <= limit {
        return global;
    }
    let folds = groups.div_ceil(limit);
    let mut folded = global;
    folded[axis] = groups.div_ceil(folds) * local[axis];
    folded[2] = folds * local[2];
    folded
}

/// The grid of the convolutions' direct shaders from a pack4 input: one invocation per output
/// position and block of 4 output channels (a pack1 output's channels in blocks too).
pub(crate) fn block_grid(top: &GpuMat) -> [u32; 3] {
    let blocks = (top.c * top.elempack).div_ceil(4);
    [top.w as u32, top.h as u32, blocks as u32]
}

/// What an unsplit GEMM binds as its partial sums, which it never writes.
pub(crate) fn no_partials(ctx: &crate::gpu::Context) -> Result<GpuMat> {
    GpuMat::alloc(ctx, 1, [4, 1, 1], 4, crate::OptionSet::FP32)
}

/// The pipelines a layer made for the activation the net fuses after it
/// ([`Layer::forward_gpu_activated`](crate::layer::Layer::forward_gpu_activated)): made at the
/// first such forward and kept, as a net fuses the same activation every run.
#[derive(Default)]
pub(crate) struct ActivatedPipelines(OnceLock<(FusedActivation, PackPipelines)>);

impl ActivatedPipelines {
    /// The pipelines for `act`: those kept, or `make(act)`'s (kept where none are).
    pub(crate) fn get(
        &self,
        act: FusedActivation,
        make: impl FnOnce(FusedActivation) -> Result<PackPipelines>,
    ) -> Result<Cow<'_, PackPipelines>> {
        Ok(match self.0.get() {
            Some((kept, p)) if *kept == act => Cow::Borrowed(p),
            Some(_) => Cow::Owned(make(act)?),
            None => {
                let p = make(act)?;
                Cow::Borrowed(&self.0.get_or_init(|| (act, p)).1)
            }
        })
    }
}
