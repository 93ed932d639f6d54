//! ncnn's `Option` fields, mapped to and from [`OptionSet`], with ncnn's sanitization.

use crate::{Opt, OptionSet};

/// The option fields of ncnn's `Option` that choose shader variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// `use_fp16_packed`.
    pub use_fp16_packed: bool,
    /// `use_fp16_storage`.
    pub use_fp16_storage: bool,
    /// `use_fp16_arithmetic`.
    pub use_fp16_arithmetic: bool,
    /// `use_fp16_uniform`.
    pub use_fp16_uniform: bool,
    /// `use_int8_packed`.
    pub use_int8_packed: bool,
    /// `use_int8_storage`.
    pub use_int8_storage: bool,
    /// `use_int8_arithmetic`.
    pub use_int8_arithmetic: bool,
    /// `use_image_storage`.
    pub use_image_storage: bool,
    /// `use_shader_local_memory`.
    pub use_shader_local_memory: bool,
}

impl Default for Options {
    /// ncnn's defaults: every fp16 and int8 path on, images off, local memory on.
    fn default() -> Self {
        Options {
            use_fp16_packed: true,
            use_fp16_storage: true,
            use_fp16_arithmetic: true,
            use_fp16_uniform: true,
            use_int8_packed: true,
            use_int8_storage: true,
            use_int8_arithmetic: true,
            use_image_storage: false,
            use_shader_local_memory: true,
        }
    }
}

impl Options {
    /// Everything off: plain fp32 buffers.
    pub fn fp32() -> Self {
        Options {
            use_fp16_packed: false,
            use_fp16_storage: false,
            use_fp16_arithmetic: false,
            use_fp16_uniform: false,
            use_int8_packed: false,
            use_int8_storage: false,
            use_int8_arithmetic: false,
            use_image_storage: false,
            use_shader_local_memory: false,
        }
    }

    /// What a device with these wgpu features allows. `packHalf2x16` is core GLSL, so fp16 packed
    /// is always possible; fp16 storage, arithmetic and local memory need `SHADER_F16`; wgpu
    /// enables no 8-bit storage or int8 arithmetic, so int8 stays off.
    pub fn for_device(features: wgpu::Features) -> Self {
        let f16 = features.contains(wgpu::Features::SHADER_F16);
        Options {
            use_fp16_packed: true,
            use_fp16_storage: f16,
            use_fp16_arithmetic: f16,
            use_fp16_uniform: f16,
            use_int8_packed: false,
            use_int8_storage: false,
            use_int8_arithmetic: false,
            use_image_storage: true,
            use_shader_local_memory: true,
        }
    }

    /// Both allow a field.
    #[must_use]
    pub fn intersect(&self, other: &Options) -> Options {
        Options {
            use_fp16_packed: self.use_fp16_packed && other.use_fp16_packed,
            use_fp16_storage: self.use_fp16_storage && other.use_fp16_storage,
            use_fp16_arithmetic: self.use_fp16_arithmetic && other.use_fp16_arithmetic,
            use_fp16_uniform: self.use_fp16_uniform && other.use_fp16_uniform,
            use_int8_packed: self.use_int8_packed && other.use_int8_packed,
            use_int8_storage: self.use_int8_storage && other.use_int8_storage,
            use_int8_arithmetic: self.use_int8_arithmetic && other.use_int8_arithmetic,
            use_image_storage: self.use_image_storage && other.use_image_storage,
            use_shader_local_memory: self.use_shader_local_memory && other.use_shader_local_memory,
        }
    }

    /// The flags as an option set (not canonicalized: selection canonicalizes per shader).
    pub fn to_option_set(&self) -> OptionSet {
        [
            (self.use_fp16_packed, Opt::Fp16Packed),
            (self.use_fp16_storage, Opt::Fp16Storage),
            (self.use_fp16_arithmetic, Opt::Fp16Arithmetic),
            (self.use_fp16_uniform, Opt::Fp16Uniform),
            (self.use_int8_packed, Opt::Int8Packed),
            (self.use_int8_storage, Opt::Int8Storage),
            (self.use_int8_arithmetic, Opt::Int8Arithmetic),
            (self.use_image_storage, Opt::Image),
            (self.use_shader_local_memory, Opt::LocalMemory),
        ]
        .into_iter()
        .filter(|(on, _)| *on)
        .fold(OptionSet::FP32, |set, (_, opt)| set.with(opt))
    }

    /// The fields of an option set.
    pub fn from_option_set(set: OptionSet) -> Self {
        Options {
            use_fp16_packed: set.contains(Opt::Fp16Packed),
            use_fp16_storage: set.contains(Opt::Fp16Storage),
            use_fp16_arithmetic: set.contains(Opt::Fp16Arithmetic),
            use_fp16_uniform: set.contains(Opt::Fp16Uniform),
            use_int8_packed: set.contains(Opt::Int8Packed),
            use_int8_storage: set.contains(Opt::Int8Storage),
            use_int8_arithmetic: set.contains(Opt::Int8Arithmetic),
            use_image_storage: set.contains(Opt::Image),
            use_shader_local_memory: set.contains(Opt::LocalMemory),
        }
    }
}
