//! Moving [`GpuMat`]s: uploads, downloads (waited for, or recorded into a submission), fresh
//! and copied device mats. Casts between fp32 and fp16 buffers run on the GPU through the
//! built-in cast shaders; image mats go through textures.

use crate::error::{Result, TensorError};
use crate::gpu::context::Context;
use crate::gpu::recorder::Recorder;
use crate::gpu::specialize::Specialization;
use crate::shaders::Shader;
use crate::tensor::gpu_mat::{
    GpuData, GpuMat, PendingDownload, backing, gpu_cstep, image_extent, image_format, mat_bytes,
    view_of,
};
use crate::tensor::mat::{ElemType, Mat, MatData};
use crate::tensor::storage::StorageFormat;
use crate::tensor::texture::{download_texture, upload_texture};
use crate::{Opt, OptionSet};

impl GpuMat {
    /// Uploads `mat` for shaders of variant `options` and waits. See [`GpuMat::record_upload`].
    pub fn upload(ctx: &Context, mat: &Mat, options: OptionSet) -> Result<GpuMat> {
        let mut rec = ctx.recorder();
        let m = GpuMat::record_upload(&mut rec, mat, options)?;
        rec.submit_and_wait()?;
        Ok(m)
    }

    /// Uploads `mat` for shaders of variant `options`, recording any conversion into `rec`.
    /// Buffers: fp32 goes up as is, and fp16 formats are converted on the host straight into
    /// the staging memory. With `image` in `options` the mat becomes an image of the class's
    /// texel format (texels are converted while copied in). Mats of other element types are
    /// widened to fp32 on the host first.
    pub fn record_upload(rec: &mut Recorder<'_>, mat: &Mat, options: OptionSet) -> Result<GpuMat> {
        if mat.elemtype() != ElemType::F32 {
            return GpuMat::record_upload(rec, &mat.cast(ElemType::F32), options);
        }
        let ctx = rec.context();
        if options.contains(Opt::Image) {
            return GpuMat::upload_image(ctx, mat, options);
        }
        let (w, h, c, cstep) = view_of(mat);
        let values = mat.f32()?;
        // fp16 is converted on the host on its way into the staging memory, as ncnn does:
        // half the bytes to copy, and no cast dispatch
        let format = StorageFormat::of(options, mat.elempack);
        let size = mat_bytes(mat.data.len(), format);
        let data = ctx.upload_with(size, |view| format.encode_into(values, view))?;
        Ok(GpuMat {
            data: GpuData::Buffer(data),
            dims: mat.dims,
            w,
            h,
            d: if mat.dims == 4 { mat.d } else { 1 },
            c,
            elempack: mat.elempack,
            cstep,
            format,
            options,
        })
    }

    /// Downloads `m` into a host fp32 mat (waits); fp16 buffers are read back as they are and
    /// widened on the host.
    pub fn download(&self, ctx: &Context) -> Result<Mat> {
        if let GpuData::Image { texture, .. } = &self.data {
            return self.download_image(ctx, texture);
        }
        let mut rec = ctx.recorder();
        let pending = self.record_download(&mut rec)?;
        rec.submit_and_wait()?;
        pending.finish(ctx)
    }

    /// Records the download of `m` into `rec` (the copy to a host-readable buffer), so that
    /// it rides in the submission of the work that makes `m`;
    /// [`PendingDownload::finish`] reads it once `rec` has been waited for.
    pub fn record_download(&self, rec: &mut Recorder<'_>) -> Result<PendingDownload> {
        let m = self;
        if let GpuData::Image { .. } = &m.data {
            // images are read back on their own after the wait
            return Ok(PendingDownload {
                mat: m.clone(),
                staging: None,
                host: None,
            });
        }
        // fp16 stays fp16 on the way: half the bytes to read back, widened on the host
        let staging = rec.record_readback(m.expect_buffer()?);
        Ok(PendingDownload {
            mat: m.clone(),
            staging: Some(staging),
            host: None,
        })
    }

    /// A host mat of `m`'s shape holding `data` (laid out as `m`).
    fn host_mat(&self, data: MatData) -> Result<Mat> {
        let m = self;
        let s = m.shape();
        let p = m.elempack;
        let packed = match m.dims {
            1 => [s[0] / p, 1, 1, 1],
            2 => [s[0], s[1] / p, 1, 1],
            _ => [s[0], s[1], s[2], s[3] / p],
        };
        // the header alone: zeroing values that `data` replaces was a whole serial pass over
        // the output (8 MB: most of the host's time in a run of the DCNv2 block on an H200)
        let (mut out, n) = Mat::layout(m.dims, packed, p, ElemType::F32)?;
        out.data = data;
        if n != out.data.len() || view_of(&out).3 != m.cstep {
            return Err(TensorError::HostLayout {
                values: out.data.len(),
                cstep: m.cstep,
                host: n,
            }
            .into());
        }
        Ok(out)
    }

    /// A new buffer mat (contents undefined) in the storage format of `options`: `dims`-D,
    /// `w × h` per channel (1-D blobs are `c` channels of one value, 2-D ones `c` rows of `w`,
    /// as GPU mats lay them out), `c` channels of `elempack` values.
    pub fn alloc(
        ctx: &Context,
        dims: u8,
        [w, h, c]: [usize; 3],
        elempack: usize,
        options: OptionSet,
    ) -> Result<GpuMat> {
        GpuMat::alloc_space(ctx, dims, [w, h, 1, c], elempack, options)
    }

    /// [`GpuMat::alloc`] over the four axes of [`GpuMat::space`]: `d` slabs of `w × h` per
    /// channel (4-D mats).
    pub fn alloc_space(
        ctx: &Context,
        dims: u8,
        space: [usize; 4],
        elempack: usize,
        options: OptionSet,
    ) -> Result<GpuMat> {
        let format = StorageFormat::of(options, elempack);
        GpuMat::alloc_format(ctx, dims, space, elempack, (options, format))
    }

    /// [`GpuMat::alloc_space`] with its buffer sized for `spare` more channels (blocks of
    /// `elempack`) past its own, where that still fits one binding of the device (else
    /// without): room for a layer to append to it in place.
    pub(crate) fn alloc_space_with_room(
        ctx: &Context,
        dims: u8,
        [w, h, d, c]: [usize; 4],
        (elempack, spare): (usize, usize),
        options: OptionSet,
    ) -> Result<GpuMat> {
        let format = StorageFormat::of(options, elempack);
        // (the product checked first, as alloc_format does, before gpu_cstep multiplies)
        let total = (w.checked_mul(h).and_then(|p| p.checked_mul(d)))
            .and_then(|p| p.checked_mul(c.checked_add(spare)?))
            .and_then(|n| n.checked_mul(elempack * 4 + 64));
        let bytes = total.map(|_| {
            let cstep = gpu_cstep(dims, w, h * d, elempack);
            ((c + spare) * cstep * elempack * format.size()) as u64
        });
        let room = spare > 0 && bytes.is_some_and(|b| b + 32 <= ctx.largest_mat_bytes());
        let blocks = if room { c + spare } else { c };
        let mut m =
            GpuMat::alloc_format(ctx, dims, [w, h, d, blocks], elempack, (options, format))?;
        m.c = c;
        Ok(m)
    }

    /// A new 3-D buffer mat of int8 storage at `scale` (contents undefined): `w × h`, `c`
    /// channels of `elempack` levels, for shaders of `options` that write int8 storage.
    pub fn alloc_int8(
        ctx: &Context,
        [w, h, c]: [usize; 3],
        elempack: usize,
        (options, scale): (OptionSet, f32),
    ) -> Result<GpuMat> {
        let format = StorageFormat::Int8(crate::tensor::Int8Scale::new(scale));
        GpuMat::alloc_format(ctx, 3, [w, h, 1, c], elempack, (options, format))
    }

    /// [`GpuMat::alloc_space`] in storage format `format` (the format of another mat: a blob's
    /// rows put together from its bands, int8 storage included).
    pub(crate) fn alloc_format(
        ctx: &Context,
        dims: u8,
        [w, h, d, c]: [usize; 4],
        elempack: usize,
        (options, format): (OptionSet, StorageFormat),
    ) -> Result<GpuMat> {
        let too_large = TensorError::TooLarge {
            shape: [w, h, d, c],
        };
        // checked here, before any product below could wrap: a shape no device holds is an
        // error, not a small buffer
        (w.checked_mul(h).and_then(|p| p.checked_mul(d)))
            .and_then(|p| p.checked_mul(c))
            .and_then(|n| n.checked_mul(elempack * 4 + 64))
            .ok_or(too_large)?;
        let cstep = gpu_cstep(dims, w, h * d, elempack);
        let bytes = mat_bytes(c * cstep * elempack, format);
        Ok(GpuMat {
            data: GpuData::Buffer(ctx.storage_buffer(bytes)?),
            dims,
            w,
            h: h * d,
            d,
            c,
            elempack,
            cstep,
            format,
            options,
        })
    }

    /// A new mat of `m`'s shape, packing, format and options (contents undefined).
    pub fn alloc_like(&self, ctx: &Context) -> Result<GpuMat> {
        let data = match &self.data {
            GpuData::Buffer(_) => GpuData::Buffer(ctx.storage_buffer(self.byte_size())?),
            GpuData::Image { texture, .. } => {
                let (texture, view) = upload_texture(
                    ctx,
                    texture.dimension(),
                    texture.size(),
                    texture.format(),
                    &[],
                )?;
                GpuData::Image { texture, view }
            }
        };
        Ok(GpuMat {
            data,
            ..self.clone()
        })
    }

    /// A device copy of `m` that no other mat shares (recorded into `rec`).
    pub fn record_copy(&self, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let copy = self.alloc_like(rec.context())?;
        match (&self.data, &copy.data) {
            (GpuData::Buffer(from), GpuData::Buffer(to)) => {
                let bytes = from.size().min(to.size());
                let bindable = rec.context().limits().max_storage_buffer_binding_size;
                if bytes == 0 || bytes % 16 != 0 || bytes > bindable {
                    rec.copy_buffer(from, to)
                } else {
                    // a shader, not a transfer command: NVIDIA's copy ran at a fifth of the
                    // memory's bandwidth (concat_flat.comp with one input, from group 0)
                    let ctx = rec.context();
                    let module = Shader::ConcatFlat.module();
                    let pipeline =
                        ctx.pipeline(module, OptionSet::FP32, &Specialization::default())?;
                    let n = (bytes / 16) as usize;
                    let row = n.clamp(1, 1 << 20);
                    rec.dispatch(
                        &pipeline,
                        &[self, self, &copy],
                        &[n as u32, 0, row as u32, 0],
                        [row as u32, n.div_ceil(row) as u32, 1],
                    )?;
                }
            }
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

    fn upload_image(ctx: &Context, mat: &Mat, options: OptionSet) -> Result<GpuMat> {
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
        let (texture, view) = upload_texture(
            ctx,
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
            d: 1,
            c: mat.c,
            elempack: mat.elempack,
            cstep: mat.cstep,
            format,
            options,
        })
    }

    fn download_image(&self, ctx: &Context, texture: &wgpu::Texture) -> Result<Mat> {
        let m = self;
        let values = download_texture(ctx, texture)?;
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

impl PendingDownload {
    /// Allocates the host memory the values will land in; from 1 MiB, writes every page of
    /// it over the threads, so that the page faults (a 512×512×3 output is 3 MB, 768 fresh
    /// pages: about 0.7 ms of an H200 host's time, most of a super-resolution run's read
    /// back) are taken while the device still works: call it between the submission and the
    /// wait.
    pub fn prepare(&mut self) {
        use rayon::prelude::*;
        // from 1 MiB, over the threads
        const LARGE: usize = 1 << 18;
        if self.staging.is_some() && self.host.is_none() {
            let n = self.mat.total();
            // a dropped output's memory, pages already mapped: nothing to write first
            if let Some(host) = super::pool::reused(n) {
                self.host = Some(host);
                return;
            }
            let mut host = Vec::with_capacity(n);
            if n >= LARGE {
                // written value by value: a `resize` of fresh capacity compiles to `calloc`,
                // whose pages stay unmapped until the decode writes them (on a 2-core host,
                // 8 MB then took 0.81 ms to allocate and write, 0.37 ms prepared this way)
                host.par_extend(rayon::iter::repeat_n(0.0f32, n));
            } else {
                host.resize(n, 0.0f32);
            }
            self.host = Some(host);
        }
    }

    /// The host mat of a download recorded by [`GpuMat::record_download`], after its
    /// recording was submitted and waited for.
    pub fn finish(self, ctx: &Context) -> Result<Mat> {
        let m = &self.mat;
        match (self.staging, &m.data) {
            (None, GpuData::Image { texture, .. }) => m.download_image(ctx, texture),
            (Some(staging), _) => {
                let total = m.total();
                let data = ctx.read_back_with(staging, |b| match self.host {
                    Some(mut host) => {
                        let count = m.format.decode_parallel_into(b, &mut host);
                        host.truncate(count);
                        host
                    }
                    None => m.format.decode_parallel(b, total),
                })?;
                m.host_mat(MatData::F32(data))
            }
            (None, data) => Err(TensorError::Backing {
                needed: "a staged copy",
                got: backing(data),
            }
            .into()),
        }
    }
}
