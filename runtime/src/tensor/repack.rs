//! Repacking GPU mats between elempacks on the GPU, through the built-in packing shaders.

use crate::Opt;
use crate::error::{Result, TensorError};
use crate::gpu::context::Context;
use crate::gpu::recorder::Recorder;
use crate::gpu::specialize::Specialization;
use crate::shaders::Shader;
use crate::tensor::gpu_mat::{
    GpuData, GpuMat, image_extent, image_format, mat_bytes, variant_options,
};
use crate::tensor::mat::cstep_for;
use crate::tensor::storage::StorageFormat;
use crate::tensor::texture::upload_texture;

impl GpuMat {
    /// Repacks to `elempack` on the GPU and waits. See [`GpuMat::record_packing`].
    pub fn convert_packing(&self, ctx: &Context, elempack: usize) -> Result<GpuMat> {
        let mut rec = ctx.recorder();
        let out = self.record_packing(&mut rec, elempack)?;
        rec.submit_and_wait()?;
        Ok(out)
    }

    /// Records repacking to `elempack` with the built-in packing shaders (1↔4, 4↔8, and
    /// 1↔8 through 4). The result keeps this mat's options; the same packing returns it shared.
    pub fn record_packing(&self, rec: &mut Recorder<'_>, elempack: usize) -> Result<GpuMat> {
        let m = self;
        let channels = m.c * m.elempack;
        if ![1, 4, 8].contains(&elempack) || !channels.is_multiple_of(elempack) {
            return Err(TensorError::Packing {
                channels,
                from: m.elempack,
                to: elempack,
            }
            .into());
        }
        if m.elempack != elempack && m.packs_in_place(elempack) {
            return Ok(GpuMat {
                c: channels / elempack,
                elempack,
                ..m.clone()
            });
        }
        match (m.elempack, elempack) {
            (a, b) if a == b => Ok(m.clone()),
            (1, 8) | (8, 1) => {
                let four = m.record_packing(rec, 4)?;
                four.record_packing(rec, elempack)
            }
            (1, 4) => m.repack(rec, 4, Shader::Packing1to4, true, channels),
            (4, 1) => m.repack(rec, 1, Shader::Packing4to1, false, channels),
            (4, 8) => m.repack(rec, 8, Shader::Packing4to8, true, channels),
            (8, 4) => m.repack(rec, 4, Shader::Packing8to4, false, channels),
            (from, to) => Err(TensorError::Packing { channels, from, to }.into()),
        }
    }

    /// Whether `m` in `elempack` is its own buffer as it is: a buffer whose channels are one
    /// value each, next to each other (a 1-D blob, or a 2-D one of one column), in a storage
    /// format `elempack` keeps. Its packings differ only in how shaders index it, so the net's
    /// conversions between them (an InnerProduct's pack1 output to the next one's pack4, a
    /// Flatten's to Concat's) are views, not dispatches.
    pub(crate) fn packs_in_place(&self, elempack: usize) -> bool {
        let m = self;
        m.buffer().is_some()
            && m.dims <= 2
            && m.w * m.h == 1
            && m.cstep == 1
            && StorageFormat::of(m.options, elempack) == m.format
    }

    /// A pack1 buffer mat as pack4, its channels padded with zeros to a multiple of 4: how the
    /// convolution GEMM reads inputs of other channel counts (an RGB image) as whole blocks.
    pub fn record_padded_pack4(&self, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let m = self;
        if m.elempack != 1 || m.buffer().is_none() {
            return Err(TensorError::Packed {
                operation: "padding to pack4 (of buffer mats)",
                elempack: m.elempack,
            }
            .into());
        }
        m.repack(rec, 4, Shader::Packing1to4, true, m.c)
    }

    /// A pack4 buffer mat's first `channels` channels as pack1 (the rest, at most 3, a last
    /// block's padding): how a layer computed in whole blocks of 4 gives its pack1 output.
    pub fn record_unpacked_channels(
        &self,
        rec: &mut Recorder<'_>,
        channels: usize,
    ) -> Result<GpuMat> {
        let m = self;
        if m.elempack != 4 || m.buffer().is_none() || channels.div_ceil(4) != m.c {
            return Err(TensorError::Packing {
                channels,
                from: m.elempack,
                to: 1,
            }
            .into());
        }
        m.repack(rec, 1, Shader::Packing4to1, false, channels)
    }

    /// `over_output`: the packing shader is dispatched over the output's elements; `channels`
    /// the output's (the input's, or fewer in its last block).
    fn repack(
        &self,
        rec: &mut Recorder<'_>,
        elempack: usize,
        shader: Shader,
        over_output: bool,
        channels: usize,
    ) -> Result<GpuMat> {
        let (m, ctx) = (self, rec.context());
        // whole blocks: only padding to pack4 has a remainder
        let c = channels.div_ceil(elempack);
        let cstep = match m.dims {
            1 | 2 => m.cstep,
            _ => cstep_for(m.w * m.h, 4 * elempack),
        };
        let format = StorageFormat::of(m.options, elempack);
        let image = matches!(m.data, GpuData::Image { .. });
        let data = if image {
            let extent = image_extent(m.w, m.h, c, elempack);
            let (texture, view) = upload_texture(
                ctx,
                wgpu::TextureDimension::D3,
                extent,
                image_format(format, elempack)?,
                &[],
            )?;
            GpuData::Image { texture, view }
        } else {
            GpuData::Buffer(ctx.storage_buffer(mat_bytes(c * cstep * elempack, format))?)
        };
        let result = GpuMat {
            data,
            c,
            elempack,
            cstep,
            format,
            ..m.clone()
        };
        let options = variant_options(m.options, image);
        let pipeline = ctx.pipeline(shader.module(), options, &Specialization::default())?;
        let (fin, fout) = (
            StorageFormat::of(pipeline.options, m.elempack),
            StorageFormat::of(pipeline.options, elempack),
        );
        if fin != m.format || fout != format || pipeline.options.contains(Opt::Image) != image {
            return Err(TensorError::VariantStorage {
                shader: "packing".into(),
                variant: pipeline.options.name(),
                stores: format!("{fin:?}/{fout:?}"),
                mats: format!("{:?}/{format:?}", m.format),
            }
            .into());
        }
        let mut push = m.shape_words().to_vec();
        push.extend(result.shape_words());
        let grid = if over_output { &result } else { m };
        rec.dispatch(&pipeline, &[m, &result], &push, grid.grid())?;
        Ok(result)
    }
}
