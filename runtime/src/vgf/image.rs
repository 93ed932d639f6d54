//! Images a custom shader binds (`VK_DESCRIPTOR_TYPE_STORAGE_IMAGE`, `SAMPLED_IMAGE`,
//! `COMBINED_IMAGE_SAMPLER`): a 2-D texture per image resource, its texels the resource's
//! memory as Arm's converter describes it (shape `[1, H, W, C]` or `[H, W, C]`, a C-channel
//! format). The resource's buffer stays the value's memory (what graph segments, other shaders
//! and the caller see): a segment that reads the image copies the buffer in first, one that
//! writes it copies the texture out after.

use fpshader_build::vgf::Resource;
use fpshader_build::vgf::file::format::{
    DESCRIPTOR_TYPE_STORAGE_IMAGE, SamplerConfig, format_channels, format_name,
};

use super::problem;
use crate::error::{Error, Result};
use crate::gpu::Context;

/// One image resource as a dispatch binds it.
pub(super) struct ImageBinding {
    /// Its resource (model-resource-table index).
    pub(super) mrt: u32,
    format: wgpu::TextureFormat,
    size: wgpu::Extent3d,
    /// A storage image (else sampled).
    storage: bool,
    /// The sampler of a sampled image, from the resource's sampler state.
    pub(super) sampler: Option<wgpu::Sampler>,
    /// Whether that sampler filters linearly (its binding must be a filtering one).
    pub(super) filters: bool,
}

/// The texel formats an image resource may have: floats and normalized bytes, which shaders
/// read as floats (the runtime's texture bindings are float ones).
const FORMATS: [(u32, wgpu::TextureFormat); 9] = [
    (9, wgpu::TextureFormat::R8Unorm),
    (37, wgpu::TextureFormat::Rgba8Unorm),
    (38, wgpu::TextureFormat::Rgba8Snorm),
    (76, wgpu::TextureFormat::R16Float),
    (83, wgpu::TextureFormat::Rg16Float),
    (97, wgpu::TextureFormat::Rgba16Float),
    (100, wgpu::TextureFormat::R32Float),
    (103, wgpu::TextureFormat::Rg32Float),
    (109, wgpu::TextureFormat::Rgba32Float),
];

impl ImageBinding {
    /// The image view of resource `mrt`, checked: its format, its shape as rows of texels, its
    /// sampler state.
    pub(super) fn new(ctx: &Context, mrt: u32, r: &Resource) -> Result<ImageBinding> {
        let what = format!("image resource {mrt}");
        let name = format_name(r.vk_format).unwrap_or("an unknown format");
        let Some(&(_, format)) = FORMATS.iter().find(|(v, _)| *v == r.vk_format) else {
            return Err(problem(
                what,
                format!("{name} is not an image format fpshader binds (float or 8-bit normalized)"),
            ));
        };
        let channels = format_channels(r.vk_format).map(i64::from);
        let (h, w) = match r.shape[..] {
            [1, h, w, c] | [h, w, c] if Some(c) == channels => (h, w),
            _ => {
                return Err(problem(
                    what,
                    format!(
                        "shape {:?} is not [1, H, W, C] or [H, W, C] with C the {} channels of {name}",
                        r.shape,
                        channels.unwrap_or(0)
                    ),
                ));
            }
        };
        let max = ctx.limits().max_texture_dimension_2d;
        let side = |d: i64| u32::try_from(d).ok().filter(|&d| d > 0 && d <= max);
        let (Some(width), Some(height)) = (side(w), side(h)) else {
            return Err(problem(
                what,
                format!("{w} × {h} texels: each side must be 1 to {max}"),
            ));
        };
        let (sampler, filters) = match (r.vk_descriptor_type, r.sampler) {
            (Some(DESCRIPTOR_TYPE_STORAGE_IMAGE), _) => (None, false),
            (_, config) => {
                let (s, filters) = sampler(ctx, &what, config)?;
                let filterable = (format.guaranteed_format_features(ctx.features()).flags)
                    .contains(wgpu::TextureFormatFeatureFlags::FILTERABLE);
                if filters && !filterable {
                    return Err(problem(
                        what,
                        format!("linear filtering of {name}, which this device cannot filter"),
                    ));
                }
                (Some(s), filters)
            }
        };
        Ok(ImageBinding {
            mrt,
            format,
            size: wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
            storage: r.vk_descriptor_type == Some(DESCRIPTOR_TYPE_STORAGE_IMAGE),
            sampler,
            filters,
        })
    }

    /// A texture for one run (zeroed until a copy fills it).
    pub(super) fn texture(&self, ctx: &Context) -> Result<wgpu::Texture> {
        let usage = if self.storage {
            wgpu::TextureUsages::STORAGE_BINDING
        } else {
            wgpu::TextureUsages::TEXTURE_BINDING
        } | wgpu::TextureUsages::COPY_SRC
            | wgpu::TextureUsages::COPY_DST;
        let scope = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("fpshader VGF image"),
            size: self.size,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: self.format,
            usage,
            view_formats: &[],
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(Error::Texture {
                what: format!("image resource {}", self.mrt),
                format: self.format,
                usage,
                message: e.to_string(),
            });
        }
        Ok(texture)
    }
}

/// The sampler of a sampled image (and whether it filters linearly): the filters, address
/// modes and border colour of `config` (nearest and clamp to edge without one).
fn sampler(
    ctx: &Context,
    what: &str,
    config: Option<SamplerConfig>,
) -> Result<(wgpu::Sampler, bool)> {
    let c = config.unwrap_or(SamplerConfig {
        min_filter: 0,
        mag_filter: 0,
        address_mode_u: 2,
        address_mode_v: 2,
        border_color: 0,
    });
    let filter = |f: u32| match f {
        0 => Ok(wgpu::FilterMode::Nearest),
        1 => Ok(wgpu::FilterMode::Linear),
        _ => Err(problem(
            what,
            format!("filter {f} (cubic) is not one wgpu has"),
        )),
    };
    let (min, mag) = (filter(c.min_filter)?, filter(c.mag_filter)?);
    let mode = |m: u32| match m {
        0 => Ok(wgpu::AddressMode::Repeat),
        1 => Ok(wgpu::AddressMode::MirrorRepeat),
        2 => Ok(wgpu::AddressMode::ClampToEdge),
        3 if ctx
            .features()
            .contains(wgpu::Features::ADDRESS_MODE_CLAMP_TO_BORDER) =>
        {
            Ok(wgpu::AddressMode::ClampToBorder)
        }
        3 => Err(problem(
            what,
            "clamp to border needs ADDRESS_MODE_CLAMP_TO_BORDER, which this device lacks",
        )),
        _ => Err(problem(
            what,
            format!("sampler address mode {m} is not one wgpu has"),
        )),
    };
    let border = match c.border_color {
        0 | 1 => wgpu::SamplerBorderColor::TransparentBlack,
        2 | 3 => wgpu::SamplerBorderColor::OpaqueBlack,
        4 | 5 => wgpu::SamplerBorderColor::OpaqueWhite,
        other => {
            return Err(problem(
                what,
                format!("border colour {other} (a custom one) is not supported"),
            ));
        }
    };
    let (u, v) = (mode(c.address_mode_u)?, mode(c.address_mode_v)?);
    let clamped = [u, v].contains(&wgpu::AddressMode::ClampToBorder);
    let sampler = ctx.device.create_sampler(&wgpu::SamplerDescriptor {
        label: Some("fpshader VGF sampler"),
        address_mode_u: u,
        address_mode_v: v,
        min_filter: min,
        mag_filter: mag,
        border_color: clamped.then_some(border),
        ..Default::default()
    });
    let filters = [min, mag].contains(&wgpu::FilterMode::Linear);
    Ok((sampler, filters))
}
