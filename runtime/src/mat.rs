//! Tensors: the host [`Mat`] (fp32, ncnn layout) and the device [`GpuMat`] (a buffer in a
//! variant's storage format), with uploads, downloads and repacking done on the GPU by the
//! built-in cast and packing shaders.

use crate::context::Context;
use crate::dispatch::Resource;
use crate::error::{Error, Result};
use crate::shaders::Shader;
use crate::specialize::Specialization;
use crate::storage::StorageFormat;
use crate::texture::texel_format;
use crate::{Opt, OptionSet};

/// A host tensor like ncnn's `Mat`: `c` channels of `w × h × d` elements, each element `elempack`
/// fp32 values; channel starts are `cstep` elements apart, aligned to 16 bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Mat {
    /// 1, 2, 3 or 4.
    pub dims: u8,
    /// Width.
    pub w: usize,
    /// Height.
    pub h: usize,
    /// Depth.
    pub d: usize,
    /// Channels, in packed elements (the real channel count is `c * elempack`).
    pub c: usize,
    /// Values per element: 1, 4 or 8.
    pub elempack: usize,
    /// Elements from one channel's start to the next.
    pub cstep: usize,
    /// The values, `c * cstep * elempack` of them.
    pub data: Vec<f32>,
}

/// Elements per channel once `w*h*d` elements of `elemsize` bytes are aligned to 16 bytes.
fn cstep_for(elements: usize, elemsize: usize) -> usize {
    (elements * elemsize).div_ceil(16) * 16 / elemsize
}

impl Mat {
    /// A zeroed 3-D mat (`dims` 3; `c` in packed elements).
    pub fn new_3d(w: usize, h: usize, c: usize, elempack: usize) -> Result<Mat> {
        if ![1, 4, 8].contains(&elempack) {
            return Err(Error::Shape(format!(
                "elempack {elempack}; expected 1, 4 or 8"
            )));
        }
        let cstep = cstep_for(w * h, 4 * elempack);
        Ok(Mat {
            dims: 3,
            w,
            h,
            d: 1,
            c,
            elempack,
            cstep,
            data: vec![0.0; c * cstep * elempack],
        })
    }

    /// A pack1 3-D mat filled from `values` laid out channel after channel (`w*h*c` of them).
    pub fn from_values(w: usize, h: usize, c: usize, values: &[f32]) -> Result<Mat> {
        if values.len() != w * h * c {
            return Err(Error::Shape(format!(
                "{} values for a {w}x{h}x{c} mat",
                values.len()
            )));
        }
        let mut m = Mat::new_3d(w, h, c, 1)?;
        for (q, chunk) in values.chunks(w * h).enumerate() {
            m.data[q * m.cstep..q * m.cstep + w * h].copy_from_slice(chunk);
        }
        Ok(m)
    }

    /// Value `k` (0..elempack) of element `i` (0..w*h*d) in packed channel `q`.
    pub fn at(&self, q: usize, i: usize, k: usize) -> f32 {
        self.data[(q * self.cstep + i) * self.elempack + k]
    }

    /// The same values repacked on the CPU (the reference for the GPU path).
    pub fn to_packing(&self, elempack: usize) -> Result<Mat> {
        let channels = self.c * self.elempack;
        if !channels.is_multiple_of(elempack) {
            return Err(Error::Shape(format!(
                "{channels} channels cannot be packed by {elempack}"
            )));
        }
        let mut out = Mat::new_3d(self.w, self.h, channels / elempack, elempack)?;
        out.dims = self.dims;
        out.d = self.d;
        let n = self.w * self.h * self.d;
        for ch in 0..channels {
            for i in 0..n {
                let v = self.at(ch / self.elempack, i, ch % self.elempack);
                let (q, k) = (ch / elempack, ch % elempack);
                out.data[(q * out.cstep + i) * elempack + k] = v;
            }
        }
        Ok(out)
    }
}

/// Where a [`GpuMat`]'s values live.
#[derive(Debug)]
pub enum GpuData {
    /// A storage buffer of `sfp*` values (`c` channels `cstep` elements apart).
    Buffer(wgpu::Buffer),
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
/// buffer-backed, or image-backed when those options include `image`.
#[derive(Debug)]
pub struct GpuMat {
    /// The buffer or image.
    pub data: GpuData,
    /// Width.
    pub w: usize,
    /// Height.
    pub h: usize,
    /// Channels, in packed elements.
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

impl GpuMat {
    /// What a dispatch binds for it.
    pub fn resource(&self) -> Resource<'_> {
        match &self.data {
            GpuData::Buffer(b) => Resource::Buffer(b),
            GpuData::Image { view, .. } => Resource::Texture(view),
        }
    }

    /// Its buffer, if buffer-backed.
    pub fn buffer(&self) -> Option<&wgpu::Buffer> {
        match &self.data {
            GpuData::Buffer(b) => Some(b),
            GpuData::Image { .. } => None,
        }
    }

    fn expect_buffer(&self) -> Result<&wgpu::Buffer> {
        self.buffer()
            .ok_or_else(|| Error::Shape("an image-backed mat where a buffer is needed".into()))
    }

    fn vec4_shape(&self) -> Result<[u32; 4]> {
        let per_channel = self.cstep * self.elempack;
        if !per_channel.is_multiple_of(4) {
            return Err(Error::Shape(format!(
                "channel of {per_channel} values is not a whole number of vec4"
            )));
        }
        let v = (per_channel / 4) as u32;
        Ok([v, 1, self.c as u32, v])
    }

    fn shape_words(&self) -> [u32; 4] {
        [
            self.w as u32,
            self.h as u32,
            self.c as u32,
            self.cstep as u32,
        ]
    }
}

/// The texel format of an image mat: the extension's `imfmtc1`/`imfmtc4` for its class
/// (one channel for elempack 1, four otherwise).
fn image_format(format: StorageFormat, elempack: usize) -> Result<wgpu::TextureFormat> {
    let channels = if elempack == 1 { 1 } else { 4 };
    texel_format(format, channels)
        .ok_or_else(|| Error::Shape(format!("no {format:?} texel of {channels} channels")))
}

/// Options for the variant that runs on a mat: with `image` exactly when it is image-backed.
fn variant_options(options: OptionSet, image: bool) -> OptionSet {
    if image {
        options.with(Opt::Image)
    } else {
        options.without(Opt::Image)
    }
}

impl Context {
    /// Uploads `mat` for shaders of variant `options`. Buffers: fp32 goes up as is, and fp16
    /// formats are made on the GPU by `cast_fp32_to_fp16`. With `image` in `options` the mat
    /// becomes an image of the class's texel format (texels are converted while copied in).
    pub fn upload_mat(&self, mat: &Mat, options: OptionSet) -> Result<GpuMat> {
        if options.contains(Opt::Image) {
            return self.upload_image_mat(mat, options);
        }
        let fp32 = GpuMat {
            data: GpuData::Buffer(self.upload(&StorageFormat::Fp32.encode(&mat.data))),
            w: mat.w,
            h: mat.h,
            c: mat.c,
            elempack: mat.elempack,
            cstep: mat.cstep,
            format: StorageFormat::Fp32,
            options,
        };
        match StorageFormat::of(options, mat.elempack) {
            StorageFormat::Fp32 => Ok(fp32),
            StorageFormat::Fp16 => self.cast(&fp32, Shader::CastFp32ToFp16, StorageFormat::Fp16),
        }
    }

    /// Downloads `m` into a host mat; fp16 buffers are widened on the GPU by `cast_fp16_to_fp32`.
    pub fn download_mat(&self, m: &GpuMat) -> Result<Mat> {
        if let GpuData::Image { texture, .. } = &m.data {
            return self.download_image_mat(m, texture);
        }
        let fp32 = match m.format {
            StorageFormat::Fp32 => None,
            StorageFormat::Fp16 => {
                Some(self.cast(m, Shader::CastFp16ToFp32, StorageFormat::Fp32)?)
            }
        };
        let src = fp32.as_ref().unwrap_or(m);
        let n = m.c * m.cstep * m.elempack;
        let data = StorageFormat::Fp32.decode(&self.download(src.expect_buffer()?)?, n);
        Ok(Mat {
            dims: 3,
            w: m.w,
            h: m.h,
            d: 1,
            c: m.c,
            elempack: m.elempack,
            cstep: m.cstep,
            data,
        })
    }

    fn cast(&self, m: &GpuMat, shader: Shader, to: StorageFormat) -> Result<GpuMat> {
        let options = variant_options(m.options, false);
        let pipeline = self.pipeline(shader.module(), options, &Specialization::default())?;
        // the cast variant must store exactly the fp16 layout the mat's options use
        let fp16_side = StorageFormat::of(pipeline.options, 4);
        if fp16_side != StorageFormat::Fp16 {
            return Err(Error::Shape(format!(
                "no fp16 cast variant for options {} (got {})",
                m.options.name(),
                pipeline.options.name()
            )));
        }
        let shape = m.vec4_shape()?;
        let values = m.c * m.cstep * m.elempack;
        let out = self.storage_buffer((values * to.size()) as u64);
        let mut rec = self.recorder();
        rec.dispatch(
            &pipeline,
            &[m.expect_buffer()?, &out],
            &shape,
            [shape[0], 1, shape[2]],
        )?;
        rec.submit_and_wait()?;
        Ok(GpuMat {
            data: GpuData::Buffer(out),
            w: m.w,
            h: m.h,
            c: m.c,
            elempack: m.elempack,
            cstep: m.cstep,
            format: to,
            options: m.options,
        })
    }

    /// Repacks `m` to `elempack` on the GPU with the built-in packing shaders (1↔4, 4↔8, and
    /// 1↔8 through 4). The result keeps `m`'s options.
    pub fn convert_packing(&self, m: &GpuMat, elempack: usize) -> Result<GpuMat> {
        let channels = m.c * m.elempack;
        if ![1, 4, 8].contains(&elempack) || !channels.is_multiple_of(elempack) {
            return Err(Error::Shape(format!(
                "{channels} channels of elempack {} cannot become elempack {elempack}",
                m.elempack
            )));
        }
        match (m.elempack, elempack) {
            (a, b) if a == b => self.repack(m, m.elempack, None),
            (1, 8) => self.convert_packing(&self.convert_packing(m, 4)?, 8),
            (8, 1) => self.convert_packing(&self.convert_packing(m, 4)?, 1),
            (1, 4) => self.repack(m, 4, Some((Shader::Packing1to4, true))),
            (4, 1) => self.repack(m, 1, Some((Shader::Packing4to1, false))),
            (4, 8) => self.repack(m, 8, Some((Shader::Packing4to8, true))),
            (8, 4) => self.repack(m, 4, Some((Shader::Packing8to4, false))),
            (a, b) => Err(Error::Shape(format!("no packing from {a} to {b}"))),
        }
    }

    /// `shader` = (packing shader, dispatched over the output); `None` copies.
    fn repack(
        &self,
        m: &GpuMat,
        elempack: usize,
        shader: Option<(Shader, bool)>,
    ) -> Result<GpuMat> {
        let channels = m.c * m.elempack;
        let c = channels / elempack;
        let cstep = cstep_for(m.w * m.h, 4 * elempack);
        let format = StorageFormat::of(m.options, elempack);
        let image = matches!(m.data, GpuData::Image { .. });
        let data = if image {
            let extent = image_extent(m.w, m.h, c, elempack);
            let (texture, view) = self.upload_texture(
                wgpu::TextureDimension::D3,
                extent,
                image_format(format, elempack)?,
                &[],
            )?;
            GpuData::Image { texture, view }
        } else {
            GpuData::Buffer(self.storage_buffer((c * cstep * elempack * format.size()) as u64))
        };
        let result = GpuMat {
            data,
            w: m.w,
            h: m.h,
            c,
            elempack,
            cstep,
            format,
            options: m.options,
        };
        let Some((shader, over_output)) = shader else {
            let mut enc = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("copy"),
                });
            match (&m.data, &result.data) {
                (GpuData::Buffer(from), GpuData::Buffer(to)) => {
                    enc.copy_buffer_to_buffer(from, 0, to, 0, from.size().min(to.size()))
                }
                (GpuData::Image { texture: from, .. }, GpuData::Image { texture: to, .. }) => enc
                    .copy_texture_to_texture(from.as_image_copy(), to.as_image_copy(), from.size()),
                _ => return Err(Error::Shape("copy between a buffer and an image".into())),
            }
            self.queue.submit([enc.finish()]);
            return Ok(result);
        };
        let options = variant_options(m.options, image);
        let pipeline = self.pipeline(shader.module(), options, &Specialization::default())?;
        let (fin, fout) = (
            StorageFormat::of(pipeline.options, m.elempack),
            StorageFormat::of(pipeline.options, elempack),
        );
        if fin != m.format || fout != format || pipeline.options.contains(Opt::Image) != image {
            return Err(Error::Shape(format!(
                "packing variant {} stores {fin:?}/{fout:?}, the mats are {:?}/{format:?}",
                pipeline.options.name(),
                m.format
            )));
        }
        let mut push = m.shape_words().to_vec();
        push.extend(result.shape_words());
        let grid = if over_output { &result } else { m };
        let mut rec = self.recorder();
        rec.dispatch(
            &pipeline,
            &[m, &result],
            &push,
            [grid.w as u32, grid.h as u32, grid.c as u32],
        )?;
        rec.submit_and_wait()?;
        Ok(result)
    }

    fn upload_image_mat(&self, mat: &Mat, options: OptionSet) -> Result<GpuMat> {
        let format = StorageFormat::of(options, mat.elempack);
        let plane = mat.w * mat.h * mat.elempack;
        if mat.cstep * mat.elempack < plane || mat.data.len() < mat.c * mat.cstep * mat.elempack {
            return Err(Error::Shape(format!(
                "{} values with cstep {} for a {}x{}x{} mat of elempack {}",
                mat.data.len(),
                mat.cstep,
                mat.w,
                mat.h,
                mat.c,
                mat.elempack
            )));
        }
        let values: Vec<f32> = (0..mat.c)
            .flat_map(|q| {
                let start = q * mat.cstep * mat.elempack;
                mat.data[start..start + plane].iter().copied()
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
        for (q, chunk) in values.chunks(plane).take(m.c).enumerate() {
            let start = q * out.cstep * m.elempack;
            out.data[start..start + chunk.len()].copy_from_slice(chunk);
        }
        Ok(out)
    }
}

/// The texture extent of a `w × h × c` image mat (pack8 takes two texels along x).
fn image_extent(w: usize, h: usize, c: usize, elempack: usize) -> wgpu::Extent3d {
    wgpu::Extent3d {
        width: (w * if elempack == 8 { 2 } else { 1 }) as u32,
        height: h as u32,
        depth_or_array_layers: c as u32,
    }
}
