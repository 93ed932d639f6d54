//! TOSA flatbuffers (`.tosa`, the TOSA 1.0 serialization schema `tosa.fbs`, as Arm's model
//! converter reads and writes them with `--tosa-flatbuffer`) read into a [`Graph`]: the main
//! region's first block, its tensors and shapes as values, its operators in order with MLIR's
//! names and attribute forms, so that the rest of the conversion cannot tell the two inputs
//! apart. Errors name a byte offset.

use std::collections::{BTreeMap, HashMap};

use flatbuffers::{ForwardsUOffset, Vector, Verifiable, Verifier, VerifierOptions};

use super::{Attr, Elem, Graph, Loc, OPERATORS, Op, TensorType, Value, ValueId};
use crate::vgf::flatbuf::{Fields, Res, Tables, field, table, wrapper};

/// A `.tosa` file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: byte {offset}: {message}")]
pub struct FlatbufferError {
    /// The file's name as given.
    pub file: String,
    /// Where (0 when the structure as a whole is wrong).
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

/// `Op::CONST`, `CUSTOM` and `CONST_SHAPE` of the schema (the operators before them follow
/// [`OPERATORS`] from 1).
const OP_CONST: u32 = 67;
const OP_IDENTITY: u32 = 68;
const OP_CUSTOM: u32 = 69;
const OP_CONST_SHAPE: u32 = 75;

table!(TosaGraph { 1 "regions": ForwardsUOffset<Tables<'_, TosaRegion<'_>>> });
table!(TosaRegion {
    0 "name": ForwardsUOffset<&str>,
    1 "blocks": ForwardsUOffset<Tables<'_, TosaBasicBlock<'_>>>,
});
table!(TosaBasicBlock {
    0 "name": ForwardsUOffset<&str>,
    1 "operators": ForwardsUOffset<Tables<'_, TosaOperator<'_>>>,
    2 "tensors": ForwardsUOffset<Tables<'_, TosaTensor<'_>>>,
    3 "inputs": ForwardsUOffset<Vector<'_, ForwardsUOffset<&str>>>,
    4 "outputs": ForwardsUOffset<Vector<'_, ForwardsUOffset<&str>>>,
    5 "shapes": ForwardsUOffset<Tables<'_, TosaShape<'_>>>,
});
table!(TosaTensor {
    0 "name": ForwardsUOffset<&str>,
    1 "shape": ForwardsUOffset<Vector<'_, i32>>,
    2 "type": u32,
    3 "data": ForwardsUOffset<Vector<'_, u8>>,
    5 "is_unranked": bool,
});
table!(TosaShape {
    0 "name": ForwardsUOffset<&str>,
    1 "rank": u32,
    2 "data": ForwardsUOffset<Vector<'_, u8>>,
});
// the attribute tables fpshader reads; the others are never looked into
table!(PoolAttribute {
    0 "kernel": ForwardsUOffset<Vector<'_, i32>>,
    1 "stride": ForwardsUOffset<Vector<'_, i32>>,
    2 "pad": ForwardsUOffset<Vector<'_, i32>>,
});
table!(ConvAttribute {
    0 "pad": ForwardsUOffset<Vector<'_, i32>>,
    1 "stride": ForwardsUOffset<Vector<'_, i32>>,
    2 "dilation": ForwardsUOffset<Vector<'_, i32>>,
});
table!(TransposeConvAttribute {
    0 "out_pad": ForwardsUOffset<Vector<'_, i32>>,
    1 "stride": ForwardsUOffset<Vector<'_, i32>>,
});
table!(ClampAttribute {
    0 "min_val": ForwardsUOffset<Vector<'_, u8>>,
    1 "max_val": ForwardsUOffset<Vector<'_, u8>>,
});
table!(TransposeAttribute { 0 "perms": ForwardsUOffset<Vector<'_, i32>> });
// concat, reverse, argmax and the reductions: the axis first
table!(AxisAttribute { 0 "axis": i32 });
table!(ResizeAttribute { 0 "mode": u32 });
// arithmetic_right_shift's `round`, fft2d's `inverse`: one boolean first
table!(FlagAttribute { 0 "flag": u8 });
// booleans as the bytes they are stored as
table!(RescaleAttribute {
    0 "scale32": u8,
    1 "rounding_mode": u32,
    2 "per_channel": u8,
    3 "input_unsigned": u8,
    4 "output_unsigned": u8,
});
table!(CustomAttribute {
    0 "operator_name": ForwardsUOffset<&str>,
    1 "domain_name": ForwardsUOffset<&str>,
    2 "implementation_attrs": ForwardsUOffset<Vector<'_, u8>>,
});

/// How an operator's attribute table reads, by the operator's name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AttrKind {
    Pool,
    Conv,
    TransposeConv,
    Clamp,
    Transpose,
    Axis,
    Resize,
    Rescale,
    /// A table whose first field is the named boolean.
    Flag(&'static str),
    Custom,
    Unread,
}

fn attr_kind(op: u32) -> AttrKind {
    let name = op
        .checked_sub(1)
        .and_then(|i| OPERATORS.get(i as usize))
        .copied()
        .unwrap_or("");
    match (op, name) {
        (OP_CUSTOM, _) => AttrKind::Custom,
        (_, "avg_pool2d" | "max_pool2d") => AttrKind::Pool,
        (_, "conv2d" | "conv3d" | "depthwise_conv2d") => AttrKind::Conv,
        (_, "transpose_conv2d") => AttrKind::TransposeConv,
        (_, "clamp") => AttrKind::Clamp,
        (_, "transpose") => AttrKind::Transpose,
        (_, "concat" | "reverse" | "argmax") => AttrKind::Axis,
        (_, "resize") => AttrKind::Resize,
        (_, "rescale") => AttrKind::Rescale,
        (_, "arithmetic_right_shift") => AttrKind::Flag("round"),
        (_, "fft2d") => AttrKind::Flag("inverse"),
        (_, name) if name.starts_with("reduce_") => AttrKind::Axis,
        _ => AttrKind::Unread,
    }
}

wrapper!(TosaOperator);

impl Verifiable for TosaOperator<'_> {
    fn run_verifier(v: &mut Verifier, pos: usize) -> Res {
        // the attribute union's discriminant equals the operator (the schema keeps them aligned)
        v.visit_table(pos)?
            .visit_field::<u32>("op", field(0), false)?
            .visit_union::<u8, _>(
                "attribute_type",
                field(1),
                "attribute",
                field(2),
                false,
                |k, v, pos| match attr_kind(u32::from(k)) {
                    AttrKind::Pool => {
                        v.verify_union_variant::<ForwardsUOffset<PoolAttribute>>("pool", pos)
                    }
                    AttrKind::Conv => {
                        v.verify_union_variant::<ForwardsUOffset<ConvAttribute>>("conv", pos)
                    }
                    AttrKind::TransposeConv => v
                        .verify_union_variant::<ForwardsUOffset<TransposeConvAttribute>>(
                            "transpose_conv",
                            pos,
                        ),
                    AttrKind::Clamp => {
                        v.verify_union_variant::<ForwardsUOffset<ClampAttribute>>("clamp", pos)
                    }
                    AttrKind::Transpose => v
                        .verify_union_variant::<ForwardsUOffset<TransposeAttribute>>(
                            "transpose",
                            pos,
                        ),
                    AttrKind::Axis => {
                        v.verify_union_variant::<ForwardsUOffset<AxisAttribute>>("axis", pos)
                    }
                    AttrKind::Resize => {
                        v.verify_union_variant::<ForwardsUOffset<ResizeAttribute>>("resize", pos)
                    }
                    AttrKind::Rescale => {
                        v.verify_union_variant::<ForwardsUOffset<RescaleAttribute>>("rescale", pos)
                    }
                    AttrKind::Flag(name) => {
                        v.verify_union_variant::<ForwardsUOffset<FlagAttribute>>(name, pos)
                    }
                    AttrKind::Custom => {
                        v.verify_union_variant::<ForwardsUOffset<CustomAttribute>>("custom", pos)
                    }
                    AttrKind::Unread => Ok(()),
                },
            )?
            .visit_field::<ForwardsUOffset<Vector<'_, ForwardsUOffset<&str>>>>(
                "inputs",
                field(3),
                false,
            )?
            .visit_field::<ForwardsUOffset<Vector<'_, ForwardsUOffset<&str>>>>(
                "outputs",
                field(4),
                false,
            )?
            .finish();
        Ok(())
    }
}

impl<'a> TosaOperator<'a> {
    fn attribute<T: flatbuffers::Follow<'a, Inner = T> + 'a>(self, kind: AttrKind) -> Option<T> {
        (attr_kind(u32::from(self.u8_at(1))) == kind)
            .then(|| self.read::<ForwardsUOffset<T>>(2))
            .flatten()
    }
}

/// The element type of a schema `DType`.
fn elem(dtype: u32) -> Option<Elem> {
    Some(match dtype {
        1 => Elem::Bool,
        3 => Elem::I8,
        4 => Elem::I16,
        5 => Elem::I32,
        7 => Elem::F32,
        8 => Elem::F16,
        10 | 17 => Elem::I64,
        _ => return None,
    })
}

fn ints(v: Vec<i32>) -> Attr {
    Attr::Numbers(v.into_iter().map(f64::from).collect())
}

/// Reads a `.tosa` file (`file` names it in errors).
pub fn parse(file: &str, bytes: &[u8]) -> Result<Graph, FlatbufferError> {
    let err = |offset: usize, message: String| FlatbufferError {
        file: file.to_string(),
        offset,
        message,
    };
    if bytes.len() < 8 || &bytes[4..8] != b"TOSA" {
        return Err(err(
            4,
            "not a TOSA flatbuffer (no `TOSA` identifier)".into(),
        ));
    }
    let options = VerifierOptions::default();
    let root = flatbuffers::root_with_opts::<TosaGraph>(&options, bytes)
        .map_err(|e| err(0, format!("the flatbuffer does not verify: {e}")))?;
    let offset_of = |t: flatbuffers::Table<'_>| t.loc();
    let regions: Vec<TosaRegion> = root.tables_at(1);
    let region = regions
        .iter()
        .find(|r| r.str_at(0) == "main")
        .or_else(|| regions.first())
        .ok_or_else(|| err(0, "the graph has no region".into()))?;
    let block = region
        .tables_at::<TosaBasicBlock>(1)
        .into_iter()
        .next()
        .ok_or_else(|| {
            err(
                offset_of(region.table()),
                "the main region has no block".into(),
            )
        })?;

    let mut g = Graph {
        name: region.str_at(0).to_string(),
        ..Graph::default()
    };
    // name → (value, constant data if the tensor carries some)
    let mut values: HashMap<String, ValueId> = HashMap::new();
    let mut data: HashMap<ValueId, Vec<f64>> = HashMap::new();
    for t in block.tables_at::<TosaTensor>(2) {
        let at = offset_of(t.table());
        let name = t.str_at(0).to_string();
        if t.u8_at(5) != 0 {
            return Err(err(
                at,
                format!("tensor `{name}` is unranked (fpshader needs static shapes)"),
            ));
        }
        let dtype = t.u32_at(2, 0);
        let elem = elem(dtype).ok_or_else(|| {
            err(
                at,
                format!("tensor `{name}` has element type {dtype}, which fpshader does not read"),
            )
        })?;
        let shape: Vec<i64> = t.i32s_at(1).into_iter().map(i64::from).collect();
        if let Some(d) = shape.iter().find(|&&d| d < 0) {
            return Err(err(
                at,
                format!("tensor `{name}` has dimension {d} (fpshader needs static shapes)"),
            ));
        }
        let ty = TensorType { shape, elem };
        let bytes = t.bytes_at(3);
        let id = g.values.len();
        if !bytes.is_empty() {
            if bytes.len() < ty.elements() * elem.size() {
                return Err(err(
                    at,
                    format!(
                        "tensor `{name}` has {} bytes of data, its type needs {}",
                        bytes.len(),
                        ty.elements() * elem.size()
                    ),
                ));
            }
            data.insert(id, elem.decode(&bytes[..ty.elements() * elem.size()]));
        }
        g.values.push(Value {
            name: format!("%{name}"),
            ty,
        });
        values.insert(name, id);
    }
    for s in block.tables_at::<TosaShape>(5) {
        let name = s.str_at(0).to_string();
        let rank = s.u32_at(1, 0) as i64;
        let id = g.values.len();
        let bytes = s.bytes_at(2);
        if !bytes.is_empty() {
            data.insert(id, Elem::I64.decode(bytes));
        }
        g.values.push(Value {
            name: format!("%{name}"),
            ty: TensorType {
                shape: vec![rank],
                elem: Elem::I64,
            },
        });
        values.insert(name, id);
    }
    let lookup = |name: &str, at: usize| {
        values.get(name).copied().ok_or_else(|| {
            err(
                at,
                format!("`{name}` names no tensor or shape of the block"),
            )
        })
    };
    let at = offset_of(block.table());
    g.inputs = block
        .strings_at(3)
        .iter()
        .map(|n| lookup(n, at))
        .collect::<Result<_, _>>()?;
    g.outputs = block
        .strings_at(4)
        .iter()
        .map(|n| lookup(n, at))
        .collect::<Result<_, _>>()?;
    g.input_names = (0..g.inputs.len()).map(|i| format!("input_{i}")).collect();
    g.output_names = (0..g.outputs.len())
        .map(|i| format!("output_{i}"))
        .collect();

    let mut produced: Vec<bool> = vec![false; g.values.len()];
    for &v in &g.inputs {
        produced[v] = true;
    }
    for op in block.tables_at::<TosaOperator>(1) {
        let at = offset_of(op.table());
        let code = op.u32_at(0, 0);
        let name = match code {
            OP_CONST => "const",
            OP_IDENTITY => "identity",
            OP_CUSTOM => "custom",
            OP_CONST_SHAPE => "const_shape",
            _ => code
                .checked_sub(1)
                .and_then(|i| OPERATORS.get(i as usize))
                .copied()
                .ok_or_else(|| err(at, format!("operator {code} is not one fpshader reads")))?,
        };
        let operands = op
            .strings_at(3)
            .iter()
            .map(|n| lookup(n, at))
            .collect::<Result<Vec<_>, _>>()?;
        let results = op
            .strings_at(4)
            .iter()
            .map(|n| lookup(n, at))
            .collect::<Result<Vec<_>, _>>()?;
        let mut attrs = BTreeMap::new();
        match name {
            "const" | "const_shape" => {
                let [v] = results[..] else {
                    return Err(err(at, format!("`{name}` has {} results", results.len())));
                };
                let values = data.get(&v).cloned().ok_or_else(|| {
                    err(
                        at,
                        format!("`{name}` result `{}` carries no data", g.values[v].name),
                    )
                })?;
                attrs.insert("values".into(), Attr::Dense(values, g.values[v].ty.clone()));
            }
            _ => {
                // constants written as tensors with data and no producing operator
                for &v in &operands {
                    if !produced[v] {
                        let Some(values) = data.get(&v) else {
                            return Err(err(
                                at,
                                format!(
                                    "`{}` is read before any operator writes it",
                                    g.values[v].name
                                ),
                            ));
                        };
                        let ty = g.values[v].ty.clone();
                        g.ops
                            .push(Op::constant(v, values.clone(), ty, Loc::Byte(at)));
                        produced[v] = true;
                    }
                }
            }
        }
        match attr_kind(code) {
            AttrKind::Pool => {
                if let Some(a) = op.attribute::<PoolAttribute>(AttrKind::Pool) {
                    attrs.insert("kernel".into(), ints(a.i32s_at(0)));
                    attrs.insert("stride".into(), ints(a.i32s_at(1)));
                    attrs.insert("pad".into(), ints(a.i32s_at(2)));
                }
            }
            AttrKind::Conv => {
                if let Some(a) = op.attribute::<ConvAttribute>(AttrKind::Conv) {
                    attrs.insert("pad".into(), ints(a.i32s_at(0)));
                    attrs.insert("stride".into(), ints(a.i32s_at(1)));
                    attrs.insert("dilation".into(), ints(a.i32s_at(2)));
                }
            }
            AttrKind::TransposeConv => {
                if let Some(a) = op.attribute::<TransposeConvAttribute>(AttrKind::TransposeConv) {
                    attrs.insert("out_pad".into(), ints(a.i32s_at(0)));
                    attrs.insert("stride".into(), ints(a.i32s_at(1)));
                }
            }
            AttrKind::Clamp => {
                if let (Some(a), Some(&input)) = (
                    op.attribute::<ClampAttribute>(AttrKind::Clamp),
                    operands.first(),
                ) {
                    let elem = g.values[input].ty.elem;
                    for (i, key) in [(0, "min_val"), (1, "max_val")] {
                        let v = elem.decode(a.bytes_at(i));
                        let Some(&x) = v.first() else {
                            return Err(err(at, format!("clamp `{key}` has no value")));
                        };
                        attrs.insert(key.into(), Attr::Number(x));
                    }
                }
            }
            AttrKind::Transpose => {
                if let Some(a) = op.attribute::<TransposeAttribute>(AttrKind::Transpose) {
                    attrs.insert("perms".into(), ints(a.i32s_at(0)));
                }
            }
            AttrKind::Axis => {
                if let Some(a) = op.attribute::<AxisAttribute>(AttrKind::Axis) {
                    attrs.insert("axis".into(), Attr::Number(f64::from(a.i32_at(0))));
                }
            }
            AttrKind::Resize => {
                if let Some(a) = op.attribute::<ResizeAttribute>(AttrKind::Resize) {
                    attrs.insert("mode".into(), Attr::Number(f64::from(a.u32_at(0, 0))));
                }
            }
            AttrKind::Flag(name) => {
                if let Some(a) = op.attribute::<FlagAttribute>(AttrKind::Flag(name)) {
                    attrs.insert(name.into(), Attr::Bool(a.u8_at(0) != 0));
                }
            }
            AttrKind::Rescale => {
                if let Some(a) = op.attribute::<RescaleAttribute>(AttrKind::Rescale) {
                    for (i, key) in [
                        (0, "scale32"),
                        (2, "per_channel"),
                        (3, "input_unsigned"),
                        (4, "output_unsigned"),
                    ] {
                        attrs.insert(key.into(), Attr::Bool(a.u8_at(i) != 0));
                    }
                    let mode = f64::from(a.u32_at(1, 0));
                    attrs.insert("rounding_mode".into(), Attr::Number(mode));
                }
            }
            AttrKind::Custom => {
                let Some(a) = op.attribute::<CustomAttribute>(AttrKind::Custom) else {
                    return Err(err(at, "custom operator without its attribute".into()));
                };
                attrs.insert("operator_name".into(), Attr::Str(a.str_at(0).into()));
                attrs.insert("domain_name".into(), Attr::Str(a.str_at(1).into()));
                let json = String::from_utf8(a.bytes_at(2).to_vec())
                    .map_err(|_| err(at, "custom operator attributes are not UTF-8".into()))?;
                attrs.insert("implementation_attrs".into(), Attr::Str(json));
            }
            AttrKind::Unread => {}
        }
        for &r in &results {
            produced[r] = true;
        }
        g.ops.push(Op {
            name: format!("tosa.{name}"),
            operands,
            results,
            attrs,
            loc: Loc::Byte(at),
        });
    }
    if let Some(&v) = g
        .outputs
        .iter()
        .find(|&&v| !produced[v] && !data.contains_key(&v))
    {
        return Err(err(
            at,
            format!("output `{}` is written by no operator", g.values[v].name),
        ));
    }
    Ok(g)
}
