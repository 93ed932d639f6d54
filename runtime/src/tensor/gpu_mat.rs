//! The device tensor [`GpuMat`] (a buffer in a variant's storage format, or a 3-D image): its
//! shape, layout and bindings. Moving it is in `transfer`, repacking in `repack`.

use crate::error::{Error, Result, TensorError};
use crate::gpu::DeviceBuffer;
use crate::gpu::recorder::Resource;
use crate::tensor::mat::{Mat, cstep_for};
use crate::tensor::storage::StorageFormat;
use crate::tensor::texture::texel_format;
use crate::{Opt, OptionSet};

/// Where a [`GpuMat`]'s values live.
#[derive(Clone, Debug)]
pub enum GpuData {
    /// A storage buffer of `sfp*` values (`c` channels `cstep` elements apart).
    Buffer(DeviceBuffer),
    /// A 3-D image like ncnn's `VkImageMat`: `w × h × c` texels of `imfmtc1` (elempack 1) or
    /// `imfmtc4` (elempack 4; elempack 8 takes two texels along x).
    Image {
        /// The texture (sampled, storage, copy source and destination).
        texture: wgpu::Texture,
        /// A full view of it, what bindings take.
        view: wgpu::TextureView,
    },
}

/// A tensor on the device, in the storage format of the variant options it was made for:
/// buffer-backed, or image-backed when those options include `image`. Cloning shares the
/// buffer, like ncnn's reference-counted `VkMat`.
///
/// Shaders see every mat as 3-D (`w × h × c`, channels `cstep` elements apart): a 2-D mat of
/// `w × h` is `w × 1 × h` with `cstep = w`, a 1-D mat of `w` is `1 × 1 × w` with `cstep = 1`,
/// a 4-D mat of `w × h × d × c` is `w × h·d × c`, which is the same memory as the host layout.
#[derive(Clone, Debug)]
pub struct GpuMat {
    /// The buffer or image.
    pub data: GpuData,
    /// 1 to 4, as the host mat's.
    pub dims: u8,
    /// Width of the 3-D view.
    pub w: usize,
    /// Height of the 3-D view (height × depth of a 4-D mat).
    pub h: usize,
    /// Depth of a 4-D mat (1 otherwise): its 3-D view's rows are `d` slabs of `h / d`.
    pub d: usize,
    /// Channels of the 3-D view, in packed elements.
    pub c: usize,
    /// Values per element.
    pub elempack: usize,
    /// Elements between channel starts (the host mat's, so casts never reshape; for images the
    /// layout a download produces).
    pub cstep: usize,
    /// How values are stored (fp16 images hold `r16f`/`rgba16f` texels).
    pub format: StorageFormat,
    /// The options whose shaders read and write it.
    pub options: OptionSet,
}

impl<'a> From<&'a GpuMat> for Resource<'a> {
    fn from(m: &'a GpuMat) -> Self {
        m.resource()
    }
}

impl GpuMat {
    /// What a dispatch binds for it.
    pub fn resource(&self) -> Resource<'_> {
        match &self.data {
            GpuData::Buffer(b) => Resource::Buffer(b),
            GpuData::Image { view, .. } => Resource::Texture(view),
        }
    }

    /// Whether another mat holds its buffer too (layers such as Reshape or MemoryData hand
    /// out mats that alias one), so that writing it in place would show elsewhere.
    pub fn buffer_is_shared(&self) -> bool {
        matches!(&self.data, GpuData::Buffer(b) if b.is_shared())
    }

    /// Its buffer, if buffer-backed.
    pub fn buffer(&self) -> Option<&wgpu::Buffer> {
        match &self.data {
            GpuData::Buffer(b) => Some(b),
            GpuData::Image { .. } => None,
        }
    }

    pub(super) fn expect_buffer(&self) -> Result<&wgpu::Buffer> {
        self.buffer().ok_or_else(|| {
            Error::Tensor(TensorError::Backing {
                needed: "a buffer",
                got: backing(&self.data),
            })
        })
    }

    /// `[w, h, c, cstep]` as the built-in shaders' push constants take them.
    pub fn shape_words(&self) -> [u32; 4] {
        [
            self.w as u32,
            self.h as u32,
            self.c as u32,
            self.cstep as u32,
        ]
    }

    /// The dispatch grid over its elements.
    pub fn grid(&self) -> [u32; 3] {
        [self.w as u32, self.h as u32, self.c as u32]
    }

    /// The bytes its values take in its buffer, in whole 32-byte blocks; the buffer may be
    /// larger (the pool hands out a free buffer up to twice the size asked for).
    pub fn byte_size(&self) -> u64 {
        mat_bytes(self.c * self.cstep * self.elempack, self.format)
    }

    /// Whether `other` has this mat's shape, packing, channel step and storage format, so
    /// that the two line up value for value.
    pub fn same_layout(&self, other: &GpuMat) -> bool {
        (
            self.dims,
            self.w,
            self.h,
            self.d,
            self.c,
            self.cstep,
            self.elempack,
            self.format,
        ) == (
            other.dims,
            other.w,
            other.h,
            other.d,
            other.c,
            other.cstep,
            other.elempack,
            other.format,
        )
    }

    /// Values stored, padding included.
    pub fn total(&self) -> usize {
        self.c * self.cstep * self.elempack
    }

    /// Its dims and shape together, as layers are asked about blobs.
    pub fn blob_shape(&self) -> crate::tensor::BlobShape {
        crate::tensor::BlobShape::new(self.dims, self.shape())
    }

    /// `[w, h, d, c]` in unpacked values along the packed dimension, as [`Mat::shape`] says.
    pub fn shape(&self) -> [usize; 4] {
        let p = self.elempack;
        match self.dims {
            1 => [self.c * p, 1, 1, 1],
            2 => [self.w, self.c * p, 1, 1],
            3 => [self.w, self.h, 1, self.c * p],
            _ => [self.w, self.h / self.d.max(1), self.d, self.c * p],
        }
    }

    /// Its extents along the four axes of GPU mats, `[w, h, d, c]` in packed elements along
    /// `c` (1-D mats lie along `c`, 2-D ones as `c` rows of `w`).
    pub fn space(&self) -> [usize; 4] {
        let d = self.d.max(1);
        [self.w, self.h / d, d, self.c]
    }

    /// The steps between stored values along its numpy axes (outermost first) of a pack1
    /// mat: channels `cstep` apart, a 4-D mat's slabs `w · h`, rows `w`.
    pub fn numpy_strides(&self) -> Vec<usize> {
        let [w, h, ..] = self.space();
        match self.dims {
            1 => vec![1],
            2 => vec![self.cstep, 1],
            3 => vec![self.cstep, w, 1],
            _ => vec![self.cstep, w * h, w, 1],
        }
    }
}

/// Elements between channel starts of a new `dims`-D GPU mat with `w × h` per channel: the
/// host mat's (1-D: 1, 2-D: w, 3-D: aligned like fp32 host mats, so casts never reshape).
pub fn gpu_cstep(dims: u8, w: usize, h: usize, elempack: usize) -> usize {
    match dims {
        1 => 1,
        2 => w,
        _ => cstep_for(w * h, 4 * elempack),
    }
}

/// The 3-D view (`w, h, c, cstep`) of a host mat's layout (a 4-D mat's rows are its
/// `h × d` rows).
pub(super) fn view_of(mat: &Mat) -> (usize, usize, usize, usize) {
    match mat.dims {
        1 => (1, 1, mat.w, 1),
        2 => (mat.w, 1, mat.h, mat.w),
        3 => (mat.w, mat.h, mat.c, mat.cstep),
        _ => (mat.w, mat.h * mat.d, mat.c, mat.cstep),
    }
}

/// The texel format of an image mat: the extension's `imfmtc1`/`imfmtc4` for its class
/// (one channel for elempack 1, four otherwise).
pub(super) fn image_format(format: StorageFormat, elempack: usize) -> Result<wgpu::TextureFormat> {
    let channels = if elempack == 1 { 1 } else { 4 };
    texel_format(format, channels).ok_or_else(|| {
        TensorError::TexelFormat {
            format: format!("{format:?}"),
            channels,
        }
        .into()
    })
}

/// What backs a GPU mat, for errors.
pub(super) fn backing(data: &GpuData) -> &'static str {
    match data {
        GpuData::Buffer(_) => "a buffer",
        GpuData::Image { .. } => "an image",
    }
}

/// Options for the variant that runs on a mat: with `image` exactly when it is image-backed.
pub(super) fn variant_options(options: OptionSet, image: bool) -> OptionSet {
    if image {
        options.with(Opt::Image)
    } else {
        options.without(Opt::Image)
    }
}

/// A download recorded into a recorder and not yet read ([`GpuMat::record_download`]).
#[derive(Debug)]
pub struct PendingDownload {
    pub(super) mat: GpuMat,
    /// The host-readable copy (fp32); none for image mats, read after the wait.
    pub(super) staging: Option<wgpu::Buffer>,
    /// Where the values land on the host, once [`PendingDownload::prepare`] made it.
    pub(super) host: Option<Vec<f32>>,
}

/// Bytes of a mat buffer: whole 32-byte blocks, so vec4/vec8 accesses over the flat buffer
/// (casts) never run past its end.
pub(super) fn mat_bytes(values: usize, format: StorageFormat) -> u64 {
    ((values * format.size()).div_ceil(32).max(1) * 32) as u64
}

/// The texture extent of a `w × h × c` image mat (pack8 takes two texels along x).
pub(super) fn image_extent(w: usize, h: usize, c: usize, elempack: usize) -> wgpu::Extent3d {
    wgpu::Extent3d {
        width: (w * if elempack == 8 { 2 } else { 1 }) as u32,
        height: h as u32,
        depth_or_array_layers: c as u32,
    }
}
