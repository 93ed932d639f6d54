//! An ML partition written as a TOSA graph in SPIR-V (`SPV_ARM_graph`, `SPV_ARM_tensors` and
//! the `TOSA.001000.1` extended instruction set), laid out as Arm's converter lays its graph
//! modules out, so that a VGF's graph segments run on `VK_ARM_data_graph` devices and in Arm's
//! emulation layer. [`super::spirv`] reads it back.
//!
//! Graph input `i` is the interface variable at binding `i` of set 0, output `j` the one at
//! binding `inputs + j`. Constant tensors of at most [`INLINE_ELEMENTS`] elements (zero points,
//! shifts, biases, shapes) are written inline; larger ones become `OpGraphConstantARM` whose
//! data the VGF carries, numbered in [`GraphSpirv::constants`] order.

use std::collections::HashMap;

use crate::spv::{self, MAGIC};

use super::spirv::{
    DECORATION_BINDING, DECORATION_DESCRIPTOR_SET, TOSA_SET, attribute_operands, opcode,
};
use super::{Attr, Elem, Graph, OPERATORS, Op, TensorType, ValueId};

/// Constants up to this many elements are written into the module.
pub const INLINE_ELEMENTS: usize = 16;

/// A partition that cannot be written as a TOSA graph.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{loc}: `{name}` cannot be written as a TOSA graph: {problem}")]
pub struct SpirvWriteError {
    /// Where the op is.
    pub loc: String,
    /// The op's name.
    pub name: String,
    /// Why.
    pub problem: String,
}

/// The module of one graph partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphSpirv {
    /// The SPIR-V words.
    pub words: Vec<u32>,
    /// The values whose data the VGF must carry, by graph constant id.
    pub constants: Vec<ValueId>,
}

const SPIRV_1_5: u32 = 0x0001_0500;
const CAPABILITIES: [u32; 5] = [
    1,    // Shader
    39,   // Int8
    4174, // TensorsARM
    4191, // GraphARM
    5345, // VulkanMemoryModel
];
const CAPABILITY_FLOAT16: u32 = 9;
const CAPABILITY_INT16: u32 = 22;
const EXTENSIONS: [&str; 3] = [
    "SPV_ARM_tensors",
    "SPV_ARM_graph",
    "SPV_KHR_vulkan_memory_model",
];
/// Attributes that are `tensor<N x i32>` constants.
const ARRAY_ATTRS: [&str; 6] = ["pad", "stride", "dilation", "kernel", "out_pad", "perms"];
/// Attributes that are booleans.
const BOOL_ATTRS: [&str; 7] = [
    "local_bound",
    "round",
    "inverse",
    "scale32",
    "per_channel",
    "input_unsigned",
    "output_unsigned",
];
/// `nan_mode` PROPAGATE, MLIR's default.
const NAN_PROPAGATE: u32 = 1;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum TypeKey {
    Bool,
    Int(u32),
    Float(u32),
    Array(u32, u32),
    Tensor(u32, Vec<i64>),
    Pointer(u32),
    Struct(Vec<u32>),
}

#[derive(Default)]
struct Module {
    next: u32,
    decorations: Vec<u32>,
    globals: Vec<u32>,
    body: Vec<u32>,
    types: HashMap<TypeKey, u32>,
    scalars: HashMap<(u32, u32), u32>,
    bools: HashMap<bool, u32>,
}

impl Module {
    fn id(&mut self) -> u32 {
        self.next += 1;
        self.next
    }

    fn ty(&mut self, key: TypeKey) -> u32 {
        if let Some(&id) = self.types.get(&key) {
            return id;
        }
        let operands = match &key {
            TypeKey::Bool => (opcode::TYPE_BOOL, vec![]),
            TypeKey::Int(w) => (opcode::TYPE_INT, vec![*w, 0]),
            TypeKey::Float(w) => (opcode::TYPE_FLOAT, vec![*w]),
            TypeKey::Array(elem, len) => (opcode::TYPE_ARRAY, vec![*elem, *len]),
            TypeKey::Pointer(pointee) => (opcode::TYPE_POINTER, vec![0, *pointee]),
            TypeKey::Struct(members) => (opcode::TYPE_STRUCT, members.clone()),
            TypeKey::Tensor(elem, shape) => {
                let (elem, shape) = (*elem, shape.clone());
                let u32_ty = self.ty(TypeKey::Int(32));
                let rank = self.uint(shape.len() as u32);
                let array = self.ty(TypeKey::Array(u32_ty, rank));
                let dims: Vec<u32> = shape.iter().map(|&d| self.uint(d as u32)).collect();
                let shape_id = self.id();
                let mut ops = vec![array, shape_id];
                ops.extend(dims);
                spv::push(&mut self.globals, opcode::CONSTANT_COMPOSITE, &ops);
                (opcode::TYPE_TENSOR_ARM, vec![elem, rank, shape_id])
            }
        };
        let id = self.id();
        let mut ops = vec![id];
        ops.extend(operands.1);
        spv::push(&mut self.globals, operands.0, &ops);
        self.types.insert(key, id);
        id
    }

    fn elem_type(&mut self, elem: Elem) -> u32 {
        match elem {
            Elem::F32 => self.ty(TypeKey::Float(32)),
            Elem::F16 => self.ty(TypeKey::Float(16)),
            Elem::Bool => self.ty(TypeKey::Bool),
            Elem::I8 => self.ty(TypeKey::Int(8)),
            Elem::I16 => self.ty(TypeKey::Int(16)),
            // shapes (`index`) are i32 tensors in SPIR-V
            Elem::I32 | Elem::I64 => self.ty(TypeKey::Int(32)),
        }
    }

    fn tensor_type(&mut self, t: &TensorType) -> u32 {
        let elem = self.elem_type(t.elem);
        self.ty(TypeKey::Tensor(elem, t.shape.clone()))
    }

    /// A scalar constant of type `ty` with the literal `bits`.
    fn scalar(&mut self, ty: u32, bits: u32) -> u32 {
        if let Some(&id) = self.scalars.get(&(ty, bits)) {
            return id;
        }
        let id = self.id();
        spv::push(&mut self.globals, opcode::CONSTANT, &[ty, id, bits]);
        self.scalars.insert((ty, bits), id);
        id
    }

    fn uint(&mut self, v: u32) -> u32 {
        let ty = self.ty(TypeKey::Int(32));
        self.scalar(ty, v)
    }

    fn boolean(&mut self, v: bool) -> u32 {
        if let Some(&id) = self.bools.get(&v) {
            return id;
        }
        let ty = self.ty(TypeKey::Bool);
        let id = self.id();
        let op = if v {
            opcode::CONSTANT_TRUE
        } else {
            opcode::CONSTANT_FALSE
        };
        spv::push(&mut self.globals, op, &[ty, id]);
        self.bools.insert(v, id);
        id
    }

    /// The literal of `v` as an element of `elem`.
    fn bits(elem: Elem, v: f64) -> u32 {
        match elem {
            Elem::F32 => (v as f32).to_bits(),
            Elem::F16 => u32::from(half::f16::from_f64(v).to_bits()),
            Elem::Bool => u32::from(v != 0.0),
            Elem::I8 => u32::from(v as i8 as u8),
            Elem::I16 => u32::from(v as i16 as u16),
            Elem::I32 | Elem::I64 => v as i32 as u32,
        }
    }

    /// An inline rank-1 (or all-zero) constant tensor.
    fn tensor_constant(&mut self, t: &TensorType, values: &[f64]) -> u32 {
        let ty = self.tensor_type(t);
        let id = self.id();
        if values.iter().all(|&v| v == 0.0) {
            spv::push(&mut self.globals, opcode::CONSTANT_NULL, &[ty, id]);
            return id;
        }
        let elem_ty = self.elem_type(t.elem);
        let parts: Vec<u32> = values
            .iter()
            .map(|&v| self.scalar(elem_ty, Self::bits(t.elem, v)))
            .collect();
        let mut ops = vec![ty, id];
        ops.extend(parts);
        spv::push(&mut self.globals, opcode::CONSTANT_COMPOSITE, &ops);
        id
    }

    fn int_tensor(&mut self, values: &[i64]) -> u32 {
        let t = TensorType {
            shape: vec![values.len() as i64],
            elem: Elem::I32,
        };
        let values: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        self.tensor_constant(&t, &values)
    }
}

fn error(op: &Op, problem: impl Into<String>) -> SpirvWriteError {
    SpirvWriteError {
        loc: op.loc.to_string(),
        name: op.name.clone(),
        problem: problem.into(),
    }
}

/// The `acc_type` enum of the TOSA SPIR-V instructions for MLIR's `acc_type = f32` etc.
fn acc_type(op: &Op, elem: Elem) -> Result<u32, SpirvWriteError> {
    let text = match op.attrs.get("acc_type") {
        Some(Attr::Raw(t)) => t.trim().to_string(),
        Some(Attr::Str(t)) => t.clone(),
        None => if elem.is_float() { "f32" } else { "i32" }.to_string(),
        Some(other) => return Err(error(op, format!("acc_type {other:?}"))),
    };
    Ok(match text.as_str() {
        "i32" => 1,
        "f16" => 2,
        "f32" => 3,
        "i48" => 4,
        other => return Err(error(op, format!("acc_type `{other}` is not known"))),
    })
}

/// The id of constant value `v` (produced by a const op of the partition), written inline or
/// as a graph constant; `None` when no const op of the partition produces it.
fn constant(
    m: &mut Module,
    graph: &Graph,
    producer: &HashMap<ValueId, &Op>,
    v: ValueId,
    constants: &mut Vec<ValueId>,
) -> Option<u32> {
    let Some(Attr::Dense(values, _)) = producer
        .get(&v)
        .filter(|p| matches!(p.kind(), "const" | "const_shape"))
        .and_then(|p| p.attrs.get("values"))
    else {
        return None;
    };
    let t = &graph.values[v].ty;
    let n = t.elements();
    let values = if values.len() == 1 {
        vec![values[0]; n]
    } else {
        values.clone()
    };
    if (n <= INLINE_ELEMENTS && t.shape.len() == 1) || values.iter().all(|&x| x == 0.0) {
        return Some(m.tensor_constant(t, &values));
    }
    let ty = m.tensor_type(t);
    let id = m.id();
    spv::push(
        &mut m.globals,
        opcode::GRAPH_CONSTANT_ARM,
        &[ty, id, constants.len() as u32],
    );
    constants.push(v);
    Some(id)
}

/// Writes the ops `ops` of `graph` (program order, constants included) as a graph reading
/// `inputs` and producing `outputs`, with entry point `name`.
pub fn write(
    graph: &Graph,
    ops: &[usize],
    inputs: &[ValueId],
    outputs: &[ValueId],
    name: &str,
) -> Result<GraphSpirv, SpirvWriteError> {
    let mut m = Module::default();
    let set = m.id();
    let mut constants = Vec::new();
    // interface variables: inputs at bindings 0…, outputs after them
    let mut interface = Vec::new();
    for (binding, &v) in inputs.iter().chain(outputs).enumerate() {
        let ty = m.tensor_type(&graph.values[v].ty);
        let ptr = m.ty(TypeKey::Pointer(ty));
        let var = m.id();
        spv::push(&mut m.globals, opcode::VARIABLE, &[ptr, var, 0]);
        spv::push(
            &mut m.decorations,
            opcode::DECORATE,
            &[var, DECORATION_DESCRIPTOR_SET, 0],
        );
        spv::push(
            &mut m.decorations,
            opcode::DECORATE,
            &[var, DECORATION_BINDING, binding as u32],
        );
        interface.push(var);
    }
    let graph_ty = {
        let ins: Vec<u32> = inputs
            .iter()
            .map(|&v| m.tensor_type(&graph.values[v].ty))
            .collect();
        let outs: Vec<u32> = outputs
            .iter()
            .map(|&v| m.tensor_type(&graph.values[v].ty))
            .collect();
        let id = m.id();
        let mut operands = vec![id, ins.len() as u32];
        operands.extend(ins);
        operands.extend(outs);
        spv::push(&mut m.globals, opcode::TYPE_GRAPH_ARM, &operands);
        id
    };
    let graph_id = m.id();
    let mut id_of: HashMap<ValueId, u32> = HashMap::new();
    for (i, &v) in inputs.iter().enumerate() {
        let ty = m.tensor_type(&graph.values[v].ty);
        let index = m.uint(i as u32);
        let id = m.id();
        spv::push(&mut m.body, opcode::GRAPH_INPUT_ARM, &[ty, id, index]);
        id_of.insert(v, id);
    }
    let producer: HashMap<ValueId, &Op> = ops
        .iter()
        .map(|&o| &graph.ops[o])
        .flat_map(|op| op.results.iter().map(move |&r| (r, op)))
        .collect();
    for &o in ops {
        let op = &graph.ops[o];
        if matches!(op.kind(), "const" | "const_shape") {
            continue;
        }
        let kind = op.kind();
        let Some(code) = OPERATORS.iter().position(|&k| k == kind) else {
            return Err(error(op, "not a TOSA 1.0 operator"));
        };
        if op.results.is_empty() {
            return Err(error(op, "it has no result"));
        }
        let input_elem = op
            .operands
            .first()
            .map_or(Elem::F32, |&v| graph.values[v].ty.elem);
        let mut args = Vec::new();
        for &attr in attribute_operands(kind) {
            let id = if ARRAY_ATTRS.contains(&attr) {
                match op.attrs.get(attr) {
                    Some(Attr::Numbers(v)) => {
                        let v: Vec<i64> = v.iter().map(|&x| x as i64).collect();
                        m.int_tensor(&v)
                    }
                    _ => return Err(error(op, format!("attribute `{attr}` is missing"))),
                }
            } else if BOOL_ATTRS.contains(&attr) {
                let v = matches!(op.attrs.get(attr), Some(Attr::Bool(true)));
                m.boolean(v)
            } else if attr == "min_val" || attr == "max_val" {
                let Some(Attr::Number(v)) = op.attrs.get(attr) else {
                    return Err(error(op, format!("attribute `{attr}` is missing")));
                };
                let ty = m.elem_type(input_elem);
                m.scalar(ty, Module::bits(input_elem, *v))
            } else if attr == "acc_type" {
                let v = acc_type(op, input_elem)?;
                m.uint(v)
            } else if attr == "nan_mode" {
                m.uint(NAN_PROPAGATE)
            } else if attr == "rounding_mode" {
                let Some(mode) = super::rounding_mode(op.attrs.get(attr)) else {
                    return Err(error(
                        op,
                        "rescale `rounding_mode` is not a TOSA rounding mode",
                    ));
                };
                m.uint(mode)
            } else if attr == "mode" {
                let Some(mode) = super::resize_mode(op.attrs.get(attr)) else {
                    return Err(error(
                        op,
                        "resize `mode` is not NEAREST_NEIGHBOR or BILINEAR",
                    ));
                };
                m.uint(mode)
            } else {
                match op.attrs.get(attr) {
                    Some(Attr::Number(v)) => m.uint(*v as i64 as u32),
                    _ => return Err(error(op, format!("attribute `{attr}` is missing"))),
                }
            };
            args.push(id);
        }
        for &v in &op.operands {
            if let Some(&id) = id_of.get(&v) {
                args.push(id);
                continue;
            }
            let Some(id) = constant(&mut m, graph, &producer, v, &mut constants) else {
                return Err(error(
                    op,
                    format!(
                        "operand `{}` is not computed before it",
                        graph.values[v].name
                    ),
                ));
            };
            id_of.insert(v, id);
            args.push(id);
        }
        let types: Vec<u32> = (op.results.iter())
            .map(|&r| m.tensor_type(&graph.values[r].ty))
            .collect();
        // several results (fft2d, rfft2d): a struct of them, each taken out by its index
        let ty = match types[..] {
            [one] => one,
            _ => m.ty(TypeKey::Struct(types.clone())),
        };
        let id = m.id();
        let mut operands = vec![ty, id, set, code as u32];
        operands.extend(args);
        spv::push(&mut m.body, opcode::EXT_INST, &operands);
        if let [result] = op.results[..] {
            id_of.insert(result, id);
        } else {
            for (k, (&result, &part_ty)) in op.results.iter().zip(&types).enumerate() {
                let part = m.id();
                let extract = [part_ty, part, id, k as u32];
                spv::push(&mut m.body, opcode::COMPOSITE_EXTRACT, &extract);
                id_of.insert(result, part);
            }
        }
    }
    for (j, &v) in outputs.iter().enumerate() {
        // a partition may only pass a constant on (to a shader that reads it)
        let id = match id_of.get(&v) {
            Some(&id) => Some(id),
            None => constant(&mut m, graph, &producer, v, &mut constants),
        };
        let Some(id) = id else {
            return Err(SpirvWriteError {
                loc: String::new(),
                name: graph.values[v].name.clone(),
                problem: "the partition does not compute this output".into(),
            });
        };
        let index = m.uint(j as u32);
        spv::push(&mut m.body, opcode::GRAPH_SET_OUTPUT_ARM, &[id, index]);
    }
    spv::push(&mut m.body, opcode::GRAPH_END_ARM, &[]);

    let mut words = vec![MAGIC, SPIRV_1_5, 0, 0, 0];
    // 16-bit types need their capabilities
    let mut capabilities = CAPABILITIES.to_vec();
    if m.types.contains_key(&TypeKey::Float(16)) {
        capabilities.push(CAPABILITY_FLOAT16);
    }
    if m.types.contains_key(&TypeKey::Int(16)) {
        capabilities.push(CAPABILITY_INT16);
    }
    for c in capabilities {
        spv::push(&mut words, opcode::CAPABILITY, &[c]);
    }
    for e in EXTENSIONS {
        spv::push(&mut words, opcode::EXTENSION, &spv::encode_string(e));
    }
    let mut import = vec![set];
    import.extend(spv::encode_string(TOSA_SET));
    spv::push(&mut words, opcode::EXT_INST_IMPORT, &import);
    spv::push(&mut words, opcode::MEMORY_MODEL, &[0, 3]); // Logical, Vulkan
    words.extend(&m.decorations);
    words.extend(&m.globals);
    let mut entry = vec![graph_id];
    entry.extend(spv::encode_string(name));
    entry.extend(&interface);
    spv::push(&mut words, opcode::GRAPH_ENTRY_POINT_ARM, &entry);
    spv::push(&mut words, opcode::GRAPH_ARM, &[graph_ty, graph_id]);
    words.extend(&m.body);
    words[3] = m.next + 1;
    Ok(GraphSpirv { words, constants })
}
