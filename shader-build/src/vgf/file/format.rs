//! The VGF model as data: what the writer serializes, the reader returns and the runtime runs.
//!
//! Field meanings follow Arm's `schema/vgf.fbs` and `docs/source/file_format.rst`
//! (ai-ml-sdk-vgf-library); Vulkan enums are stored as their numeric values, as on disk.

use serde::{Deserialize, Serialize};

/// A file format version (`major.minor.patch` bytes of the header).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FormatVersion(pub u8, pub u8, pub u8);

impl FormatVersion {
    /// 0.4.3: read by both current VGF library releases (0.10 and 0.11); what fpshader writes.
    pub const V0_4_3: FormatVersion = FormatVersion(0, 4, 3);
    /// 0.5.0: what Arm's 0.11 converter writes; only the 0.11 library reads it.
    pub const V0_5_0: FormatVersion = FormatVersion(0, 5, 0);
}

impl std::fmt::Display for FormatVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// A whole VGF file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Vgf {
    /// The header's format version.
    pub version: FormatVersion,
    /// The header's `VK_HEADER_VERSION` (Arm's converter writes 0).
    pub vk_header_version: u16,
    /// Shader and graph modules.
    pub modules: Vec<Module>,
    /// Segments in execution order, with the model's inputs and outputs.
    pub sequence: ModelSequence,
    /// The model resource table: every tensor or buffer a segment binds.
    pub resources: Vec<Resource>,
    /// Constant payloads, each tied to a resource.
    pub constants: Vec<Constant>,
}

/// Compute shader or data graph; the discriminant is the on-disk value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum ModuleType {
    /// A compute shader dispatched with `vkCmdDispatch`.
    Compute = 0,
    /// A data graph (`SPV_ARM_graph`) dispatched on a data-graph queue.
    Graph = 1,
}

impl ModuleType {
    /// The type stored as `value`, if the schema defines it.
    pub fn from_value(value: u8) -> Option<Self> {
        [ModuleType::Compute, ModuleType::Graph]
            .into_iter()
            .find(|t| *t as u8 == value)
    }

    /// The schema's name (`COMPUTE`, `GRAPH`).
    pub fn name(self) -> &'static str {
        match self {
            ModuleType::Compute => "COMPUTE",
            ModuleType::Graph => "GRAPH",
        }
    }
}

/// What a module carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ModuleCode {
    /// No code: a placeholder the application supplies at run time, by module name.
    None,
    /// SPIR-V words.
    Spirv(Vec<u32>),
    /// GLSL source (Arm's converter stores GLSL custom shaders this way; fpshader never does).
    Glsl(String),
    /// HLSL source.
    Hlsl(String),
}

impl ModuleCode {
    /// `vgf_dump`'s `shader_type` name.
    pub fn type_name(&self) -> &'static str {
        match self {
            ModuleCode::None => "None",
            ModuleCode::Spirv(_) => "SPIR-V",
            ModuleCode::Glsl(_) => "GLSL",
            ModuleCode::Hlsl(_) => "HLSL",
        }
    }
}

/// One module of the module table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Module {
    /// Compute or graph.
    pub ty: ModuleType,
    /// The module's name (placeholders are looked up by it).
    pub name: String,
    /// The entry point.
    pub entry_point: String,
    /// The code, if any.
    pub code: ModuleCode,
}

/// A descriptor binding number and the resource it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BindingSlot {
    /// Binding number (for model and segment inputs/outputs: the resource's position).
    pub binding: u32,
    /// Index into the model resource table.
    pub mrt_index: u32,
}

/// One descriptor set of a segment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DescriptorSetInfo {
    /// The set number; `None` when the file leaves it to the position in the list.
    pub set_index: Option<u32>,
    /// Its bindings.
    pub bindings: Vec<BindingSlot>,
}

/// A push-constant range of a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushConstantRange {
    /// `VkShaderStageFlags`.
    pub stage_flags: u32,
    /// Byte offset.
    pub offset: u32,
    /// Byte size.
    pub size: u32,
}

/// One segment: a module dispatched with its descriptor sets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    /// Compute or graph.
    pub ty: ModuleType,
    /// The segment's name.
    pub name: String,
    /// Index into the module table.
    pub module_index: u32,
    /// Descriptor sets.
    pub set_infos: Vec<DescriptorSetInfo>,
    /// Resources the segment reads that others produce.
    pub inputs: Vec<BindingSlot>,
    /// Resources the segment produces for others.
    pub outputs: Vec<BindingSlot>,
    /// Indices into the constants.
    pub constants: Vec<u32>,
    /// Workgroup count for compute segments (`[0, 0, 0]` for graphs).
    pub dispatch_shape: Vec<u32>,
    /// Push-constant ranges.
    pub push_constant_ranges: Vec<PushConstantRange>,
}

/// The model sequence table.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelSequence {
    /// Segments in execution order.
    pub segments: Vec<Segment>,
    /// The model's inputs.
    pub inputs: Vec<BindingSlot>,
    /// The model's outputs.
    pub outputs: Vec<BindingSlot>,
    /// Names of the inputs, in order.
    pub input_names: Vec<String>,
    /// Names of the outputs, in order.
    pub output_names: Vec<String>,
}

/// What a resource is for the model; the discriminant is the on-disk value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum ResourceCategory {
    /// A model input.
    Input = 0,
    /// A model output.
    Output = 1,
    /// A value passed between segments.
    Intermediate = 2,
    /// Constant data.
    Constant = 3,
}

impl ResourceCategory {
    /// The category stored as `value`, if the schema defines it.
    pub fn from_value(value: u8) -> Option<Self> {
        use ResourceCategory::*;
        [Input, Output, Intermediate, Constant]
            .into_iter()
            .find(|c| *c as u8 == value)
    }

    /// The schema's name.
    pub fn name(self) -> &'static str {
        match self {
            ResourceCategory::Input => "INPUT",
            ResourceCategory::Output => "OUTPUT",
            ResourceCategory::Intermediate => "INTERMEDIATE",
            ResourceCategory::Constant => "CONSTANT",
        }
    }
}

/// Sampler state for a sampled image input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SamplerConfig {
    /// `VkFilter`.
    pub min_filter: u32,
    /// `VkFilter`.
    pub mag_filter: u32,
    /// `VkSamplerAddressMode`.
    pub address_mode_u: u32,
    /// `VkSamplerAddressMode`.
    pub address_mode_v: u32,
    /// `VkBorderColor`.
    pub border_color: u32,
}

/// One entry of the model resource table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    /// `VkDescriptorType`; `None` for constants (stored as `u32::MAX`).
    pub vk_descriptor_type: Option<u32>,
    /// `VkFormat` of one element.
    pub vk_format: u32,
    /// Input, output, intermediate or constant.
    pub category: ResourceCategory,
    /// Tensor shape.
    pub shape: Vec<i64>,
    /// Strides in elements; empty means packed.
    pub strides: Vec<i64>,
    /// Sampler state, for sampled images.
    pub sampler: Option<SamplerConfig>,
    /// Entries of one group share storage (a value seen as a tensor and as a buffer).
    pub alias_group: Option<u32>,
}

impl Resource {
    /// Elements in the tensor (a scalar counts one); `None` for a negative or overflowing shape.
    pub fn element_count(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).ok()?))
    }

    /// Bytes of the packed tensor, if the format is one fpshader knows. An image's format is
    /// a texel of the shape's last dimension (`[1, H, W, C]` with a C-channel format, as Arm's
    /// converter writes it), a tensor's one element.
    pub fn byte_size(&self) -> Option<u64> {
        let per = u64::from(format_size(self.vk_format)?);
        if self.is_image() {
            let channels = u64::from(format_channels(self.vk_format)?);
            return (self.element_count()? / channels).checked_mul(per);
        }
        self.element_count()?.checked_mul(per)
    }

    /// Whether shaders bind this resource as an image (storage, sampled or with a sampler).
    pub fn is_image(&self) -> bool {
        self.vk_descriptor_type.is_some_and(is_image_descriptor)
    }
}

/// One constant payload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Constant {
    /// The resource it fills.
    pub mrt_index: u32,
    /// Sparse dimension, or -1.
    pub sparsity_dimension: i32,
    /// The bytes.
    pub data: Vec<u8>,
}

/// `VK_DESCRIPTOR_TYPE_TENSOR_ARM`.
pub const DESCRIPTOR_TYPE_TENSOR_ARM: u32 = 1_000_460_000;
/// `VK_DESCRIPTOR_TYPE_STORAGE_BUFFER`.
pub const DESCRIPTOR_TYPE_STORAGE_BUFFER: u32 = 7;
/// `VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER`.
pub const DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER: u32 = 1;
/// `VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE`.
pub const DESCRIPTOR_TYPE_SAMPLED_IMAGE: u32 = 2;
/// `VK_DESCRIPTOR_TYPE_STORAGE_IMAGE`.
pub const DESCRIPTOR_TYPE_STORAGE_IMAGE: u32 = 3;

/// Whether a `VkDescriptorType` binds an image.
pub fn is_image_descriptor(ty: u32) -> bool {
    matches!(
        ty,
        DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER
            | DESCRIPTOR_TYPE_SAMPLED_IMAGE
            | DESCRIPTOR_TYPE_STORAGE_IMAGE
    )
}

/// `VkDescriptorType` names and values that custom shaders and VGF files use.
pub const DESCRIPTOR_TYPES: &[(&str, u32)] = &[
    ("VK_DESCRIPTOR_TYPE_SAMPLER", 0),
    ("VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER", 1),
    ("VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE", 2),
    ("VK_DESCRIPTOR_TYPE_STORAGE_IMAGE", 3),
    ("VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER", 4),
    ("VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER", 5),
    ("VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER", 6),
    ("VK_DESCRIPTOR_TYPE_STORAGE_BUFFER", 7),
    ("VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC", 8),
    ("VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC", 9),
    ("VK_DESCRIPTOR_TYPE_TENSOR_ARM", DESCRIPTOR_TYPE_TENSOR_ARM),
];

/// `VkFormat` names, values and element sizes in bytes that tensors use.
pub const FORMATS: &[(&str, u32, u32)] = &[
    ("VK_FORMAT_UNDEFINED", 0, 0),
    ("VK_FORMAT_R8_UNORM", 9, 1),
    ("VK_FORMAT_R8_SNORM", 10, 1),
    ("VK_FORMAT_R8_UINT", 13, 1),
    ("VK_FORMAT_R8_SINT", 14, 1),
    ("VK_FORMAT_R8G8B8A8_UNORM", 37, 4),
    ("VK_FORMAT_R8G8B8A8_SNORM", 38, 4),
    ("VK_FORMAT_R8G8B8A8_UINT", 41, 4),
    ("VK_FORMAT_R8G8B8A8_SINT", 42, 4),
    ("VK_FORMAT_B8G8R8A8_UNORM", 44, 4),
    ("VK_FORMAT_R16_UNORM", 70, 2),
    ("VK_FORMAT_R16_SNORM", 71, 2),
    ("VK_FORMAT_R16_UINT", 74, 2),
    ("VK_FORMAT_R16_SINT", 75, 2),
    ("VK_FORMAT_R16_SFLOAT", 76, 2),
    ("VK_FORMAT_R16G16_SFLOAT", 83, 4),
    ("VK_FORMAT_R16G16B16A16_UINT", 95, 8),
    ("VK_FORMAT_R16G16B16A16_SINT", 96, 8),
    ("VK_FORMAT_R16G16B16A16_SFLOAT", 97, 8),
    ("VK_FORMAT_R32_UINT", 98, 4),
    ("VK_FORMAT_R32_SINT", 99, 4),
    ("VK_FORMAT_R32_SFLOAT", 100, 4),
    ("VK_FORMAT_R32G32_UINT", 101, 8),
    ("VK_FORMAT_R32G32_SINT", 102, 8),
    ("VK_FORMAT_R32G32_SFLOAT", 103, 8),
    ("VK_FORMAT_R32G32B32A32_UINT", 107, 16),
    ("VK_FORMAT_R32G32B32A32_SINT", 108, 16),
    ("VK_FORMAT_R32G32B32A32_SFLOAT", 109, 16),
    ("VK_FORMAT_R64_UINT", 110, 8),
    ("VK_FORMAT_R64_SINT", 111, 8),
    ("VK_FORMAT_R64_SFLOAT", 112, 8),
    ("VK_FORMAT_R8_BOOL_ARM", 1_000_460_000, 1),
];

/// The value of a `VkDescriptorType` name.
pub fn descriptor_type_value(name: &str) -> Option<u32> {
    DESCRIPTOR_TYPES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|e| e.1)
}

/// The name of a `VkDescriptorType` value.
pub fn descriptor_type_name(value: u32) -> Option<&'static str> {
    DESCRIPTOR_TYPES
        .iter()
        .find(|(_, v)| *v == value)
        .map(|e| e.0)
}

/// The value of a `VkFormat` name.
pub fn format_value(name: &str) -> Option<u32> {
    FORMATS.iter().find(|(n, _, _)| *n == name).map(|e| e.1)
}

/// The name of a `VkFormat` value.
pub fn format_name(value: u32) -> Option<&'static str> {
    FORMATS.iter().find(|(_, v, _)| *v == value).map(|e| e.0)
}

/// Channels of a `VkFormat` (its component letters: `R32G32B32A32` has 4), if fpshader knows it.
pub fn format_channels(value: u32) -> Option<u32> {
    let (name, ..) = FORMATS.iter().find(|(_, v, _)| *v == value)?;
    let components = name.strip_prefix("VK_FORMAT_")?.split('_').next()?;
    let n = components.chars().filter(|c| "RGBA".contains(*c)).count() as u32;
    (n > 0).then_some(n)
}

/// Bytes per element of a `VkFormat` value (`None` if unknown or undefined).
pub fn format_size(value: u32) -> Option<u32> {
    FORMATS
        .iter()
        .find(|(_, v, _)| *v == value)
        .map(|e| e.2)
        .filter(|&s| s > 0)
}
