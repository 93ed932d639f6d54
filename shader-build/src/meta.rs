//! Shader metadata shared by the build side and the runtime: a module, its variants, their SPIR-V
//! and reflection.
//!
//! Every type here is const-constructible (borrowed `Cow`s), so generated code is plain `static`
//! data, and owned at build time, when reflection fills it in. The runtime depends on this module
//! alone (`fpshader-build` with `default-features = false`), never on the compiler.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use crate::options::OptionSet;

/// A list that is `&'static` in generated code and a `Vec` at build time.
pub type List<T> = Cow<'static, [T]>;
/// A string that is `&'static` in generated code and a `String` at build time.
pub type Text = Cow<'static, str>;

/// One shader with all its compiled variants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShaderModule {
    /// The shader's name (file stem, e.g. `relu_pack4`).
    pub name: Text,
    /// The options the shader was declared to support.
    pub supported: OptionSet,
    /// Every valid option set, fewest options first (fp32 first).
    pub variants: List<ShaderVariant>,
}

impl ShaderModule {
    /// The variant compiled for exactly `options` (canonicalized), if any.
    pub fn variant(&self, options: OptionSet) -> Option<&ShaderVariant> {
        let options = options.canonicalize().ok()?;
        self.variants.iter().find(|v| v.options == options)
    }
}

/// One option set's SPIR-V and reflection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShaderVariant {
    /// The canonical option set.
    pub options: OptionSet,
    /// The SPIR-V words (4-byte aligned; shared by variants that deduplicated).
    pub spirv: List<u32>,
    /// What the SPIR-V declares.
    pub reflection: Reflection,
}

/// What a SPIR-V compute module declares.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reflection {
    /// SPIR-V version (major, minor).
    pub spirv_version: (u8, u8),
    /// The compute entry point's name.
    pub entry_point: Text,
    /// The workgroup size and how to patch it.
    pub local_size: LocalSize,
    /// Descriptor bindings, sorted by (set, binding).
    pub bindings: List<Binding>,
    /// The push-constant block, if any.
    pub push_constants: Option<PushConstants>,
    /// Specialization constants, sorted by id.
    pub spec_constants: List<SpecConstant>,
    /// Device features the module needs.
    pub features: Features,
}

/// How the module fixes its workgroup size.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LocalSize {
    /// No `LocalSize`/`LocalSizeId` execution mode: the runtime must supply one (not valid Vulkan as is).
    #[default]
    Absent,
    /// `OpExecutionMode … LocalSize x y z`; `word_offset` indexes the word of `x` (y and z follow).
    /// glslang writes `1 1 1` for shaders that declare none, as ncnn-style shaders do.
    Literal {
        /// The size.
        size: [u32; 3],
        /// Index into the module's words of the `x` literal.
        word_offset: u32,
    },
    /// `OpExecutionModeId … LocalSizeId`: each dimension is a constant or a specialization constant.
    Id {
        /// The default size.
        size: [u32; 3],
        /// The SpecId behind each dimension, if it is a specialization constant.
        spec_ids: [Option<u32>; 3],
    },
    /// A `WorkgroupSize` built-in constant overrides the execution mode (`local_size_x_id`).
    BuiltIn {
        /// The default size.
        size: [u32; 3],
        /// The SpecId behind each dimension, if it is a specialization constant.
        spec_ids: [Option<u32>; 3],
    },
}

impl LocalSize {
    /// The size the module runs with unless patched or specialized.
    pub fn default_size(&self) -> Option<[u32; 3]> {
        match self {
            LocalSize::Absent => None,
            LocalSize::Literal { size, .. }
            | LocalSize::Id { size, .. }
            | LocalSize::BuiltIn { size, .. } => Some(*size),
        }
    }
}

/// What a descriptor binding holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DescriptorKind {
    /// `buffer { … }` (StorageBuffer, or Uniform + BufferBlock before SPIR-V 1.3).
    StorageBuffer,
    /// `uniform { … }`.
    UniformBuffer,
    /// `sampler2D` etc.: image and sampler together.
    CombinedImageSampler,
    /// `texture2D` etc.: an image to sample.
    SampledImage,
    /// `image2D` etc.: an image to load and store.
    StorageImage,
    /// `sampler`.
    Sampler,
    /// `samplerBuffer`/`textureBuffer`.
    UniformTexelBuffer,
    /// `imageBuffer`.
    StorageTexelBuffer,
    /// `tensorARM<…>` (SPV_ARM_tensors): a tensor read and written by coordinates.
    Tensor,
}

/// How a shader uses a binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Access {
    /// Only read (`readonly`, or anything that cannot be written).
    ReadOnly,
    /// Only written (`writeonly`).
    WriteOnly,
    /// Both.
    ReadWrite,
}

/// Image dimensionality, for image bindings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ImageDim {
    /// 1D.
    D1,
    /// 2D.
    D2,
    /// 3D.
    D3,
    /// Cube.
    Cube,
    /// Texel buffer.
    Buffer,
}

/// One descriptor binding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// Descriptor set.
    pub set: u32,
    /// Binding number.
    pub binding: u32,
    /// What it holds.
    pub kind: DescriptorKind,
    /// Array length; 1 for a single descriptor, 0 for a runtime-sized array.
    pub count: u32,
    /// How the shader uses it.
    pub access: Access,
    /// Image dimensionality, for image kinds.
    pub image_dim: Option<ImageDim>,
    /// Storage image format (`Rgba16f` …) as SPIR-V names it, if declared.
    pub image_format: Option<Text>,
    /// The variable's or block's name, when the module keeps names.
    pub name: Text,
}

/// A scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Scalar {
    /// `bool`.
    Bool,
    /// Signed integer of this many bits.
    Int(u8),
    /// Unsigned integer of this many bits.
    Uint(u8),
    /// Float of this many bits.
    Float(u8),
}

impl Scalar {
    /// Size in bytes (booleans count 4, as in buffers and specialization data).
    pub const fn size(self) -> u32 {
        match self {
            Scalar::Bool => 4,
            Scalar::Int(bits) | Scalar::Uint(bits) | Scalar::Float(bits) => bits as u32 / 8,
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool => f.write_str("bool"),
            Scalar::Int(32) => f.write_str("int"),
            Scalar::Uint(32) => f.write_str("uint"),
            Scalar::Float(32) => f.write_str("float"),
            Scalar::Float(64) => f.write_str("double"),
            Scalar::Int(b) => write!(f, "int{b}_t"),
            Scalar::Uint(b) => write!(f, "uint{b}_t"),
            Scalar::Float(b) => write!(f, "float{b}_t"),
        }
    }
}

/// A push-constant member's type: scalar, vector (`components`), matrix (`columns`), or array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MemberType {
    /// The component type.
    pub scalar: Scalar,
    /// Vector width (1 for scalars).
    pub components: u8,
    /// Matrix columns (1 for non-matrices).
    pub columns: u8,
    /// Array length (0 for non-arrays).
    pub array: u32,
}

/// One member of the push-constant block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushConstantMember {
    /// Its name, when the module keeps names.
    pub name: Text,
    /// Byte offset in the block.
    pub offset: u32,
    /// Byte size.
    pub size: u32,
    /// Its type.
    pub ty: MemberType,
}

/// The push-constant block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushConstants {
    /// Size in bytes (end of the last member).
    pub size: u32,
    /// The members in offset order.
    pub members: List<PushConstantMember>,
}

/// One specialization constant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecConstant {
    /// `constant_id`.
    pub id: u32,
    /// Its name, when the module keeps names.
    pub name: Text,
    /// Its type.
    pub ty: Scalar,
    /// The default value's bits (for bool: 0 or 1).
    pub default: u64,
    /// Index into the module's words of the default literal (for bool: of the instruction's first
    /// word, whose opcode is `OpSpecConstantTrue` or `OpSpecConstantFalse`).
    pub word_offset: u32,
}

/// Device features a module needs, from its capabilities.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Features(pub u32);

impl Features {
    /// fp16 arithmetic (`Float16`).
    pub const FLOAT16: Features = Features(1 << 0);
    /// fp16/int16 in storage buffers (`StorageBuffer16BitAccess`, …).
    pub const STORAGE_16BIT: Features = Features(1 << 1);
    /// 16-bit values in push constants (`StoragePushConstant16`).
    pub const PUSH_CONSTANT_16BIT: Features = Features(1 << 2);
    /// int8 arithmetic (`Int8`).
    pub const INT8: Features = Features(1 << 3);
    /// int8 in storage buffers (`StorageBuffer8BitAccess`, …).
    pub const STORAGE_8BIT: Features = Features(1 << 4);
    /// int16 arithmetic (`Int16`).
    pub const INT16: Features = Features(1 << 5);
    /// int64 arithmetic (`Int64`).
    pub const INT64: Features = Features(1 << 6);
    /// fp64 arithmetic (`Float64`).
    pub const FLOAT64: Features = Features(1 << 7);
    /// Subgroup operations (`GroupNonUniform*`).
    pub const SUBGROUP: Features = Features(1 << 8);
    /// Storage images without a declared format.
    pub const STORAGE_IMAGE_WITHOUT_FORMAT: Features = Features(1 << 9);
    /// Cooperative matrices.
    pub const COOPERATIVE_MATRIX: Features = Features(1 << 10);
    /// Integer dot products (`DotProduct`, `DotProductInput4x8BitPacked`, …:
    /// VK_KHR_shader_integer_dot_product, core in Vulkan 1.3).
    pub const INTEGER_DOT_PRODUCT: Features = Features(1 << 11);
    /// Workgroup-scope cooperative matrices addressed as tensors (VK_NV_cooperative_matrix2:
    /// `CooperativeMatrixTensorAddressingNV`, `TensorAddressingNV`, …).
    pub const COOPERATIVE_MATRIX2: Features = Features(1 << 12);

    const NAMES: [(Features, &'static str); 13] = [
        (Features::FLOAT16, "float16"),
        (Features::STORAGE_16BIT, "storage_16bit"),
        (Features::PUSH_CONSTANT_16BIT, "push_constant_16bit"),
        (Features::INT8, "int8"),
        (Features::STORAGE_8BIT, "storage_8bit"),
        (Features::INT16, "int16"),
        (Features::INT64, "int64"),
        (Features::FLOAT64, "float64"),
        (Features::SUBGROUP, "subgroup"),
        (
            Features::STORAGE_IMAGE_WITHOUT_FORMAT,
            "storage_image_without_format",
        ),
        (Features::COOPERATIVE_MATRIX, "cooperative_matrix"),
        (Features::INTEGER_DOT_PRODUCT, "integer_dot_product"),
        (Features::COOPERATIVE_MATRIX2, "cooperative_matrix2"),
    ];

    /// No features.
    pub const NONE: Features = Features(0);

    /// Whether every feature in `other` is in `self`.
    pub const fn contains(self, other: Features) -> bool {
        self.0 & other.0 == other.0
    }

    /// Union.
    #[must_use]
    pub const fn union(self, other: Features) -> Features {
        Features(self.0 | other.0)
    }

    /// The names of the features in the set.
    pub fn names(self) -> Vec<&'static str> {
        Features::NAMES
            .iter()
            .filter(|(f, _)| self.contains(*f))
            .map(|(_, n)| *n)
            .collect()
    }
}

impl fmt::Display for Features {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.names();
        if names.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&names.join(","))
        }
    }
}

/// Bytes aligned for reading as SPIR-V words: generated code embeds blobs as
/// `static B: Aligned<[u8; N]> = Aligned(*include_bytes!(…))` and reads them with [`words`].
#[repr(C, align(4))]
pub struct Aligned<T: ?Sized>(pub T);

/// `bytes` as little-endian 32-bit words, as SPIR-V files and VGF sections hold them; `None`
/// when they are not a whole number of words.
pub fn le_words(bytes: &[u8]) -> Option<Vec<u32>> {
    bytes.len().is_multiple_of(4).then(|| {
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    })
}

/// The little-endian SPIR-V bytes of `blob` as words, at compile time. SPIR-V files are written
/// little-endian, so this is for little-endian targets (every wgpu target).
pub const fn words<const N: usize>(blob: &'static Aligned<[u8; N]>) -> &'static [u32] {
    assert!(
        N.is_multiple_of(4),
        "SPIR-V blob length must be a multiple of 4"
    );
    #[cfg(target_endian = "big")]
    panic!("embedded SPIR-V needs a little-endian target");
    // SAFETY: `Aligned` is 4-byte aligned with the array at offset 0, N is a multiple of 4, and
    // every bit pattern is a valid u32; the data is 'static.
    unsafe { std::slice::from_raw_parts(blob.0.as_ptr().cast::<u32>(), N / 4) }
}
