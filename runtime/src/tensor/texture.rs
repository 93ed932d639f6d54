//! Textures holding float values: creation with data, and reading back. Image-backed mats and
//! image tests use these; texel conversion (fp32 ↔ fp16) happens here while copying.

use crate::error::{Error, Result, TensorError};
use crate::gpu::context::Context;
use crate::tensor::storage::StorageFormat;

/// The float texel formats fpshader reads and writes: (format, value encoding, channels).
const FLOAT_TEXELS: [(wgpu::TextureFormat, StorageFormat, usize); 6] = [
    (wgpu::TextureFormat::R32Float, StorageFormat::Fp32, 1),
    (wgpu::TextureFormat::Rg32Float, StorageFormat::Fp32, 2),
    (wgpu::TextureFormat::Rgba32Float, StorageFormat::Fp32, 4),
    (wgpu::TextureFormat::R16Float, StorageFormat::Fp16, 1),
    (wgpu::TextureFormat::Rg16Float, StorageFormat::Fp16, 2),
    (wgpu::TextureFormat::Rgba16Float, StorageFormat::Fp16, 4),
];

/// The texel format holding `channels` values encoded as `storage`, if there is one.
pub(crate) fn texel_format(storage: StorageFormat, channels: usize) -> Option<wgpu::TextureFormat> {
    FLOAT_TEXELS
        .iter()
        .find(|(_, s, c)| *s == storage && *c == channels)
        .map(|(f, _, _)| *f)
}

fn layout_of(format: wgpu::TextureFormat) -> Result<(StorageFormat, usize)> {
    FLOAT_TEXELS
        .iter()
        .find(|(f, _, _)| *f == format)
        .map(|(_, s, c)| (*s, *c))
        .ok_or_else(|| {
            TensorError::TexelFormat {
                format: format!("{format:?}"),
                channels: 0,
            }
            .into()
        })
}

/// A texture usable as sampled texture, storage image and copy source/destination, filled
/// with `values` (texels in x, y, z order, channels interleaved) converted to `format`; empty
/// `values` leave it zeroed.
pub fn upload_texture(
    ctx: &Context,
    dimension: wgpu::TextureDimension,
    size: wgpu::Extent3d,
    format: wgpu::TextureFormat,
    values: &[f32],
) -> Result<(wgpu::Texture, wgpu::TextureView)> {
    let (storage, channels) = layout_of(format)?;
    let texels = size.width as usize * size.height as usize * size.depth_or_array_layers as usize;
    if !values.is_empty() && values.len() != texels * channels {
        return Err(TensorError::Texels {
            values: values.len(),
            texels,
            channels,
        }
        .into());
    }
    let limits = ctx.limits();
    let max = match dimension {
        wgpu::TextureDimension::D1 => limits.max_texture_dimension_1d,
        wgpu::TextureDimension::D2 => limits.max_texture_dimension_2d,
        wgpu::TextureDimension::D3 => limits.max_texture_dimension_3d,
    };
    let sides = [size.width, size.height, size.depth_or_array_layers];
    if texels == 0 || sides.iter().any(|s| *s > max) {
        return Err(TensorError::TextureSize {
            sides,
            dimension: format!("{dimension:?}"),
            max,
        }
        .into());
    }
    let scope = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let usage = wgpu::TextureUsages::TEXTURE_BINDING
        | wgpu::TextureUsages::STORAGE_BINDING
        | wgpu::TextureUsages::COPY_SRC
        | wgpu::TextureUsages::COPY_DST;
    let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("fpshader texture"),
        size,
        mip_level_count: 1,
        sample_count: 1,
        dimension,
        format,
        usage,
        view_formats: &[],
    });
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(Error::Texture {
            what: "an image mat".into(),
            format,
            usage,
            message: e.to_string(),
        });
    }
    let row = size.width as usize * channels * storage.size();
    if values.is_empty() {
        return Ok((texture.clone(), texture.create_view(&Default::default())));
    }
    ctx.queue.write_texture(
        texture.as_image_copy(),
        &storage.encode(values),
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(row as u32),
            rows_per_image: Some(size.height),
        },
        size,
    );
    let view = texture.create_view(&Default::default());
    Ok((texture, view))
}

/// Every texel of `texture` as fp32 values, in the order [`upload_texture`] takes.
pub fn download_texture(ctx: &Context, texture: &wgpu::Texture) -> Result<Vec<f32>> {
    let (storage, channels) = layout_of(texture.format())?;
    let size = texture.size();
    let row = size.width as usize * channels * storage.size();
    let align = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT as usize;
    let padded = row.div_ceil(align) * align;
    let rows = size.height as usize * size.depth_or_array_layers as usize;
    let staging = ctx.storage_buffer((padded * rows) as u64)?;
    let mut enc = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("texture readback"),
        });
    enc.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &staging,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded as u32),
                rows_per_image: Some(size.height),
            },
        },
        size,
    );
    ctx.submit_in_order(enc)?;
    let bytes = ctx.download(&staging)?;
    let per_row = size.width as usize * channels;
    Ok(bytes
        .chunks(padded)
        .take(rows)
        .flat_map(|r| storage.decode(r, per_row))
        .collect())
}
