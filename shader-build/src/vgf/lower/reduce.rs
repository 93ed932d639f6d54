//! Reductions along an axis, argmax, and casts between element types.

use super::index::{axis_base, byte, strides};
use super::operand::axis_attr;
use super::tosa::{Elem, Graph, Op, TensorType};
use super::{LowerError, Parts, ty, unsupported};

/// `reduce_sum/max/min/product` along `axis` (kept as 1).
pub(super) fn reduce(graph: &Graph, op: &Op, out: &TensorType) -> Result<Parts, LowerError> {
    let ins = ty(graph, op, 0)?.to_vec();
    let axis = axis_attr(op, ins.len())?;
    let mut expect = ins.clone();
    expect[axis] = 1;
    if out.shape != expect {
        return Err(unsupported(
            op,
            "the output is not the input with the axis 1",
        ));
    }
    let (init, step) = match op.kind() {
        "reduce_sum" => ("0.0", "s += v;"),
        "reduce_product" => ("1.0", "s *= v;"),
        "reduce_max" => ("-3.402823466e+38", "s = max(s, v);"),
        _ => ("3.402823466e+38", "s = min(s, v);"),
    };
    let in_strides = strides(&ins);
    let base = axis_base(&ins, &out.shape, axis, true);
    let helper = format!(
        "float value(uint i) {{ uint b = {base}; float s = {init}; \
         for (uint r = 0u; r < {}u; r++) {{ float v = a0[b + r * {}u]; {step} }} \
         return s; }}\n",
        ins[axis], in_strides[axis]
    );
    Ok((vec![0], "value(i)".into(), helper))
}

/// `argmax` along `axis` (dropped): the first largest value's index.
pub(super) fn argmax(graph: &Graph, op: &Op, out: &TensorType) -> Result<Parts, LowerError> {
    let ins = ty(graph, op, 0)?.to_vec();
    let axis = axis_attr(op, ins.len())?;
    let mut expect = ins.clone();
    expect.remove(axis);
    if out.shape != expect {
        return Err(unsupported(
            op,
            "the output is not the input without the axis",
        ));
    }
    let in_strides = strides(&ins);
    let base = axis_base(&ins, &out.shape, axis, false);
    let helper = format!(
        "int value(uint i) {{ uint b = {base}; float m = a0[b]; int at = 0; \
         for (uint r = 1u; r < {}u; r++) {{ float v = a0[b + r * {}u]; \
         if (v > m) {{ m = v; at = int(r); }} }} return at; }}\n",
        ins[axis], in_strides[axis]
    );
    Ok((vec![0], "value(i)".into(), helper))
}

/// `cast` between f32, fp16, i32, int8 and booleans.
pub(super) fn cast(graph: &Graph, op: &Op, out: &TensorType) -> Result<Parts, LowerError> {
    let from = graph.values[op.operands[0]].ty.elem;
    let float = |e: Elem| matches!(e, Elem::F32 | Elem::F16);
    // the value read: int8 sign-extended from its byte, a boolean from its byte,
    // fp16 widened (by `finish`'s loader), f32 and i32 as stored
    let x = match from {
        Elem::I8 => "(int(byte_(0, i) << 24u) >> 24)".to_string(),
        Elem::Bool => byte(0, "i"),
        Elem::F32 | Elem::F16 | Elem::I32 => "a0[i]".to_string(),
        _ => return Err(unsupported(op, "casts from int16 or int64 are not lowered")),
    };
    let expr = match (from, out.elem) {
        (Elem::Bool, Elem::Bool) => x,
        (Elem::Bool, Elem::I8 | Elem::I32) => format!("({x} ? 1 : 0)"),
        (Elem::Bool, Elem::F32 | Elem::F16) => format!("({x} ? 1.0 : 0.0)"),
        (f, Elem::Bool) if float(f) => format!("({x} != 0.0)"),
        (_, Elem::Bool) => format!("({x} != 0)"),
        // TOSA: floating point to integer rounds to the nearest, ties to even, and
        // saturates
        (f, Elem::I8) if float(f) => format!("clamp(int(roundEven({x})), -128, 127)"),
        (f, Elem::I32) if float(f) => format!("int(roundEven({x}))"),
        // integers narrow to their low bits, widen with their sign
        (_, Elem::I8) => format!("((({x}) << 24) >> 24)"),
        (_, Elem::I32) => x,
        (f, Elem::F32 | Elem::F16) if float(f) => x,
        (_, Elem::F32 | Elem::F16) => format!("float({x})"),
        _ => return Err(unsupported(op, "casts to int16 or int64 are not lowered")),
    };
    Ok((vec![0], expr, String::new()))
}
