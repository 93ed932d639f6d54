//! The gather shader (`shaders/gather.comp`): the copy that Crop, Slice, Permute,
//! ShuffleChannel, Padding, Reshape and Flatten record.

use crate::error::{Result, TensorError};
use crate::gpu::specialize::SpecValue;
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::GpuSetup;
use crate::layer::shared::pipelines::PackPipelines;
use crate::layer::shared::view::to_space;
use crate::shaders::Shader;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, StorageFormat};
use std::sync::Arc;

/// Where `shaders/gather.comp` reads each output value (its `mode`).
#[derive(Clone, Copy, Debug)]
pub enum GatherMap {
    /// Source axis k (of the four GPU mat axes `w, h, d, c`) takes output coordinate
    /// `perm[k]` plus `offset[k]`; out of range reads the pipeline's border (`value` for a
    /// constant border).
    Shift {
        /// Output axis per source axis.
        perm: [usize; 4],
        /// Added per source axis.
        offset: [i64; 4],
        /// The constant border value.
        value: f32,
    },
    /// Row-major order kept (channels `cstep` apart on both sides).
    Reshape,
    /// Output channel z reads input channel `(z % group) * (c / group) + z / group`; packed
    /// mats go as their scalar views, `pack` values to a channel pack.
    Shuffle {
        /// Channel groups.
        group: usize,
        /// The mats' elempack (1 for pack1 mats).
        pack: usize,
    },
}

impl GatherMap {
    /// The identity shift by `offset` (a crop or a slice).
    pub fn shift(offset: [i64; 4]) -> Self {
        GatherMap::Shift {
            perm: [0, 1, 2, 3],
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
    /// The output channel's own constant ([`Gather::create_with_constants`]).
    PerChannel = 3,
}

/// The pack1 gather pipeline of one map kind and border (buffer nets only): the copy that
/// Crop, Slice, Permute, ShuffleChannel, Padding, Reshape and Flatten record.
pub struct Gather {
    pipeline: Arc<Pipeline>,
    mode: i32,
    /// The per-channel constants of [`Border::PerChannel`] (one unused value otherwise: the
    /// shader declares the binding either way).
    constants: GpuMat,
    /// How many of them there are.
    nconst: usize,
    /// The packing of the mats it writes (through their scalar views; 1: pack1 mats).
    out_pack: usize,
    /// The packed box copies (`copy_box_pack4/8`) for [`record_box`], where the gather was
    /// made by [`Gather::for_boxes`].
    boxes: Option<PackPipelines>,
}

impl Gather {
    /// The pipeline for maps like `map` with `border` (buffer nets: the layers using it take
    /// no images, so the net gives them none).
    pub fn create(gpu: GpuSetup<'_>, map: GatherMap, border: Border) -> Result<Self> {
        Self::create_with_constants(gpu, map, border, &[])
    }

    /// [`Gather::create`] with the per-channel constants a [`Border::PerChannel`] writes.
    pub fn create_with_constants(
        gpu: GpuSetup<'_>,
        map: GatherMap,
        border: Border,
        constants: &[f32],
    ) -> Result<Self> {
        Self::create_packed(gpu, (map, border), constants, 1)
    }

    /// [`Gather::create_with_constants`] for a shift map whose outputs are packed mats of
    /// elempack `out_pack` ([`Gather::record_packed`]; 1 for pack1 ones).
    pub fn create_packed(
        gpu: GpuSetup<'_>,
        (map, border): (GatherMap, Border),
        constants: &[f32],
        out_pack: usize,
    ) -> Result<Self> {
        let values = [
            (0, SpecValue::I32(map.mode())),
            (1, SpecValue::I32(border as i32)),
            (2, SpecValue::I32(out_pack as i32)),
        ];
        let module = Shader::Gather.module();
        let stored = if constants.is_empty() {
            &[0.0][..]
        } else {
            constants
        };
        Ok(Gather {
            pipeline: gpu.pipeline(module, &values)?,
            mode: map.mode(),
            constants: gpu.upload_values(stored, 1)?,
            nconst: constants.len(),
            out_pack,
            boxes: None,
        })
    }

    /// A shift gather with the packed box copies (`copy_box_pack4/8`) [`record_box`] takes
    /// for boxes that cut the packed axis at whole blocks (Crop, Slice): the layers that copy
    /// boxes make them, not every shift gather.
    pub(crate) fn for_boxes(gpu: Option<GpuSetup<'_>>) -> Result<Option<Self>> {
        let Some(gpu) = gpu else {
            return Ok(None);
        };
        let boxes = PackPipelines::create(
            gpu,
            &[
                (4, Shader::CopyBoxPack4.module()),
                (8, Shader::CopyBoxPack8.module()),
            ],
            &[],
        )?;
        Ok(Some(Gather {
            boxes: Some(boxes),
            ..Gather::create(gpu, GatherMap::shift([0; 4]), Border::Constant)?
        }))
    }

    /// [`Gather::record`] of a shift map into a new mat of its `out_pack` (from a
    /// [`Gather::create_packed`] one), channels `space[3]` in whole packs: `None` where the
    /// channels do not fill them or the storage holds no scalar views.
    pub fn record_packed(
        &self,
        rec: &mut Recorder<'_>,
        bottom: &GpuMat,
        (dims, space): (u8, [usize; 4]),
        map: GatherMap,
    ) -> Result<Option<GpuMat>> {
        let [w, h, d, c] = space;
        let p = self.out_pack;
        let fits = matches!(map, GatherMap::Shift { .. })
            && dims >= 3
            && c.is_multiple_of(p)
            && self.takes_packed()
            && StorageFormat::of(self.pipeline.options, bottom.elempack) == bottom.format;
        if !fits {
            return Ok(None);
        }
        let top = GpuMat::alloc_space(rec.context(), dims, [w, h, d, c / p], p, bottom.options)?;
        let Some(view) = scalars_of(&top).filter(|v| v.format == bottom.format) else {
            return Ok(None);
        };
        self.record_into(rec, bottom, &view, map)?;
        Ok(Some(top))
    }

    /// Whether a shift map reads packed inputs (through their scalar views: fp32, or fp16
    /// storage, where packed and pack1 mats hold the same scalars).
    pub fn takes_packed(&self) -> bool {
        StorageFormat::scalar_views(self.pipeline.options)
    }

    /// Records gathering pack1 `bottom` (packed too, for a shift map where
    /// [`Gather::takes_packed`]) into a new pack1 `dims`-D mat of extents `[w, h, d, c]`
    /// along the four GPU mat axes.
    pub fn record(
        &self,
        rec: &mut Recorder<'_>,
        bottom: &GpuMat,
        dims: u8,
        space: [usize; 4],
        map: GatherMap,
    ) -> Result<GpuMat> {
        let packed_ok = matches!(map, GatherMap::Shift { .. }) && self.takes_packed();
        if (bottom.elempack != 1 && !packed_ok) || map.mode() != self.mode {
            return Err(TensorError::VariantStorage {
                shader: "gather".into(),
                variant: format!("mode {}", self.mode),
                stores: "pack1".into(),
                mats: format!("elempack {} for mode {}", bottom.elempack, map.mode()),
            }
            .into());
        }
        if StorageFormat::of(self.pipeline.options, bottom.elempack) != bottom.format {
            return Err(TensorError::VariantStorage {
                shader: "gather".into(),
                variant: self.pipeline.options.name(),
                stores: format!("{:?}", StorageFormat::of(self.pipeline.options, 1)),
                mats: format!("{:?}", bottom.format),
            }
            .into());
        }
        let top = GpuMat::alloc_space(rec.context(), dims, space, 1, bottom.options)?;
        self.record_into(rec, bottom, &top, map)?;
        Ok(top)
    }

    /// Records gathering pack1 `bottom` into pack1 `top`, every value of `top` written.
    fn record_into(
        &self,
        rec: &mut Recorder<'_>,
        bottom: &GpuMat,
        top: &GpuMat,
        map: GatherMap,
    ) -> Result<()> {
        let (perm, offset, value, group, pack) = match map {
            GatherMap::Shift {
                perm,
                offset,
                value,
            } => (perm, offset, value, 1, bottom.elempack),
            GatherMap::Reshape => ([0, 1, 2, 3], [0; 4], 0.0, 1, 1),
            GatherMap::Shuffle { group, pack } => {
                ([0, 1, 2, 3], [0; 4], 0.0, group.max(1), pack.max(1))
            }
        };
        let mut words: Vec<u32> = space_words(bottom).to_vec();
        words.extend(space_words(top));
        words.extend(perm.map(|a| a as u32));
        words.extend(offset.map(|o| o as i32 as u32));
        words.push(group as u32);
        words.push(value.to_bits());
        // a channel's constant where the output has channels (ncnn's per-channel padding
        // applies to 3-D and 4-D blobs; others take `value`)
        words.push(if top.dims >= 3 { self.nconst as u32 } else { 0 });
        words.push(pack as u32);
        rec.dispatch(
            &self.pipeline,
            &[bottom, top, &self.constants],
            &words,
            top.grid(),
        )
    }
}

/// The push-constant words of a mat's four axes and channel step (`w, h, d, c, cstep`), as
/// the gather and box-copy shaders declare them.
fn space_words(m: &GpuMat) -> [u32; 5] {
    let [w, h, d, c] = m.space();
    [w, h, d, c, m.cstep].map(|n| n as u32)
}

/// [`reshape`] to a numpy shape (outermost first) of 1 to 4 axes.
pub(crate) fn reshape_numpy(
    rec: &mut Recorder<'_>,
    gather: &Gather,
    bottom: &GpuMat,
    np: &[usize],
) -> Result<GpuMat> {
    let BlobShape { dims, .. } = crate::layer::shared::view::from_numpy_shape(np)?;
    reshape(rec, gather, bottom, dims, to_space(dims, np, 1))
}

/// `bottom` (pack1) as a `dims`-D mat of extents `space` (`[w, h, d, c]`) with the same values
/// in row-major order: the same buffer when both lay them out without gaps, else a gather.
pub(crate) fn reshape(
    rec: &mut Recorder<'_>,
    gather: &Gather,
    bottom: &GpuMat,
    dims: u8,
    space: [usize; 4],
) -> Result<GpuMat> {
    let [w, h, d, c] = space;
    if w * h * d * c != bottom.w * bottom.h * bottom.c * bottom.elempack {
        return Err(TensorError::Reshape {
            values: bottom.w * bottom.h * bottom.c * bottom.elempack,
            dims,
            shape: space.to_vec(),
        }
        .into());
    }
    let dense = |dims: u8, w: usize, h: usize, cstep: usize| dims < 3 || cstep == w * h;
    let cstep = crate::tensor::gpu_cstep(dims, w, h * d, 1);
    if bottom.elempack == 1
        && dense(bottom.dims, bottom.w, bottom.h, bottom.cstep)
        && dense(dims, w, h * d, cstep)
    {
        return Ok(GpuMat {
            dims,
            w,
            h: h * d,
            d,
            c,
            cstep,
            ..bottom.clone()
        });
    }
    gather.record(rec, bottom, dims, space, GatherMap::Reshape)
}

/// The gather pipeline for maps like `map` (constant border) when there is a device: the
/// reshape gather of Flatten/Reshape, the box copy of Crop/Slice/Permute.
pub(crate) fn gather_for(gpu: Option<GpuSetup<'_>>, map: GatherMap) -> Result<Option<Gather>> {
    gpu.map(|gpu| Gather::create(gpu, map, Border::Constant))
        .transpose()
}

/// The elempacks box copies take whose `(start, len)` along the packed (outermost numpy) axis
/// are `cuts`: any where every cut is at whole blocks of 8, up to 4 at blocks of 4, else pack1.
pub(crate) fn box_packs(cuts: &[(usize, usize)]) -> crate::layer::contract::Packs {
    use crate::layer::contract::Packs;
    let whole = |n: usize| cuts.iter().all(|&(s, l)| s % n == 0 && l % n == 0);
    if whole(8) {
        Packs::ALL
    } else if whole(4) {
        Packs::UP_TO_4
    } else {
        Packs::ONE
    }
}

/// Records a channel shuffle of `bottom` in its own elempack: pack1 directly, packed through
/// the scalar views of both mats.
pub(crate) fn record_shuffle(
    rec: &mut Recorder<'_>,
    gather: &Gather,
    bottom: &GpuMat,
    group: usize,
) -> Result<GpuMat> {
    let p = bottom.elempack;
    if p == 1 {
        let map = GatherMap::Shuffle { group, pack: 1 };
        return gather.record(rec, bottom, bottom.dims, bottom.space(), map);
    }
    let top = bottom.alloc_like(rec.context())?;
    let what = "a packed channel shuffle";
    let (src, dst) = (
        scalar_view(bottom, "gather", what)?,
        scalar_view(&top, "gather", what)?,
    );
    gather.record_into(rec, &src, &dst, GatherMap::Shuffle { group, pack: p })?;
    Ok(top)
}

/// Pack1 `bottom`'s values in row-major order as a 1-D mat of elempack `pack`, gathered
/// straight into the output's scalar view: one dispatch where a flatten to pack1 and a repack
/// took two. `None` where that packing's storage does not hold scalars as pack1's does (fp16
/// packed without fp16 storage) or the values do not fill whole packs.
pub(crate) fn flatten_packed(
    rec: &mut Recorder<'_>,
    gather: &Gather,
    bottom: &GpuMat,
    pack: usize,
) -> Result<Option<GpuMat>> {
    let n: usize = bottom.shape().iter().product();
    if bottom.elempack != 1 {
        return Ok(None);
    }
    let Some((top, view)) = vector_of(rec, bottom, n, pack)? else {
        return Ok(None);
    };
    gather.record_into(rec, bottom, &view, GatherMap::Reshape)?;
    Ok(Some(top))
}

/// A new 1-D mat of `n` values in packs of `pack`, in `bottom`'s options, and its scalar view:
/// `None` where the values do not fill whole packs or the view's storage is not `bottom`'s.
fn vector_of(
    rec: &mut Recorder<'_>,
    bottom: &GpuMat,
    n: usize,
    pack: usize,
) -> Result<Option<(GpuMat, GpuMat)>> {
    if !n.is_multiple_of(pack) {
        return Ok(None);
    }
    let top = GpuMat::alloc(rec.context(), 1, [1, 1, n / pack], pack, bottom.options)?;
    Ok(scalars_of(&top)
        .filter(|v| v.format == bottom.format)
        .map(|view| (top, view)))
}

/// A packed 3-D `bottom`'s values in ncnn's flatten order (channel by channel, rows within) as a
/// 1-D mat of elempack `pack`: `unpack`, a shift gather, reads `bottom` through its scalar view
/// and writes the output's scalars as a 3-D pack1 mat of planes `w · h` apart, which is the
/// 1-D mat's memory (one dispatch where unpacking to pack1 and flattening took two). `None`
/// where the storage holds no scalar views or the values do not fill whole packs.
pub(crate) fn flatten_unpacked(
    rec: &mut Recorder<'_>,
    unpack: &Gather,
    bottom: &GpuMat,
    pack: usize,
) -> Result<Option<GpuMat>> {
    let [w, h, _, c] = bottom.space();
    if bottom.dims != 3 || !unpack.takes_packed() {
        return Ok(None);
    }
    let Some((top, view)) = vector_of(rec, bottom, w * h * c * bottom.elempack, pack)? else {
        return Ok(None);
    };
    let planes = GpuMat {
        dims: 3,
        w,
        h,
        d: 1,
        c: c * bottom.elempack,
        cstep: w * h,
        ..view
    };
    unpack.record_into(rec, bottom, &planes, GatherMap::shift([0; 4]))?;
    Ok(Some(top))
}

/// `m` (elempack `p`) as the pack1 view of its scalars (3-D, or 4-D as `m` is): each
/// element's `p` values side by side along w. Only where the storage holds scalars as it holds packed values (not fp16
/// packed without fp16 storage, whose pack1 blobs are fp32).
pub(crate) fn scalars_of(m: &GpuMat) -> Option<GpuMat> {
    let p = m.elempack;
    (StorageFormat::of(m.options, 1) == m.format && m.buffer().is_some()).then(|| GpuMat {
        dims: m.dims.max(3),
        w: m.w * p,
        elempack: 1,
        cstep: m.cstep * p,
        ..m.clone()
    })
}

/// [`scalars_of`], or the error naming `shader` and `what` it was for where `m` has no scalar
/// view (an image, or fp16 packed without fp16 storage).
pub(crate) fn scalar_view(m: &GpuMat, shader: &str, what: &str) -> Result<GpuMat> {
    scalars_of(m).ok_or_else(|| {
        TensorError::VariantStorage {
            shader: shader.into(),
            variant: what.into(),
            stores: "fp16 or fp32 packs in buffers".into(),
            mats: format!("elempack {}, {:?}", m.elempack, m.format),
        }
        .into()
    })
}

/// Records copying the box `roi` (`(start, len)` per numpy axis) of `bottom`: pack1 through
/// the gather, packed through `copy_box_pack4/8` (whole blocks of the packed axis; see
/// [`box_packs`]), or where it cuts inside a block and the gather reads packed mats, through
/// the gather into a pack1 output.
pub(crate) fn record_box(
    rec: &mut Recorder<'_>,
    gather: &Gather,
    bottom: &GpuMat,
    roi: &[(usize, usize)],
) -> Result<GpuMat> {
    let p = bottom.elempack;
    if p == 1 {
        return record_box_pack1(rec, gather, bottom, roi);
    }
    let dims = bottom.dims;
    let starts: Vec<usize> = roi.iter().map(|r| r.0).collect();
    let lens: Vec<usize> = roi.iter().map(|r| r.1).collect();
    let [x0, y0, z0, c0] = to_space(dims, &starts, 0);
    let [tw, th, td, tc] = to_space(dims, &lens, 1);
    let boxes = gather.boxes.as_ref().filter(|_| c0 % p == 0 && tc % p == 0);
    if boxes.is_none() && dims >= 3 && gather.takes_packed() {
        // channels cut inside a block: the gather reads the packed input as it is, into a
        // pack1 output (nanodet's 58-channel halves of a 116-channel blob)
        return record_box_pack1(rec, gather, bottom, roi);
    }
    let Some(boxes) = boxes else {
        return Err(TensorError::VariantStorage {
            shader: "copy_box".into(),
            variant: format!("a box from channel {c0}, {tc} long"),
            stores: "whole blocks of packs".into(),
            mats: format!("elempack {p}, {:?}", bottom.format),
        }
        .into());
    };
    let pipeline = boxes.for_mat(bottom)?.clone();
    let top = GpuMat::alloc_space(rec.context(), dims, [tw, th, td, tc / p], p, bottom.options)?;
    let mut words = space_words(bottom).to_vec();
    words.extend(space_words(&top));
    words.extend([x0, y0, z0, c0 / p].map(|n| n as u32));
    rec.dispatch(&pipeline, &[bottom, &top], &words, top.grid())?;
    Ok(top)
}

/// [`record_box`] into a pack1 output (of a pack1 `bottom`, or a packed 3-D or 4-D one where
/// the gather reads packed mats).
fn record_box_pack1(
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
        to_space(dims, &lens, 1),
        GatherMap::shift(to_space(dims, &starts, 0)),
    )
}
