//! Tensors: the host [`Mat`] (fp32, ncnn layout) and the device [`GpuMat`] (a buffer in a
//! variant's storage format), with uploads, downloads and repacking done on the GPU by the
//! built-in cast and packing shaders.

use crate::OptionSet;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::shaders::Shader;
use crate::specialize::Specialization;
use crate::storage::StorageFormat;

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

/// A tensor on the device: a buffer holding `sfp*` data of the variant options it was made for.
#[derive(Debug)]
pub struct GpuMat {
    /// The storage buffer.
    pub buffer: wgpu::Buffer,
    /// Width.
    pub w: usize,
    /// Height.
    pub h: usize,
    /// Channels, in packed elements.
    pub c: usize,
    /// Values per element.
    pub elempack: usize,
    /// Elements between channel starts (the host mat's, so casts never reshape).
    pub cstep: usize,
    /// How values are stored.
    pub format: StorageFormat,
    /// The options whose shaders read and write it.
    pub options: OptionSet,
}

impl GpuMat {
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

impl Context {
    /// Uploads `mat` for shaders of variant `options`: fp32 goes up as is, and fp16 formats are made
    /// on the GPU by `cast_fp32_to_fp16`.
    pub fn upload_mat(&self, mat: &Mat, options: OptionSet) -> Result<GpuMat> {
        let fp32 = GpuMat {
            buffer: self.upload(&StorageFormat::Fp32.encode(&mat.data)),
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

    /// Downloads `m` into a host mat; fp16 data is widened on the GPU by `cast_fp16_to_fp32`.
    pub fn download_mat(&self, m: &GpuMat) -> Result<Mat> {
        let fp32 = match m.format {
            StorageFormat::Fp32 => None,
            StorageFormat::Fp16 => {
                Some(self.cast(m, Shader::CastFp16ToFp32, StorageFormat::Fp32)?)
            }
        };
        let src = fp32.as_ref().unwrap_or(m);
        let n = m.c * m.cstep * m.elempack;
        let data = StorageFormat::Fp32.decode(&self.download(&src.buffer)?, n);
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
        let pipeline = self.pipeline(shader.module(), m.options, &Specialization::default())?;
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
            &[&m.buffer, &out],
            &shape,
            [shape[0], 1, shape[2]],
        )?;
        rec.submit_and_wait()?;
        Ok(GpuMat {
            buffer: out,
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
        let out = self.storage_buffer((c * cstep * elempack * format.size()) as u64);
        let result = GpuMat {
            buffer: out,
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
            enc.copy_buffer_to_buffer(
                &m.buffer,
                0,
                &result.buffer,
                0,
                m.buffer.size().min(result.buffer.size()),
            );
            self.queue.submit([enc.finish()]);
            return Ok(result);
        };
        let pipeline = self.pipeline(shader.module(), m.options, &Specialization::default())?;
        let (fin, fout) = (
            StorageFormat::of(pipeline.options, m.elempack),
            StorageFormat::of(pipeline.options, elempack),
        );
        if fin != m.format || fout != format {
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
            &[&m.buffer, &result.buffer],
            &push,
            [grid.w as u32, grid.h as u32, grid.c as u32],
        )?;
        rec.submit_and_wait()?;
        Ok(result)
    }
}
