//! Custom compute shaders that bind tensors (SPV_ARM_tensors) rewritten to storage buffers, so
//! that they run on any Vulkan device and through naga: each tensor variable becomes a buffer of
//! its element type, `OpTensorReadARM`/`OpTensorWriteARM` of one element a load or store at the
//! row-major index of its coordinates (strides from the shape of the resource the binding is
//! given), `OpTensorQuerySizeARM` that shape's dimension. Reads and writes of several elements
//! at once are refused, as are tensors in arrays. Debug line instructions are dropped.
//! Coordinates are checked against the shape as SPV_ARM_tensors defines, without branches: a
//! read with any coordinate past its dimension gives zero (or the access's out-of-bounds value)
//! and loads element 0 instead; a write there goes to index 2³² − 1, past any buffer, which
//! robust buffer access (`robustBufferAccess2`, on wherever wgpu finds it) drops.

use std::collections::HashMap;

use crate::spv::{self, Editor, Op};

/// Why a shader's tensors cannot be rewritten.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TensorRewriteError {
    /// The words are not a module.
    #[error("malformed SPIR-V: {0}")]
    Spirv(#[from] spv::SpvError),
    /// A tensor binding has no resource shape.
    #[error("the tensor at set {set} binding {binding} is bound to no resource with a shape")]
    Unbound {
        /// Its descriptor set.
        set: u32,
        /// Its binding.
        binding: u32,
    },
    /// Something this rewrite does not take.
    #[error("{0}")]
    Unsupported(&'static str),
    /// Tensor elements whose width is not whole bytes.
    #[error("tensor elements of {bits} bits")]
    ElementBits {
        /// The width.
        bits: u32,
    },
    /// A tensor shape or stride past what a 32-bit constant holds.
    #[error("tensor shape {shape:?} is too large")]
    ShapeTooLarge {
        /// The shape.
        shape: Vec<i64>,
    },
}

const TENSORS_ARM: u32 = 4174;
const TENSOR_ARRAY_CAPABILITIES: [u32; 2] = [4175, 4176];
const OP_TYPE_TENSOR: u16 = 4163;
const OP_TENSOR_READ: u16 = 4164;
const OP_TENSOR_WRITE: u16 = 4165;
const OP_TENSOR_QUERY_SIZE: u16 = 4166;
const STORAGE_UNIFORM_CONSTANT: u32 = 0;
const STORAGE_STORAGE_BUFFER: u32 = 12;
const DECORATION_BLOCK: u32 = 2;
const DECORATION_ARRAY_STRIDE: u32 = 6;
const DECORATION_BINDING: u32 = 33;
const DECORATION_DESCRIPTOR_SET: u32 = 34;
const DECORATION_OFFSET: u32 = 35;

/// One tensor variable: its tensor type and the shape its resource has.
struct TensorVar {
    ty: u32,
    shape: Vec<i64>,
    /// Constants: each dimension's stride and size (uint).
    strides: Vec<u32>,
    sizes: Vec<u32>,
}

/// The buffer types standing for one tensor type.
struct BufferTypes {
    element: u32,
    runtime_array: u32,
    block: u32,
    element_pointer: u32,
    /// The element's zero: what a read out of bounds gives.
    null: u32,
}

/// `words` with its tensors as storage buffers, `shape_of(set, binding)` giving each tensor
/// binding's shape; `None` when the module binds no tensors.
pub fn rewrite(
    words: &[u32],
    shape_of: &dyn Fn(u32, u32) -> Option<Vec<i64>>,
) -> Result<Option<Vec<u32>>, TensorRewriteError> {
    let module = spv::Module::new(words)?;
    let insts = module.parse()?;
    let unsupported = TensorRewriteError::Unsupported;

    // what the module declares
    let mut tensor_types: HashMap<u32, u32> = HashMap::new();
    let mut tensor_pointers: HashMap<u32, u32> = HashMap::new();
    let mut widths: HashMap<u32, u32> = HashMap::new();
    let mut uint = None;
    let mut boolean = None;
    let mut array_elements: HashMap<u32, u32> = HashMap::new();
    let mut int_types: HashMap<u32, bool> = HashMap::new();
    let mut constants: HashMap<u32, u32> = HashMap::new();
    let mut decorations: HashMap<(u32, u32), u32> = HashMap::new();
    let mut variables: Vec<(u32, u32)> = Vec::new();
    for inst in &insts {
        let o = inst.operands;
        match (inst.opcode, inst.op()) {
            (OP_TYPE_TENSOR, _) => {
                let &[id, element, ..] = o else {
                    return Err(unsupported("OpTypeTensorARM without an element type"));
                };
                tensor_types.insert(id, element);
            }
            (_, Some(Op::TypeInt)) if o.len() >= 3 => {
                widths.insert(o[0], o[1]);
                if o[1] == 32 {
                    int_types.insert(o[0], o[2] == 1);
                    if o[2] == 0 && uint.is_none() {
                        uint = Some((o[0], tensor_types.is_empty()));
                    }
                }
            }
            (_, Some(Op::TypeFloat)) if o.len() >= 2 => {
                widths.insert(o[0], o[1]);
            }
            (_, Some(Op::TypeBool)) if !o.is_empty() && boolean.is_none() => {
                boolean = Some((o[0], tensor_types.is_empty()));
            }
            (_, Some(Op::TypeArray)) if o.len() >= 2 => {
                array_elements.insert(o[0], o[1]);
            }
            (_, Some(Op::TypePointer)) if o.len() >= 3 => {
                if tensor_types.contains_key(&o[2]) {
                    tensor_pointers.insert(o[0], o[2]);
                }
                if array_elements
                    .get(&o[2])
                    .is_some_and(|e| tensor_types.contains_key(e))
                {
                    return Err(unsupported("arrays of tensors are not supported"));
                }
            }
            (_, Some(Op::Constant)) if o.len() >= 3 => {
                constants.insert(o[1], o[2]);
            }
            (_, Some(Op::Decorate)) if o.len() >= 3 => {
                decorations.insert((o[0], o[1]), o[2]);
            }
            (_, Some(Op::Variable)) if o.len() >= 3 => {
                if let Some(&ty) = tensor_pointers.get(&o[0]) {
                    variables.push((o[1], ty));
                }
            }
            _ => {}
        }
    }
    if tensor_types.is_empty() {
        return Ok(None);
    }

    let mut ed = Editor::new(&module);
    // the index type: the module's uint where it precedes the tensors, else declared (or
    // moved, keeping its id) where the first tensor type was
    let (uint_id, uint_before) = match uint {
        Some(u) => u,
        None => (ed.fresh(), false),
    };
    let zero = ed.fresh();
    // the bounds checks' boolean type (the module's, moved like the index type when it comes
    // after the tensors), their start and the write sink's index
    let (bool_id, bool_before) = match boolean {
        Some(b) => b,
        None => (ed.fresh(), false),
    };
    let (all_inside, sink) = (ed.fresh(), ed.fresh());
    // the buffer types of each tensor type, and each variable's shape constants
    let mut buffers: HashMap<u32, BufferTypes> = HashMap::new();
    for (&ty, &element) in &tensor_types {
        let width = widths.get(&element).copied().unwrap_or(32);
        if width % 8 != 0 {
            return Err(TensorRewriteError::ElementBits { bits: width });
        }
        buffers.insert(
            ty,
            BufferTypes {
                element,
                runtime_array: ed.fresh(),
                block: ed.fresh(),
                element_pointer: ed.fresh(),
                null: ed.fresh(),
            },
        );
    }
    let mut vars: HashMap<u32, TensorVar> = HashMap::new();
    for &(var, ty) in &variables {
        let set = decorations
            .get(&(var, DECORATION_DESCRIPTOR_SET))
            .copied()
            .unwrap_or(0);
        let binding = decorations
            .get(&(var, DECORATION_BINDING))
            .copied()
            .unwrap_or(0);
        let shape = shape_of(set, binding).ok_or(TensorRewriteError::Unbound { set, binding })?;
        let rank = shape.len();
        vars.insert(
            var,
            TensorVar {
                ty,
                shape,
                strides: (0..rank).map(|_| ed.fresh()).collect(),
                sizes: (0..rank).map(|_| ed.fresh()).collect(),
            },
        );
    }
    let mut loaded: HashMap<u32, u32> = HashMap::new();
    let mut types_of: HashMap<u32, u32> = HashMap::new();
    let mut decorated = false;
    let mut declared = false;
    for inst in &insts {
        let o = inst.operands;
        match (inst.opcode, inst.op()) {
            (_, Some(Op::Capability))
                if o.first().is_some_and(|&c| {
                    c == TENSORS_ARM || TENSOR_ARRAY_CAPABILITIES.contains(&c)
                }) => {}
            (_, Some(Op::Extension))
                if spv::string(o).is_some_and(|(s, _)| s == "SPV_ARM_tensors") => {}
            // debug lines: naga refuses them among the types, where glslang puts some
            (_, Some(Op::Line | Op::NoLine)) => {}
            (_, Some(Op::Decorate)) => {
                ed.copy(inst);
                if !decorated {
                    decorated = true;
                    for b in buffers.values() {
                        let stride = widths.get(&b.element).copied().unwrap_or(32) / 8;
                        ed.emit(
                            Op::Decorate,
                            &[b.runtime_array, DECORATION_ARRAY_STRIDE, stride],
                        );
                        ed.emit(Op::Decorate, &[b.block, DECORATION_BLOCK]);
                        ed.emit(Op::MemberDecorate, &[b.block, 0, DECORATION_OFFSET, 0]);
                    }
                }
            }
            (_, Some(Op::TypeInt)) if o.first() == Some(&uint_id) && !uint_before => {
                // moved to where the first tensor type was
            }
            (_, Some(Op::TypeBool)) if o.first() == Some(&bool_id) && !bool_before => {
                // moved to where the first tensor type was
            }
            (OP_TYPE_TENSOR, _) if !o.is_empty() => {
                if !declared {
                    declared = true;
                    // the index type and every shape constant, before the first buffer type
                    if !uint_before {
                        ed.emit(Op::TypeInt, &[uint_id, 32, 0]);
                    }
                    ed.emit(Op::Constant, &[uint_id, zero, 0]);
                    if !bool_before {
                        ed.emit(Op::TypeBool, &[bool_id]);
                    }
                    ed.emit(Op::ConstantTrue, &[bool_id, all_inside]);
                    ed.emit(Op::Constant, &[uint_id, sink, u32::MAX]);
                    for b in buffers.values() {
                        ed.emit(Op::ConstantNull, &[b.element, b.null]);
                    }
                    for v in vars.values() {
                        let mut stride = 1i64;
                        for d in (0..v.shape.len()).rev() {
                            let word = |x: i64| {
                                u32::try_from(x).map_err(|_| TensorRewriteError::ShapeTooLarge {
                                    shape: v.shape.clone(),
                                })
                            };
                            ed.emit(Op::Constant, &[uint_id, v.strides[d], word(stride)?]);
                            ed.emit(Op::Constant, &[uint_id, v.sizes[d], word(v.shape[d])?]);
                            stride = stride.saturating_mul(v.shape[d].max(1));
                        }
                    }
                }
                let b = &buffers[&o[0]];
                ed.emit(Op::TypeRuntimeArray, &[b.runtime_array, b.element]);
                ed.emit(Op::TypeStruct, &[b.block, b.runtime_array]);
                ed.emit(
                    Op::TypePointer,
                    &[b.element_pointer, STORAGE_STORAGE_BUFFER, b.element],
                );
            }
            (_, Some(Op::TypePointer))
                if o.first().is_some_and(|p| tensor_pointers.contains_key(p)) =>
            {
                let b = &buffers[&tensor_pointers[&o[0]]];
                ed.emit(Op::TypePointer, &[o[0], STORAGE_STORAGE_BUFFER, b.block]);
            }
            (_, Some(Op::Variable)) if o.len() >= 3 && vars.contains_key(&o[1]) => {
                if o[2] != STORAGE_UNIFORM_CONSTANT {
                    return Err(unsupported("a tensor variable outside UniformConstant"));
                }
                let mut w = o.to_vec();
                w[2] = STORAGE_STORAGE_BUFFER;
                ed.emit(Op::Variable, &w);
            }
            (_, Some(Op::Load)) if o.len() >= 3 && vars.contains_key(&o[2]) => {
                loaded.insert(o[1], o[2]);
            }
            (OP_TENSOR_READ | OP_TENSOR_WRITE, _) => {
                let read = inst.opcode == OP_TENSOR_READ;
                let (tensor, coords) = if read {
                    (o.get(2), o.get(3))
                } else {
                    (o.first(), o.get(1))
                };
                let (Some(tensor), Some(&coords)) = (tensor, coords) else {
                    return Err(unsupported("a tensor access without its operands"));
                };
                let var = *loaded
                    .get(tensor)
                    .ok_or_else(|| unsupported("a tensor that is not a loaded variable"))?;
                let v = &vars[&var];
                let b = &buffers[&v.ty];
                if read && o[0] != b.element {
                    return Err(unsupported(
                        "a tensor read of several elements (only one element a read is taken)",
                    ));
                }
                // the row-major index of the coordinates
                let signed = types_of
                    .get(&coords)
                    .and_then(|t| array_elements.get(t))
                    .and_then(|e| int_types.get(e))
                    .copied()
                    .unwrap_or(false);
                let coord_ty = types_of
                    .get(&coords)
                    .and_then(|t| array_elements.get(t))
                    .copied()
                    .unwrap_or(uint_id);
                // and whether every coordinate is inside its dimension (a negative one, as
                // uint, is past any)
                let mut index = zero;
                let mut inside = all_inside;
                for d in 0..v.shape.len() {
                    let c = ed.fresh();
                    ed.emit(Op::CompositeExtract, &[coord_ty, c, coords, d as u32]);
                    let c = if signed {
                        let u = ed.fresh();
                        ed.emit(Op::Bitcast, &[uint_id, u, c]);
                        u
                    } else {
                        c
                    };
                    let term = ed.fresh();
                    ed.emit(Op::IMul, &[uint_id, term, c, v.strides[d]]);
                    let sum = ed.fresh();
                    ed.emit(Op::IAdd, &[uint_id, sum, index, term]);
                    index = sum;
                    let below = ed.fresh();
                    ed.emit(Op::ULessThan, &[bool_id, below, c, v.sizes[d]]);
                    let both = ed.fresh();
                    ed.emit(Op::LogicalAnd, &[bool_id, both, inside, below]);
                    inside = both;
                }
                // outside: a read loads element 0 and gives the out-of-bounds value, a write
                // goes past the buffer
                let checked = ed.fresh();
                let elsewhere = if read { zero } else { sink };
                ed.emit(Op::Select, &[uint_id, checked, inside, index, elsewhere]);
                let at = ed.fresh();
                ed.emit(
                    Op::AccessChain,
                    &[b.element_pointer, at, var, zero, checked],
                );
                if read {
                    // TensorOperands: Nontemporal (0x1) takes no operand, OutOfBoundsValue
                    // (0x2) the value
                    let operands = o.get(4).copied().unwrap_or(0);
                    let outside = match o.get(5) {
                        Some(&value) if operands & 2 != 0 => value,
                        _ => b.null,
                    };
                    let value = ed.fresh();
                    ed.emit(Op::Load, &[o[0], value, at]);
                    ed.emit(Op::Select, &[o[0], o[1], inside, value, outside]);
                } else {
                    let &object = o
                        .get(2)
                        .ok_or_else(|| unsupported("a tensor write without its value"))?;
                    ed.emit(Op::Store, &[at, object]);
                }
            }
            (OP_TENSOR_QUERY_SIZE, _) => {
                let &[ty, result, tensor, dim, ..] = o else {
                    return Err(unsupported("OpTensorQuerySizeARM without its operands"));
                };
                let var = *loaded
                    .get(&tensor)
                    .ok_or_else(|| unsupported("a tensor that is not a loaded variable"))?;
                let v = &vars[&var];
                let d = constants
                    .get(&dim)
                    .map(|&d| d as usize)
                    .filter(|&d| d < v.sizes.len())
                    .ok_or_else(|| unsupported("a tensor size query of no constant dimension"))?;
                if ty != uint_id {
                    return Err(unsupported("a tensor size query not of uint"));
                }
                ed.emit(Op::CopyObject, &[ty, result, v.sizes[d]]);
            }
            (_, op) => {
                if matches!(
                    op,
                    Some(
                        Op::CompositeConstruct
                            | Op::ConstantComposite
                            | Op::SpecConstantComposite
                            | Op::Load
                            | Op::CopyObject
                            | Op::CompositeInsert
                    )
                ) && o.len() >= 2
                {
                    types_of.insert(o[1], o[0]);
                }
                ed.copy(inst);
            }
        }
    }
    Ok(Some(ed.finish()))
}
