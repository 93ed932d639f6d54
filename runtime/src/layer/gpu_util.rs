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
    /// holding at least its bytes, a whole number of flat elements) in a format it reads.
    pub fn flat_for(&self, mats: &[&GpuMat]) -> core::option::Option<&Arc<Pipeline>> {
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

/// Records a flat shader over `bindings` (the last written, whose byte size sets the
/// count), in rows of at most 2^20 invocations so that no grid dimension passes the dispatch
/// limit; `extra` push constant words follow the shader's two (`FLAT_PUSH_EXTRA`).
pub fn dispatch_flat(
    rec: &mut Recorder<'_>,
    pipeline: &Arc<Pipeline>,
    bindings: &[&GpuMat],
    extra: &[u32],
) -> Result<()> {
    let bytes = bindings.last().map_or(0, |m| m.byte_size());
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

/// The axis of a GPU mat's 3-D view (0 = w, 1 = h, 2 = c) that numpy axis `axis` of a
/// `dims`-D blob lies along: 1-D blobs lie along c, 2-D ones as c rows of w.
pub(crate) fn view_axis(dims: u8, axis: usize) -> core::option::Option<usize> {
    match (dims, axis) {
        (1..=3, 0) => Some(2),
        (2, 1) | (3, 2) => Some(0),
        (3, 1) => Some(1),
        _ => None,
    }
}

/// The numpy shape (outermost first) of a blob of `dims` and `[w, h, d, c]`.
pub(crate) fn numpy_shape(dims: u8, [w, h, d, c]: [usize; 4]) -> Vec<usize> {
    match dims {
        1 => vec![w],
        2 => vec![h, w],
        3 => vec![c, h, w],
        _ => vec![c, d, h, w],
    }
}

/// Where `shaders/gather.comp` reads each output value (its `mode`).
#[derive(Clone, Copy, Debug)]
pub enum GatherMap {
    /// Source view axis k takes output coordinate `perm[k]` plus `offset[k]`; out of range
    /// reads the pipeline's border (`value` for a constant border).
    Shift {
        /// Output view axis per source view axis.
        perm: [usize; 3],
        /// Added per source view axis.
        offset: [i64; 3],
        /// The constant border value.
        value: f32,
    },
    /// Row-major order kept (channels `cstep` apart on both sides).
    Reshape,
    /// Output channel z reads input channel `(z % group) * (c / group) + z / group`.
    Shuffle {
        /// Channel groups.
        group: usize,
    },
}

impl GatherMap {
    /// The identity shift by `offset` (a crop or a slice).
    pub fn shift(offset: [i64; 3]) -> Self {
        GatherMap::Shift {
            perm: [0, 1, 2],
            offset,
            value: 0.0,
        }
    }

    fn mode(&self) -> i32 {
        match self {
            GatherMap::Shift { .. } => 0,
            GatherMap::Reshape => 1,
            GatherMap::Shuffle { .. } => 2,
        }
    }
}

/// What `shaders/gather.comp`'s `border` does out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Border {
    /// A constant.
    Constant = 0,
    /// The nearest edge value.
    Replicate = 1,
    /// Mirrored at the edge (the edge itself once).
    Reflect = 2,
}

/// The pack1 gather pipeline of one map kind and border (buffer nets only): the copy that
/// Crop, Slice, Permute, ShuffleChannel, Padding, Reshape and Flatten record.
pub struct Gather {
    pipeline: Arc<Pipeline>,
    mode: i32,
}

impl Gather {
    /// The pipeline for maps like `map` with `border`; `None` for image nets.
    pub fn create(
        gpu: GpuSetup<'_>,
        map: GatherMap,
        border: Border,
    ) -> Result<core::option::Option<Self>> {
        if gpu.options.contains(Opt::Image) {
            return Ok(None);
        }
        let spec = Specialization {
            values: vec![
                (0, SpecValue::I32(map.mode())),
                (1, SpecValue::I32(border as i32)),
            ],
            local_size: None,
        };
        let module = crate::shaders::Shader::Gather.module();
        Ok(Some(Gather {
            pipeline: gpu.ctx.pipeline(module, gpu.options, &spec)?,
            mode: map.mode(),
        }))
    }

    /// Records gathering pack1 `bottom` into a new pack1 `dims`-D mat of view `[w, h, c]`.
    pub fn record(
        &self,
        rec: &mut Recorder<'_>,
        bottom: &GpuMat,
        dims: u8,
        view: [usize; 3],
        map: GatherMap,
    ) -> Result<GpuMat> {
        if bottom.elempack != 1 || map.mode() != self.mode {
            return Err(Error::Shape(format!(
                "gather of mode {} on an elempack {} mat by a mode {} pipeline",
                map.mode(),
                bottom.elempack,
                self.mode
            )));
        }
        if StorageFormat::of(self.pipeline.options, 1) != bottom.format {
            return Err(Error::Shape(format!(
                "gather variant {} does not store {:?} mats",
                self.pipeline.options.name(),
                bottom.format
            )));
        }
        let top = rec.context().alloc_mat(dims, view, 1, bottom.options);
        let (perm, offset, value, group) = match map {
            GatherMap::Shift {
                perm,
                offset,
                value,
            } => (perm, offset, value, 1),
            GatherMap::Reshape => ([0, 1, 2], [0; 3], 0.0, 1),
            GatherMap::Shuffle { group } => ([0, 1, 2], [0; 3], 0.0, group.max(1)),
        };
        let mut words: Vec<u32> = bottom.shape_words().to_vec();
        words.extend(top.shape_words());
        words.extend(perm.map(|a| a as u32));
        words.extend(offset.map(|o| o as i32 as u32));
        words.push(group as u32);
        words.push(value.to_bits());
        rec.dispatch(&self.pipeline, &[bottom, &top], &words, top.grid())?;
        Ok(top)
    }
}

/// Values per numpy axis of a `dims`-D blob placed at their axes of the 3-D view, `fill` at
/// the view axes the blob does not have.
pub(crate) fn to_view<T: Copy>(dims: u8, per_axis: &[T], fill: T) -> [T; 3] {
    let mut out = [fill; 3];
    for (k, v) in per_axis.iter().enumerate() {
        if let Some(a) = view_axis(dims, k) {
            out[a] = *v;
        }
    }
    out
}

/// `bottom` (pack1) as a `dims`-D mat of view `view` with the same values in row-major order:
/// the same buffer when both lay them out without gaps, else a gather.
pub(crate) fn reshape(
    rec: &mut Recorder<'_>,
    gather: &Gather,
    bottom: &GpuMat,
    dims: u8,
    view: [usize; 3],
) -> Result<GpuMat> {
    let [w, h, c] = view;
    if w * h * c != bottom.w * bottom.h * bottom.c * bottom.elempack {
        return Err(Error::Shape(format!(
            "reshape of {:?} into {view:?}",
            bottom.shape()
        )));
    }
    let dense = |dims: u8, w: usize, h: usize, cstep: usize| dims < 3 || cstep == w * h;
    let cstep = crate::tensor::gpu_cstep(dims, w, h, 1);
    if bottom.elempack == 1
        && dense(bottom.dims, bottom.w, bottom.h, bottom.cstep)
        && dense(dims, w, h, cstep)
    {
        return Ok(GpuMat {
            dims,
            w,
            h,
            c,
            cstep,
            ..bottom.clone()
        });
    }
    gather.record(rec, bottom, dims, view, GatherMap::Reshape)
}
