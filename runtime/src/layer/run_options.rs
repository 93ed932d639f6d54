//! [`RunOptions`], ncnn's `Option`: how a net runs (threads, memory, packing, precision, the
//! GPU), and ncnn's per-layer feature mask.
//!
//! The option types of fpshader, each for one job:
//! - [`RunOptions`]: how a net runs, set on `Net::opt` (ncnn's `Option`; narrowed per layer by
//!   its [`FeatureMask`]).
//! - [`crate::gpu::Options`]: the shader-variant fields of ncnn's `Option` as booleans, and what
//!   a device allows; [`RunOptions::variant_options`] turns one into the other.
//! - [`crate::OptionSet`] / [`crate::Opt`]: one compiled variant's set of options (its name,
//!   its preamble), from fpshader-build.
//! - [`crate::ContextOptions`]: which adapter, backend and shader path a `Context` opens.

use crate::OptionSet;
use crate::gpu::Options as VariantOptions;

/// ncnn's `Option`, with the fields that choose layouts, precision and placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Release intermediate blobs as soon as their last consumer ran (and let an in-place layer
    /// work on its input without a copy when nothing else reads it).
    pub lightmode: bool,
    /// CPU threads for CPU layers.
    pub num_threads: usize,
    /// Run layers that support it on the GPU (needs a context).
    pub use_vulkan_compute: bool,
    /// Packed layouts (elempack 4/8) for layers that support them.
    pub use_packing_layout: bool,
    /// elempack 8 on the GPU.
    pub use_shader_pack8: bool,
    /// fp16 pairs packed in `uint`s on the GPU.
    pub use_fp16_packed: bool,
    /// fp16 storage (GPU buffers; CPU mats for layers with `fp16_storage`).
    pub use_fp16_storage: bool,
    /// fp16 arithmetic in shaders.
    pub use_fp16_arithmetic: bool,
    /// bf16 storage for CPU layers with `bf16_storage` (preferred over fp16).
    pub use_bf16_storage: bool,
    /// int8 mats for layers with `int8_storage`.
    pub use_int8_inference: bool,
    /// Image-backed GPU mats.
    pub use_image_storage: bool,
    /// Shared-memory shader variants.
    pub use_local_memory: bool,
    /// Cooperative-matrix (tensor core) shaders where the device has them
    /// ([`crate::Context::cooperative_matrix`]).
    pub use_cooperative_matrix: bool,
    /// Winograd's transforms for 3×3 stride-1 convolutions where they pay (ncnn's
    /// `use_winograd_convolution`; the CPU's and the GPU's).
    pub use_winograd_convolution: bool,
}

impl Default for RunOptions {
    /// ncnn's defaults, GPU on when a net has a device: lightmode, packing, fp16
    /// packed/storage/arithmetic, local memory, cooperative matrices; no bf16, no images, no pack8.
    fn default() -> Self {
        RunOptions {
            lightmode: true,
            num_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            use_vulkan_compute: true,
            use_packing_layout: true,
            use_shader_pack8: false,
            use_fp16_packed: true,
            use_fp16_storage: true,
            use_fp16_arithmetic: true,
            use_bf16_storage: false,
            use_int8_inference: true,
            use_image_storage: false,
            use_local_memory: true,
            use_cooperative_matrix: true,
            use_winograd_convolution: true,
        }
    }
}

impl RunOptions {
    /// Plain fp32 everywhere, no packing: what ncnn's layer tests and numeric comparisons use.
    pub fn fp32() -> Self {
        RunOptions {
            use_packing_layout: false,
            use_fp16_packed: false,
            use_fp16_storage: false,
            use_fp16_arithmetic: false,
            use_bf16_storage: false,
            use_int8_inference: false,
            ..RunOptions::default()
        }
    }

    /// The shader variant options these fields ask for, narrowed to what `allowed` (the
    /// device's) contains.
    pub fn variant_options(&self, allowed: OptionSet) -> OptionSet {
        let wanted = VariantOptions {
            use_fp16_packed: self.use_fp16_packed,
            use_fp16_storage: self.use_fp16_storage,
            use_fp16_arithmetic: self.use_fp16_arithmetic,
            use_fp16_uniform: self.use_fp16_storage && self.use_fp16_arithmetic,
            use_int8_packed: false,
            use_int8_storage: false,
            use_int8_arithmetic: false,
            use_image_storage: self.use_image_storage,
            use_shader_local_memory: self.use_local_memory,
        }
        .to_option_set();
        OptionSet::from_bits(wanted.bits() & allowed.bits())
    }

    /// This option with what a layer's feature mask (ncnn's param 31) switches off.
    pub fn masked(&self, mask: FeatureMask) -> RunOptions {
        let mut o = *self;
        let off = |bit: FeatureMask| mask.contains(bit);
        o.use_fp16_arithmetic &= !off(FeatureMask::NO_FP16_ARITHMETIC);
        o.use_fp16_storage &= !off(FeatureMask::NO_FP16_STORAGE);
        o.use_fp16_packed &= !off(FeatureMask::NO_FP16_STORAGE);
        o.use_bf16_storage &= !off(FeatureMask::NO_BF16_STORAGE);
        o.use_int8_inference &= !off(FeatureMask::NO_INT8);
        o.use_vulkan_compute &= !off(FeatureMask::NO_VULKAN);
        o.use_image_storage &= !off(FeatureMask::NO_VULKAN);
        o
    }
}

/// ncnn's per-layer `featmask` (param id 31): bits that switch features off for one layer,
/// with ncnn's bit meanings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FeatureMask(pub u32);

impl FeatureMask {
    /// Bit 0: no fp16 arithmetic.
    pub const NO_FP16_ARITHMETIC: FeatureMask = FeatureMask(1 << 0);
    /// Bit 1: no fp16 storage or packed fp16.
    pub const NO_FP16_STORAGE: FeatureMask = FeatureMask(1 << 1);
    /// Bit 2: no bf16 storage.
    pub const NO_BF16_STORAGE: FeatureMask = FeatureMask(1 << 2);
    /// Bit 3: no int8.
    pub const NO_INT8: FeatureMask = FeatureMask(1 << 3);
    /// Bit 4: no GPU (and no image storage): the layer runs on the CPU.
    pub const NO_VULKAN: FeatureMask = FeatureMask(1 << 4);

    /// Whether every bit of `other` is set.
    pub fn contains(self, other: FeatureMask) -> bool {
        self.0 & other.0 == other.0
    }
}
