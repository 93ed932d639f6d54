//! The gather shader (`shaders/gather.comp`): the copy that Crop, Slice, Permute,
//! ShuffleChannel, Padding, Reshape and Flatten record.

use crate::error::{Result, TensorError};
use crate::gpu::specialize::SpecValue;
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::GpuSetup;
use crate::layer::view::to_view;
use crate::tensor::{GpuMat, StorageFormat};
use std::sync::Arc;

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
    /// The pipeline for maps like `map` with `border` (buffer nets: the layers using it take
    /// no images, so the net gives them none).
    pub fn create(gpu: GpuSetup<'_>, map: GatherMap, border: Border) -> Result<Self> {
        let values = [
            (0, SpecValue::I32(map.mode())),
            (1, SpecValue::I32(border as i32)),
        ];
        let module = crate::shaders::Shader::Gather.module();
        Ok(Gather {
            pipeline: gpu.pipeline(module, &values)?,
            mode: map.mode(),
        })
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
            return Err(TensorError::VariantStorage {
                shader: "gather".into(),
                variant: format!("mode {}", self.mode),
                stores: "pack1".into(),
                mats: format!("elempack {} for mode {}", bottom.elempack, map.mode()),
            }
            .into());
        }
        if StorageFormat::of(self.pipeline.options, 1) != bottom.format {
            return Err(TensorError::VariantStorage {
                shader: "gather".into(),
                variant: self.pipeline.options.name(),
                stores: format!("{:?}", StorageFormat::of(self.pipeline.options, 1)),
                mats: format!("{:?}", bottom.format),
            }
            .into());
        }
        let top = GpuMat::alloc(rec.context(), dims, view, 1, bottom.options);
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

/// [`reshape`] to a numpy shape (outermost first) of 1 to 3 axes.
pub(crate) fn reshape_numpy(
    rec: &mut Recorder<'_>,
    gather: &Gather,
    bottom: &GpuMat,
    np: &[usize],
) -> Result<GpuMat> {
    let (dims, _) = crate::layer::view::from_numpy_shape(np)?;
    reshape(
        rec,
        gather,
        bottom,
        dims,
        crate::layer::view::to_view(dims, np, 1),
    )
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
        return Err(TensorError::Reshape {
            values: bottom.w * bottom.h * bottom.c * bottom.elempack,
            dims,
            shape: view.to_vec(),
        }
        .into());
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

/// The gather pipeline for maps like `map` (constant border) when there is a device: the
/// reshape gather of Flatten/Reshape, the box copy of Crop/Slice/Permute.
pub(crate) fn gather_for(gpu: Option<GpuSetup<'_>>, map: GatherMap) -> Result<Option<Gather>> {
    gpu.map(|gpu| Gather::create(gpu, map, Border::Constant))
        .transpose()
}

/// Records copying the box `roi` (`(start, len)` per numpy axis) of pack1 `bottom`.
pub(crate) fn record_box(
    rec: &mut Recorder<'_>,
    gather: &Gather,
    bottom: &GpuMat,
    roi: &[(usize, usize)],
) -> Result<GpuMat> {
    let dims = bottom.dims;
    let starts: Vec<i64> = roi.iter().map(|r| r.0 as i64).collect();
    let lens: Vec<usize> = roi.iter().map(|r| r.1).collect();
    gather.record(
        rec,
        bottom,
        dims,
        to_view(dims, &lens, 1),
        GatherMap::shift(to_view(dims, &starts, 0)),
    )
}
