//! TOSA models as a graph: values with tensor types, operations in program order, attributes
//! kept as text until a stage asks for them. [`mlir`] reads the TOSA MLIR text the converter
//! takes (generic and pretty forms).

pub mod mlir;
pub mod spirv;

use std::collections::BTreeMap;

/// The custom-op domain of Vulkan shader operations.
pub const SHADER_DOMAIN: &str = "com.arm.VulkanCustomShader";

/// A value's index in [`Graph::values`].
pub type ValueId = usize;

/// A tensor element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    /// `f32`.
    F32,
    /// `f16`.
    F16,
    /// `i1` (booleans).
    Bool,
    /// `i8`.
    I8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `i64`, or `index` (shape values).
    I64,
}

impl Elem {
    /// The `VkFormat` a tensor of this type has.
    pub fn vk_format(self) -> u32 {
        let name = match self {
            Elem::F32 => "VK_FORMAT_R32_SFLOAT",
            Elem::F16 => "VK_FORMAT_R16_SFLOAT",
            Elem::Bool => "VK_FORMAT_R8_BOOL_ARM",
            Elem::I8 => "VK_FORMAT_R8_SINT",
            Elem::I16 => "VK_FORMAT_R16_SINT",
            Elem::I32 => "VK_FORMAT_R32_SINT",
            Elem::I64 => "VK_FORMAT_R64_SINT",
        };
        // every name above is in the table (the VGF tests convert each of them)
        crate::vgf::format_value(name).unwrap_or(0)
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Elem::Bool | Elem::I8 => 1,
            Elem::F16 | Elem::I16 => 2,
            Elem::F32 | Elem::I32 => 4,
            Elem::I64 => 8,
        }
    }

    /// Whether it is a float type.
    pub fn is_float(self) -> bool {
        matches!(self, Elem::F32 | Elem::F16)
    }
}

/// A ranked tensor type with a static shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    /// Dimensions (empty for a scalar tensor).
    pub shape: Vec<i64>,
    /// Element type.
    pub elem: Elem,
}

impl TensorType {
    /// Number of elements.
    pub fn elements(&self) -> usize {
        self.shape.iter().map(|&d| d.max(0) as usize).product()
    }
}

/// One SSA value.
#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    /// Its name in the source (`%0`, `%arg1`).
    pub name: String,
    /// Its type.
    pub ty: TensorType,
}

/// A source position: 1-based line and column in MLIR text; for SPIR-V, `line` is a word
/// offset and `column` 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Loc {
    /// Line.
    pub line: usize,
    /// Column.
    pub column: usize,
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.column == 0 {
            // a SPIR-V graph's op: no source text, the instruction's word offset
            write!(f, "SPIR-V word {}", self.line)
        } else {
            write!(f, "{}:{}", self.line, self.column)
        }
    }
}

/// An attribute value, parsed where its form is known.
#[derive(Clone, Debug, PartialEq)]
pub enum Attr {
    /// A string (escapes resolved).
    Str(String),
    /// An integer or float, with its type suffix dropped.
    Number(f64),
    /// `true`/`false`.
    Bool(bool),
    /// `array<i64: …>` or `[…]` of numbers.
    Numbers(Vec<f64>),
    /// `dense<…> : tensor<…>`: the values (one for a splat) and the type.
    Dense(Vec<f64>, TensorType),
    /// Anything else, as written.
    Raw(String),
}

impl Attr {
    /// The string, if it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Attr::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// One operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    /// The full name (`tosa.add`, `tosa.custom`).
    pub name: String,
    /// Operand values.
    pub operands: Vec<ValueId>,
    /// Result values.
    pub results: Vec<ValueId>,
    /// Attributes (and properties) by name.
    pub attrs: BTreeMap<String, Attr>,
    /// Where it is written.
    pub loc: Loc,
}

impl Op {
    /// The TOSA operation name without the dialect (`add`).
    pub fn kind(&self) -> &str {
        self.name.strip_prefix("tosa.").unwrap_or(&self.name)
    }

    /// A string attribute.
    pub fn str_attr(&self, name: &str) -> Option<&str> {
        self.attrs.get(name).and_then(Attr::as_str)
    }

    /// Whether this is a `com.arm.VulkanCustomShader` operation.
    pub fn is_shader(&self) -> bool {
        self.kind() == "custom" && self.str_attr("domain_name") == Some(SHADER_DOMAIN)
    }
}

/// A model: one function.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Graph {
    /// The function's name.
    pub name: String,
    /// Every value.
    pub values: Vec<Value>,
    /// The function's arguments.
    pub inputs: Vec<ValueId>,
    /// Names of the inputs (`tf_saved_model.index_path`, else `input_<i>`).
    pub input_names: Vec<String>,
    /// Returned values.
    pub outputs: Vec<ValueId>,
    /// Names of the outputs.
    pub output_names: Vec<String>,
    /// Operations in program order.
    pub ops: Vec<Op>,
}

impl Graph {
    /// The op producing `v`, if any (none for inputs).
    pub fn producer(&self, v: ValueId) -> Option<usize> {
        self.ops.iter().position(|op| op.results.contains(&v))
    }
}
