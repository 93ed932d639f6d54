//! TOSA models as a graph: values with tensor types, operations in program order, attributes
//! kept as text until a stage asks for them. [`mlir`] reads the TOSA MLIR text the converter
//! takes (generic and pretty forms).

pub mod flatbuffer;
pub mod mlir;
pub mod spirv;
pub mod spirv_write;

use std::collections::BTreeMap;

/// The TOSA 1.0 operators in specification order, in MLIR's spelling: the SPIR-V extended
/// instruction set numbers them from 0 (SPIRV-Headers `TOSA.001000.1.h`), the flatbuffer
/// schema's `Op` enum from 1.
pub(crate) const OPERATORS: [&str; 66] = [
    "argmax",
    "avg_pool2d",
    "conv2d",
    "conv3d",
    "depthwise_conv2d",
    "fft2d",
    "matmul",
    "max_pool2d",
    "rfft2d",
    "transpose_conv2d",
    "clamp",
    "erf",
    "sigmoid",
    "tanh",
    "add",
    "arithmetic_right_shift",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "intdiv",
    "logical_and",
    "logical_left_shift",
    "logical_right_shift",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mul",
    "pow",
    "sub",
    "table",
    "abs",
    "bitwise_not",
    "ceil",
    "clz",
    "cos",
    "exp",
    "floor",
    "log",
    "logical_not",
    "negate",
    "reciprocal",
    "rsqrt",
    "sin",
    "select",
    "equal",
    "greater",
    "greater_equal",
    "reduce_all",
    "reduce_any",
    "reduce_max",
    "reduce_min",
    "reduce_product",
    "reduce_sum",
    "concat",
    "pad",
    "reshape",
    "reverse",
    "slice",
    "tile",
    "transpose",
    "gather",
    "scatter",
    "resize",
    "cast",
    "rescale",
];

/// `resize`'s `mode` as the SPIR-V and flatbuffer forms number it (MLIR writes the name):
/// 1 nearest neighbour, 2 bilinear.
pub fn resize_mode(attr: Option<&Attr>) -> Option<u32> {
    match attr? {
        Attr::Number(n) if *n == 1.0 || *n == 2.0 => Some(*n as u32),
        Attr::Raw(name) | Attr::Str(name) => match name.as_str() {
            "NEAREST_NEIGHBOR" | "NEAREST" => Some(1),
            "BILINEAR" => Some(2),
            _ => None,
        },
        _ => None,
    }
}

/// `rescale`'s `rounding_mode` as the SPIR-V and flatbuffer forms number it (MLIR writes the
/// name): 1 single, 2 inexact, 3 double rounding.
pub fn rounding_mode(attr: Option<&Attr>) -> Option<u32> {
    match attr? {
        Attr::Number(n) if (1.0..=3.0).contains(n) => Some(*n as u32),
        Attr::Raw(name) | Attr::Str(name) => match name.as_str() {
            "SINGLE_ROUND" => Some(1),
            "INEXACT_ROUND" => Some(2),
            "DOUBLE_ROUND" => Some(3),
            _ => None,
        },
        _ => None,
    }
}

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

    /// The element type whose tensors have `VkFormat` `format`, if one has it.
    pub fn from_vk_format(format: u32) -> Option<Elem> {
        [
            Elem::F32,
            Elem::F16,
            Elem::Bool,
            Elem::I8,
            Elem::I16,
            Elem::I32,
            Elem::I64,
        ]
        .into_iter()
        .find(|e| e.vk_format() == format)
    }

    /// The values of little-endian elements in `data` (a trailing partial element is left out);
    /// the inverse of [`TensorType::bytes`].
    pub fn decode(self, data: &[u8]) -> Vec<f64> {
        data.chunks_exact(self.size())
            .map(|c| match self {
                Elem::F32 => f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                Elem::F16 => f64::from(half::f16::from_le_bytes([c[0], c[1]])),
                Elem::Bool => f64::from(c[0] != 0),
                Elem::I8 => f64::from(c[0] as i8),
                Elem::I16 => f64::from(i16::from_le_bytes([c[0], c[1]])),
                Elem::I32 => f64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                Elem::I64 => {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(c);
                    i64::from_le_bytes(b) as f64
                }
            })
            .collect()
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
        // saturating: shapes come from files, and a huge one must fail later, not overflow
        self.shape
            .iter()
            .fold(1usize, |n, &d| n.saturating_mul(d.max(0) as usize))
    }

    /// The little-endian bytes of a tensor of this type holding `values` (one value fills
    /// every element); `None` when the count fits neither.
    pub fn bytes(&self, values: &[f64]) -> Option<Vec<u8>> {
        let n = self.elements();
        let splat;
        let values = match values.len() {
            1 if n != 1 => {
                splat = vec![values[0]; n];
                &splat
            }
            len if len == n => values,
            _ => return None,
        };
        let mut out = Vec::with_capacity(n * self.elem.size());
        for &v in values {
            match self.elem {
                Elem::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
                Elem::F16 => out.extend_from_slice(&half::f16::from_f64(v).to_le_bytes()),
                Elem::Bool | Elem::I8 => out.push(v as i8 as u8),
                Elem::I16 => out.extend_from_slice(&(v as i16).to_le_bytes()),
                Elem::I32 => out.extend_from_slice(&(v as i32).to_le_bytes()),
                Elem::I64 => out.extend_from_slice(&(v as i64).to_le_bytes()),
            }
        }
        Some(out)
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

/// Where an operation is written, in the form its source has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// MLIR text: 1-based line and column.
    Text {
        /// Line.
        line: usize,
        /// Column.
        column: usize,
    },
    /// A TOSA flatbuffer: the operator table's byte offset.
    Byte(usize),
    /// Graph SPIR-V: the instruction's word offset.
    Word(usize),
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Loc::Text { line, column } => write!(f, "{line}:{column}"),
            Loc::Byte(offset) => write!(f, "byte {offset}"),
            Loc::Word(offset) => write!(f, "SPIR-V word {offset}"),
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
    /// A `tosa.const` op giving `result` (of type `ty`) the values `values`.
    pub fn constant(result: ValueId, values: Vec<f64>, ty: TensorType, loc: Loc) -> Op {
        Op {
            name: "tosa.const".into(),
            operands: Vec::new(),
            results: vec![result],
            attrs: BTreeMap::from([("values".to_string(), Attr::Dense(values, ty))]),
            loc,
        }
    }

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
