//! TOSA graphs in SPIR-V (`SPV_ARM_graph` with the `TOSA.001000.1` extended instruction set), as
//! Arm's converter writes a VGF's data-graph modules, read back into a [`Graph`] so that the
//! compute lowering can run them on GPUs without the ARM extensions.
//!
//! Each `OpExtInst` becomes an op named like its MLIR twin (`tosa.conv2d`); the operands that
//! MLIR spells as attributes (`pad`, `stride`, `min_val`, …) become attributes with MLIR's
//! names and forms, the rest are operand values. Constant tensors written inline
//! (`OpConstantComposite`, `OpConstantNull`, `OpConstantCompositeReplicateEXT`) become
//! `tosa.const` ops; `OpGraphConstantARM` values are `tosa.const` ops carrying their
//! `graph_constant_id`, whose data the VGF holds.
//!
//! `module` reads the module's types, constants and names; this file turns the graph's
//! instructions into ops.

mod module;

use std::collections::{BTreeMap, HashMap};

use super::{Attr, Graph, Loc, OPERATORS, Op, TensorType, Value, ValueId};
use crate::spv;

/// SPIR-V that is not a graph module fpshader can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("graph SPIR-V, word {word}: {message}")]
pub struct SpirvGraphError {
    /// Offset of the offending instruction, in 32-bit words.
    pub word: usize,
    /// What is wrong.
    pub message: String,
}

impl From<spv::SpvError> for SpirvGraphError {
    fn from(e: spv::SpvError) -> Self {
        SpirvGraphError {
            word: e.word(),
            message: e.to_string(),
        }
    }
}

/// A graph module's entry point read as a TOSA graph, with its interface.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphModule {
    /// The operations, inputs and outputs.
    pub graph: Graph,
    /// `(descriptor set, binding)` of each graph input's interface variable, by input index.
    pub input_bindings: Vec<(u32, u32)>,
    /// `(descriptor set, binding)` of each graph output's interface variable.
    pub output_bindings: Vec<(u32, u32)>,
}

/// The name of the graph-constant attribute on `tosa.const` ops made from
/// `OpGraphConstantARM`: the id the segment's constant bindings map to constant data.
pub const GRAPH_CONSTANT_ID: &str = "graph_constant_id";

pub(super) const TOSA_SET: &str = "TOSA.001000.1";

pub(super) mod opcode {
    pub(crate) const NAME: u16 = 5;
    pub(crate) const EXTENSION: u16 = 10;
    pub(crate) const EXT_INST_IMPORT: u16 = 11;
    pub(crate) const EXT_INST: u16 = 12;
    pub(crate) const MEMORY_MODEL: u16 = 14;
    pub(crate) const CAPABILITY: u16 = 17;
    pub(crate) const TYPE_BOOL: u16 = 20;
    pub(crate) const TYPE_INT: u16 = 21;
    pub(crate) const TYPE_FLOAT: u16 = 22;
    pub(crate) const TYPE_ARRAY: u16 = 28;
    pub(crate) const TYPE_STRUCT: u16 = 30;
    pub(crate) const TYPE_POINTER: u16 = 32;
    pub(crate) const CONSTANT_TRUE: u16 = 41;
    pub(crate) const CONSTANT_FALSE: u16 = 42;
    pub(crate) const CONSTANT: u16 = 43;
    pub(crate) const CONSTANT_COMPOSITE: u16 = 44;
    pub(crate) const CONSTANT_NULL: u16 = 46;
    pub(crate) const VARIABLE: u16 = 59;
    pub(crate) const COMPOSITE_EXTRACT: u16 = 81;
    pub(crate) const DECORATE: u16 = 71;
    pub(crate) const TYPE_TENSOR_ARM: u16 = 4163;
    pub(crate) const GRAPH_CONSTANT_ARM: u16 = 4181;
    pub(crate) const GRAPH_ENTRY_POINT_ARM: u16 = 4182;
    pub(crate) const GRAPH_ARM: u16 = 4183;
    pub(crate) const GRAPH_INPUT_ARM: u16 = 4184;
    pub(crate) const GRAPH_SET_OUTPUT_ARM: u16 = 4185;
    pub(crate) const GRAPH_END_ARM: u16 = 4186;
    pub(crate) const TYPE_GRAPH_ARM: u16 = 4190;
    pub(crate) const CONSTANT_COMPOSITE_REPLICATE_EXT: u16 = 4461;
}

/// The most values an inline constant may expand to (a malformed shape must not allocate
/// without bound); graph constants, whose data the VGF carries, are not limited by it.
const MAX_CONSTANT: usize = 1 << 24;
pub(super) const DECORATION_BINDING: u32 = 33;
pub(super) const DECORATION_DESCRIPTOR_SET: u32 = 34;

/// The leading operands that MLIR writes as attributes, per instruction (the extended
/// instruction set grammar puts them first, before the tensor operands).
pub(super) fn attribute_operands(name: &str) -> &'static [&'static str] {
    match name {
        "argmax" => &["axis", "nan_mode"],
        "avg_pool2d" => &["kernel", "stride", "pad", "acc_type"],
        "conv2d" | "conv3d" | "depthwise_conv2d" => {
            &["pad", "stride", "dilation", "acc_type", "local_bound"]
        }
        "fft2d" => &["inverse", "local_bound"],
        "max_pool2d" => &["kernel", "stride", "pad", "nan_mode"],
        "rfft2d" => &["local_bound"],
        "transpose_conv2d" => &["out_pad", "stride", "acc_type", "local_bound"],
        "clamp" => &["min_val", "max_val", "nan_mode"],
        "arithmetic_right_shift" => &["round"],
        "maximum" | "minimum" => &["nan_mode"],
        "reduce_all" | "reduce_any" | "reduce_product" | "reduce_sum" | "concat" | "reverse" => {
            &["axis"]
        }
        "reduce_max" | "reduce_min" => &["axis", "nan_mode"],
        "transpose" => &["perms"],
        "resize" => &["mode"],
        "rescale" => &[
            "scale32",
            "rounding_mode",
            "per_channel",
            "input_unsigned",
            "output_unsigned",
        ],
        _ => &[],
    }
}

use module::{Constant, Module, Reader, Ty};

/// Reads the graph `entry_point` of a SPIR-V module.
pub fn read(words: &[u32], entry_point: &str) -> Result<GraphModule, SpirvGraphError> {
    let mut r = Reader { word: 0 };
    let module = match spv::Module::new(words) {
        Ok(m) => m,
        Err(e) => return r.error(format!("not a SPIR-V module: {e}")),
    };
    let mut m = Module::default();
    let mut g = Graph::default();
    let mut input_bindings = BTreeMap::new();
    let mut output_values: BTreeMap<i64, ValueId> = BTreeMap::new();
    let mut value_of: HashMap<u32, ValueId> = HashMap::new();
    // the results of an instruction with several, by the struct it returns
    let mut parts_of: HashMap<u32, Vec<ValueId>> = HashMap::new();
    let mut in_graph: Option<u32> = None;
    let mut done = false;
    for inst in module.instructions() {
        let inst = inst?;
        r.word = inst.word;
        let (op, a) = (inst.opcode, inst.operands);
        let need = |n: usize| inst.need(n).map(|_| ()).map_err(SpirvGraphError::from);
        match op {
            opcode::NAME => {
                need(1)?;
                m.names.insert(a[0], spv::string_lossy(&a[1..]).0);
            }
            opcode::EXT_INST_IMPORT => {
                need(1)?;
                if spv::string_lossy(&a[1..]).0 == TOSA_SET {
                    m.tosa_set = Some(a[0]);
                }
            }
            opcode::DECORATE => {
                need(2)?;
                let entry = m.decorations.entry(a[0]).or_default();
                match (a[1], a.get(2)) {
                    (DECORATION_DESCRIPTOR_SET, Some(&v)) => entry.0 = Some(v),
                    (DECORATION_BINDING, Some(&v)) => entry.1 = Some(v),
                    _ => {}
                }
            }
            opcode::TYPE_BOOL => {
                need(1)?;
                m.types.insert(a[0], Ty::Bool);
            }
            opcode::TYPE_INT => {
                need(2)?;
                m.types.insert(a[0], Ty::Int(a[1]));
            }
            opcode::TYPE_FLOAT => {
                need(2)?;
                m.types.insert(a[0], Ty::Float(a[1]));
            }
            opcode::TYPE_ARRAY => {
                need(3)?;
                m.types.insert(a[0], Ty::Array { len: a[2] });
            }
            opcode::TYPE_STRUCT => {
                need(1)?;
                m.types.insert(a[0], Ty::Struct(a[1..].to_vec()));
            }
            opcode::TYPE_TENSOR_ARM => {
                need(2)?;
                m.types.insert(
                    a[0],
                    Ty::Tensor {
                        elem: a[1],
                        shape: a.get(3).copied(),
                    },
                );
            }
            opcode::TYPE_POINTER => {
                need(1)?;
                m.types.insert(a[0], Ty::Other);
            }
            opcode::CONSTANT => {
                need(3)?;
                let Some(v) = m.scalar(a[0], &a[2..]) else {
                    return r.error(format!(
                        "constant %{} has a type that is not a number",
                        a[1]
                    ));
                };
                m.constants.insert(a[1], (a[0], Constant::Scalar(v)));
            }
            opcode::CONSTANT_TRUE | opcode::CONSTANT_FALSE => {
                need(2)?;
                let v = if op == opcode::CONSTANT_TRUE {
                    1.0
                } else {
                    0.0
                };
                m.constants.insert(a[1], (a[0], Constant::Scalar(v)));
            }
            opcode::CONSTANT_COMPOSITE => {
                need(2)?;
                m.constants
                    .insert(a[1], (a[0], Constant::Composite(a[2..].to_vec())));
            }
            opcode::CONSTANT_NULL => {
                need(2)?;
                m.constants.insert(a[1], (a[0], Constant::Null));
            }
            opcode::CONSTANT_COMPOSITE_REPLICATE_EXT => {
                need(3)?;
                m.constants.insert(a[1], (a[0], Constant::Replicate(a[2])));
            }
            opcode::VARIABLE => {}
            opcode::GRAPH_CONSTANT_ARM => {
                need(3)?;
                let Some(ty) = m.tensor_type(a[0]) else {
                    return r.error(format!("graph constant %{} is not a tensor", a[1]));
                };
                let v = push_value(&mut g, &m, a[1], ty);
                g.ops.push(Op {
                    name: "tosa.const".into(),
                    operands: Vec::new(),
                    results: vec![v],
                    attrs: BTreeMap::from([(
                        GRAPH_CONSTANT_ID.to_string(),
                        Attr::Number(f64::from(a[2])),
                    )]),
                    loc: Loc::Word(r.word),
                });
                value_of.insert(a[1], v);
            }
            opcode::GRAPH_ENTRY_POINT_ARM => {
                need(2)?;
                let (name, used) = spv::string_lossy(&a[1..]);
                m.entry_points.push((a[0], name, a[1 + used..].to_vec()));
            }
            opcode::GRAPH_ARM => {
                need(2)?;
                if in_graph.is_some() {
                    return r.error("a graph begins inside another");
                }
                in_graph = Some(a[1]);
            }
            opcode::GRAPH_INPUT_ARM if in_graph.is_some() => {
                need(3)?;
                let Some(ty) = m.tensor_type(a[0]) else {
                    return r.error(format!("graph input %{} is not a tensor", a[1]));
                };
                let Some(index) = m.int(a[2]) else {
                    return r.error(format!("graph input %{} has no constant index", a[1]));
                };
                let v = push_value(&mut g, &m, a[1], ty);
                input_bindings.insert(index, v);
                value_of.insert(a[1], v);
            }
            opcode::EXT_INST if in_graph.is_some() => {
                need(4)?;
                if Some(a[2]) != m.tosa_set {
                    return r.error("an extended instruction outside TOSA.001000.1");
                }
                let Some(&kind) = OPERATORS.get(a[3] as usize) else {
                    return r.error(format!("unknown TOSA instruction {}", a[3]));
                };
                // several results (fft2d, rfft2d) come as a struct of tensors, taken apart by
                // OpCompositeExtract
                let member_types = match m.types.get(&a[0]) {
                    Some(Ty::Struct(members)) => members.clone(),
                    _ => vec![a[0]],
                };
                let mut result_types = Vec::with_capacity(member_types.len());
                for t in member_types {
                    let Some(ty) = m.tensor_type(t) else {
                        return r
                            .error(format!("the result of `{kind}` %{} is not a tensor", a[1]));
                    };
                    result_types.push(ty);
                }
                let attr_names = attribute_operands(kind);
                let args = &a[4..];
                if args.len() < attr_names.len() {
                    return r.error(format!(
                        "`{kind}` %{} has {} operands, needs at least {}",
                        a[1],
                        args.len(),
                        attr_names.len()
                    ));
                }
                let mut attrs = BTreeMap::new();
                for (name, &id) in attr_names.iter().zip(args) {
                    let Some(values) = m.values(id, 0) else {
                        return r.error(format!("`{kind}` attribute `{name}` is not a constant"));
                    };
                    let attr = match m.constants.get(&id) {
                        // booleans as MLIR and the flatbuffer give them
                        Some((ty, Constant::Scalar(_)))
                            if matches!(m.types.get(ty), Some(Ty::Bool)) =>
                        {
                            Attr::Bool(values[0] != 0.0)
                        }
                        Some((_, Constant::Scalar(_))) => Attr::Number(values[0]),
                        _ => Attr::Numbers(values),
                    };
                    attrs.insert(name.to_string(), attr);
                }
                let mut operands = Vec::new();
                for &id in &args[attr_names.len()..] {
                    let v = match value_of.get(&id) {
                        Some(&v) => v,
                        None => {
                            // an inline constant tensor: a const op of its own
                            let (Some((cty, _)), Some(values)) =
                                (m.constants.get(&id), m.values(id, 0))
                            else {
                                return r.error(format!(
                                    "`{kind}` operand %{id} is neither a value nor a constant"
                                ));
                            };
                            let Some(t) = m.tensor_type(*cty) else {
                                return r.error(format!("constant %{id} has no tensor type"));
                            };
                            let v = push_value(&mut g, &m, id, t.clone());
                            g.ops.push(Op::constant(v, values, t, Loc::Word(r.word)));
                            value_of.insert(id, v);
                            v
                        }
                    };
                    operands.push(v);
                }
                let results: Vec<ValueId> = (result_types.into_iter())
                    .map(|ty| push_value(&mut g, &m, a[1], ty))
                    .collect();
                if let [v] = results[..] {
                    value_of.insert(a[1], v);
                } else {
                    parts_of.insert(a[1], results.clone());
                }
                g.ops.push(Op {
                    name: format!("tosa.{kind}"),
                    operands,
                    results,
                    attrs,
                    loc: Loc::Word(r.word),
                });
            }
            opcode::COMPOSITE_EXTRACT if in_graph.is_some() => {
                need(4)?;
                let Some(&v) = parts_of.get(&a[2]).and_then(|p| p.get(a[3] as usize)) else {
                    return r.error(format!(
                        "%{} takes part {} of %{}, which is no operation's results",
                        a[1], a[3], a[2]
                    ));
                };
                if let Some(name) = m.names.get(&a[1]) {
                    g.values[v].name = format!("%{name}");
                }
                value_of.insert(a[1], v);
            }
            opcode::GRAPH_SET_OUTPUT_ARM if in_graph.is_some() => {
                need(2)?;
                let (Some(&v), Some(index)) = (value_of.get(&a[0]), m.int(a[1])) else {
                    return r.error("a graph output that is not a value, or without an index");
                };
                output_values.insert(index, v);
            }
            opcode::GRAPH_END_ARM => {
                let Some(graph) = in_graph.take() else {
                    return r.error("a graph ends that did not begin");
                };
                let wanted = m
                    .entry_points
                    .iter()
                    .any(|(id, name, _)| *id == graph && name == entry_point);
                if wanted {
                    done = true;
                    break;
                }
                // another graph of the module: start over
                g = Graph::default();
                value_of.retain(|id, _| m.constants.contains_key(id));
                input_bindings.clear();
                parts_of.clear();
                output_values.clear();
            }
            _ if in_graph.is_some() => {
                return r.error(format!("instruction {op} is not allowed in a graph"));
            }
            _ => {}
        }
    }
    r.word = words.len();
    if !done {
        return r.error(format!("no graph entry point `{entry_point}`"));
    }
    let Some((_, _, interface)) = m.entry_points.iter().find(|(_, n, _)| n == entry_point) else {
        return r.error(format!("no graph entry point `{entry_point}`"));
    };
    let dense =
        |map: &BTreeMap<i64, ValueId>, what: &str| -> Result<Vec<ValueId>, SpirvGraphError> {
            if map.keys().copied().eq(0..map.len() as i64) {
                Ok(map.values().copied().collect())
            } else {
                Err(SpirvGraphError {
                    word: r.word,
                    message: format!("the graph's {what} indices are not 0, 1, …"),
                })
            }
        };
    g.inputs = dense(&input_bindings, "input")?;
    g.outputs = dense(&output_values, "output")?;
    if interface.len() != g.inputs.len() + g.outputs.len() {
        return r.error(format!(
            "the entry point lists {} interface variables for {} inputs and {} outputs",
            interface.len(),
            g.inputs.len(),
            g.outputs.len()
        ));
    }
    let mut bindings = Vec::new();
    for var in interface {
        match m.decorations.get(var) {
            Some((Some(set), Some(binding))) => bindings.push((*set, *binding)),
            _ => {
                return r.error(format!(
                    "interface variable %{var} has no descriptor set and binding"
                ));
            }
        }
    }
    let output_bindings = bindings.split_off(g.inputs.len());
    g.name = entry_point.to_string();
    g.input_names = (0..g.inputs.len()).map(|i| format!("input_{i}")).collect();
    g.output_names = (0..g.outputs.len())
        .map(|i| format!("output_{i}"))
        .collect();
    Ok(GraphModule {
        graph: g,
        input_bindings: bindings,
        output_bindings,
    })
}

fn push_value(g: &mut Graph, m: &Module, id: u32, ty: TensorType) -> ValueId {
    let name = m
        .names
        .get(&id)
        .map_or_else(|| format!("%{id}"), |n| format!("%{n}"));
    g.values.push(Value { name, ty });
    g.values.len() - 1
}
