//! The device tensor [`GpuMat`] (a buffer in a variant's storage format, or a 3-D image), with
//! uploads, downloads and repacking done on the GPU by the built-in cast and packing shaders.

use crate::error::{Error, Result, TensorError};
use crate::gpu::DeviceBuffer;
use crate::gpu::context::Context;
use crate::gpu::recorder::{Recorder, Resource};
use crate::gpu::specialize::Specialization;
use crate::shaders::Shader;
use crate::tensor::mat::{ElemType, Mat, MatData, cstep_for};
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
/// which is the same memory as the host layout.
#[derive(Clone, Debug)]
pub struct GpuMat {
    /// The buffer or image.
    pub data: GpuData,
    /// 1, 2 or 3, as the host mat's.
    pub dims: u8,
    /// Width of the 3-D view.
    pub w: usize,
    /// Height of the 3-D view.
    pub h: usize,
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

    fn expect_buffer(&self) -> Result<&wgpu::Buffer> {
        self.buffer().ok_or(Error::Tensor(TensorError::Backing {
            needed: "a buffer",
            got: backing(&self.data),
        }))
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
            self.c,
            self.cstep,
            self.elempack,
            self.format,
        ) == (
            other.dims,
            other.w,
            other.h,
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

    /// `[w, h, d, c]` in unpacked values along the packed dimension, as [`Mat::shape`] says.
    pub fn shape(&self) -> [usize; 4] {
        let p = self.elempack;
        match self.dims {
            1 => [self.c * p, 1, 1, 1],
            2 => [self.w, self.c * p, 1, 1],
            _ => [self.w, self.h, 1, self.c * p],
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

/// The 3-D view (`w, h, c, cstep`) of a host mat's layout.
fn view_of(mat: &Mat) -> (usize, usize, usize, usize) {
    match mat.dims {
        1 => (1, 1, mat.w, 1),
        2 => (mat.w, 1, mat.h, mat.w),
        _ => (mat.w, mat.h, mat.c, mat.cstep),
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
fn backing(data: &GpuData) -> &'static str {
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

/// A download recorded into a recorder and not yet read ([`Context::record_download`]).
#[derive(Debug)]
pub struct PendingDownload {
    mat: GpuMat,
    /// The host-readable copy (fp32); none for image mats, read after the wait.
    staging: Option<wgpu::Buffer>,
}

/// Bytes of a mat buffer: whole 32-byte blocks, so vec4/vec8 accesses over the flat buffer
/// (casts) never run past its end.
pub(super) fn mat_bytes(values: usize, format: StorageFormat) -> u64 {
    ((values * format.size()).div_ceil(32).max(1) * 32) as u64
}

impl Context {
    /// Uploads `mat` for shaders of variant `options` and waits. See [`Context::record_upload`].
    pub fn upload_mat(&self, mat: &Mat, options: OptionSet) -> Result<GpuMat> {
        let mut rec = self.recorder();
        let m = self.record_upload(&mut rec, mat, options)?;
        rec.submit_and_wait()?;
        Ok(m)
    }

    /// Uploads `mat` for shaders of variant `options`, recording any conversion into `rec`.
    /// Buffers: fp32 goes up as is, and fp16 formats are made on the GPU by
    /// `cast_fp32_to_fp16`. With `image` in `options` the mat becomes an image of the class's
    /// texel format (texels are converted while copied in). Mats of other element types are
    /// widened to fp32 on the host first.
    pub fn record_upload(
        &self,
        rec: &mut Recorder<'_>,
        mat: &Mat,
        options: OptionSet,
    ) -> Result<GpuMat> {
        if mat.elemtype() != ElemType::F32 {
            return self.record_upload(rec, &mat.cast(ElemType::F32), options);
        }
        if mat.dims > 3 {
            return Err(TensorError::Dims {
                dims: mat.dims.into(),
                takes: "GPU mats are 1-D to 3-D",
            }
            .into());
        }
        if options.contains(Opt::Image) {
            return self.upload_image_mat(mat, options);
        }
        let (w, h, c, cstep) = view_of(mat);
        let values = mat.f32()?;
        // the host's bytes as they are where they are the buffer's (little-endian) layout
        let bytes: std::borrow::Cow<'_, [u8]> = if cfg!(target_endian = "little") {
            bytemuck::cast_slice(values).into()
        } else {
            StorageFormat::Fp32.encode(values).into()
        };
        let size = mat_bytes(mat.data.len(), StorageFormat::Fp32);
        let fp32 = GpuMat {
            data: GpuData::Buffer(self.upload_padded(&bytes, size)),
            dims: mat.dims,
            w,
            h,
            c,
            elempack: mat.elempack,
            cstep,
            format: StorageFormat::Fp32,
            options,
        };
        match StorageFormat::of(options, mat.elempack) {
            StorageFormat::Fp32 => Ok(fp32),
            StorageFormat::Fp16 => {
                self.record_cast(rec, &fp32, Shader::CastFp32ToFp16, StorageFormat::Fp16)
            }
        }
    }

    /// Downloads `m` into a host fp32 mat (waits); fp16 buffers are widened on the GPU by
    /// `cast_fp16_to_fp32` first.
    pub fn download_mat(&self, m: &GpuMat) -> Result<Mat> {
        if let GpuData::Image { texture, .. } = &m.data {
            return self.download_image_mat(m, texture);
        }
        let mut rec = self.recorder();
        let pending = self.record_download(&mut rec, m)?;
        rec.submit_and_wait()?;
        self.finish_download(pending)
    }

    /// Records the download of `m` into `rec` (the fp16 widening and the copy to a host-
    /// readable buffer), so that it rides in the submission of the work that makes `m`;
    /// [`Context::finish_download`] reads it once `rec` has been waited for.
    pub fn record_download(&self, rec: &mut Recorder<'_>, m: &GpuMat) -> Result<PendingDownload> {
        if let GpuData::Image { .. } = &m.data {
            // images are read back on their own after the wait
            return Ok(PendingDownload {
                mat: m.clone(),
                staging: None,
            });
        }
        let wide = match m.format {
            StorageFormat::Fp32 => None,
            StorageFormat::Fp16 => {
                Some(self.record_cast(rec, m, Shader::CastFp16ToFp32, StorageFormat::Fp32)?)
            }
        };
        let staging = rec.record_readback(wide.as_ref().unwrap_or(m).expect_buffer()?);
        Ok(PendingDownload {
            mat: m.clone(),
            staging: Some(staging),
        })
    }

    /// The host mat of a download recorded by [`Context::record_download`], after its
    /// recording was submitted and waited for.
    pub fn finish_download(&self, pending: PendingDownload) -> Result<Mat> {
        let m = &pending.mat;
        match (&pending.staging, &m.data) {
            (None, GpuData::Image { texture, .. }) => self.download_image_mat(m, texture),
            (Some(staging), _) => {
                let data = StorageFormat::Fp32.decode(&self.read_mapped(staging)?, m.total());
                self.host_mat(m, MatData::F32(data))
            }
            (None, data) => Err(TensorError::Backing {
                needed: "a staged copy",
                got: backing(data),
            }
            .into()),
        }
    }

    /// A host mat of `m`'s shape holding `data` (laid out as `m`).
    fn host_mat(&self, m: &GpuMat, data: MatData) -> Result<Mat> {
        let s = m.shape();
        let p = m.elempack;
        let packed = match m.dims {
            1 => [s[0] / p, 1, 1, 1],
            2 => [s[0], s[1] / p, 1, 1],
            _ => [s[0], s[1], 1, s[3] / p],
        };
        let mut out = Mat::zeros(m.dims, packed, p, ElemType::F32)?;
        if out.data.len() != data.len() || view_of(&out).3 != m.cstep {
            return Err(TensorError::HostLayout {
                values: data.len(),
                cstep: m.cstep,
                host: out.data.len(),
            }
            .into());
        }
        out.data = data;
        Ok(out)
    }

    fn record_cast(
        &self,
        rec: &mut Recorder<'_>,
        m: &GpuMat,
        shader: Shader,
        to: StorageFormat,
    ) -> Result<GpuMat> {
        let options = variant_options(m.options, false);
        let pipeline = self.pipeline(shader.module(), options, &Specialization::default())?;
        // the cast variant must store exactly the fp16 layout the mat's options use
        let fp16_side = StorageFormat::of(pipeline.options, 4);
        if fp16_side != StorageFormat::Fp16 {
            return Err(TensorError::VariantStorage {
                shader: "cast".into(),
                variant: pipeline.options.name(),
                stores: format!("{fp16_side:?}"),
                mats: format!("fp16 ({})", m.options.name()),
            }
            .into());
        }
        // the whole buffer as rows of vec4s (buffers hold whole 32-byte blocks): one row, or
        // rows of a width that divides the count when one row needs more workgroups than a
        // dispatch dimension allows
        let v = m.total().div_ceil(4);
        let max_x = self.limits().max_compute_workgroups_per_dimension as usize
            * pipeline.local_size[0] as usize;
        let w = if v <= max_x {
            v
        } else {
            (1..=max_x)
                .rev()
                .find(|w| v.is_multiple_of(*w))
                .unwrap_or(1)
        };
        let (w, h) = (w as u32, (v / w) as u32);
        let out = self.storage_buffer(mat_bytes(m.total(), to));
        rec.dispatch(
            &pipeline,
            &[m.expect_buffer()?, &out],
            &[w, h, 1, w * h],
            [w, h, 1],
        )?;
        Ok(GpuMat {
            data: GpuData::Buffer(out),
            format: to,
            ..m.clone()
        })
    }

    /// A new buffer mat (contents undefined) in the storage format of `options`: `dims`-D,
    /// `w × h` per channel (1-D blobs are `c` channels of one value, 2-D ones `c` rows of `w`,
    /// as GPU mats lay them out), `c` channels of `elempack` values.
    pub fn alloc_mat(
        &self,
        dims: u8,
        [w, h, c]: [usize; 3],
        elempack: usize,
        options: OptionSet,
    ) -> GpuMat {
        let format = StorageFormat::of(options, elempack);
        let cstep = gpu_cstep(dims, w, h, elempack);
        GpuMat {
            data: GpuData::Buffer(self.storage_buffer(mat_bytes(c * cstep * elempack, format))),
            dims,
            w,
            h,
            c,
            elempack,
            cstep,
            format,
            options,
        }
    }

    /// A new mat of `m`'s shape, packing, format and options (contents undefined).
    pub fn alloc_like(&self, m: &GpuMat) -> Result<GpuMat> {
        let data = match &m.data {
            GpuData::Buffer(_) => GpuData::Buffer(self.storage_buffer(m.byte_size())),
            GpuData::Image { texture, .. } => {
                let (texture, view) = self.upload_texture(
                    texture.dimension(),
                    texture.size(),
                    texture.format(),
                    &[],
                )?;
                GpuData::Image { texture, view }
            }
        };
        Ok(GpuMat { data, ..m.clone() })
    }

    /// A device copy of `m` that no other mat shares (recorded into `rec`).
    pub fn record_copy(&self, rec: &mut Recorder<'_>, m: &GpuMat) -> Result<GpuMat> {
        let copy = self.alloc_like(m)?;
        match (&m.data, &copy.data) {
            (GpuData::Buffer(from), GpuData::Buffer(to)) => rec.copy_buffer(from, to),
            (GpuData::Image { texture: from, .. }, GpuData::Image { texture: to, .. }) => {
                rec.copy_texture(from, to)
            }
            (from, to) => {
                return Err(TensorError::Backing {
                    needed: backing(from),
                    got: backing(to),
                }
                .into());
            }
        }
        Ok(copy)
    }

    fn upload_image_mat(&self, mat: &Mat, options: OptionSet) -> Result<GpuMat> {
        if mat.dims != 3 {
            return Err(TensorError::Dims {
                dims: mat.dims.into(),
                takes: "image mats are 3-D",
            }
            .into());
        }
        let format = StorageFormat::of(options, mat.elempack);
        let plane = mat.w * mat.h * mat.elempack;
        let data = mat.f32()?;
        let values: Vec<f32> = (0..mat.c)
            .flat_map(|q| {
                let start = q * mat.cstep * mat.elempack;
                data[start..start + plane].iter().copied()
            })
            .collect();
        let (texture, view) = self.upload_texture(
            wgpu::TextureDimension::D3,
            image_extent(mat.w, mat.h, mat.c, mat.elempack),
            image_format(format, mat.elempack)?,
            &values,
        )?;
        Ok(GpuMat {
            data: GpuData::Image { texture, view },
            dims: 3,
            w: mat.w,
            h: mat.h,
            c: mat.c,
            elempack: mat.elempack,
            cstep: mat.cstep,
            format,
            options,
        })
    }

    fn download_image_mat(&self, m: &GpuMat, texture: &wgpu::Texture) -> Result<Mat> {
        let values = self.download_texture(texture)?;
        let mut out = Mat::new_3d(m.w, m.h, m.c, m.elempack)?;
        let plane = m.w * m.h * m.elempack;
        let cstep = out.cstep;
        let data = out.f32_mut()?;
        for (q, chunk) in values.chunks(plane).take(m.c).enumerate() {
            let start = q * cstep * m.elempack;
            data[start..start + chunk.len()].copy_from_slice(chunk);
        }
        Ok(out)
    }
}

/// The texture extent of a `w × h × c` image mat (pack8 takes two texels along x).
pub(super) fn image_extent(w: usize, h: usize, c: usize, elempack: usize) -> wgpu::Extent3d {
    wgpu::Extent3d {
        width: (w * if elempack == 8 { 2 } else { 1 }) as u32,
        height: h as u32,
        depth_or_array_layers: c as u32,
    }
}
