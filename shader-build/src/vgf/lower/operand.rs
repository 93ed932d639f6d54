//! What an op's attributes and constant operands hold, checked.

use super::tosa::{Attr, Graph, Op};
use super::{LowerError, unsupported};

/// A boolean attribute (absent: false).
pub(super) fn flag(op: &Op, name: &str) -> bool {
    matches!(op.attrs.get(name), Some(Attr::Bool(true)))
}

pub(super) fn float_attr(op: &Op, name: &str) -> Result<f64, LowerError> {
    match op.attrs.get(name) {
        Some(Attr::Number(n)) => Ok(*n),
        _ => Err(unsupported(
            op,
            format!("attribute `{name}` is missing or not a number"),
        )),
    }
}

/// An integer-array attribute of exactly `len` entries (`pad`, `stride`, `kernel`, `perms`).
pub(super) fn ints_attr(op: &Op, name: &str, len: usize) -> Result<Vec<i64>, LowerError> {
    match op.attrs.get(name) {
        Some(Attr::Numbers(v)) if v.len() == len && v.iter().all(|x| x.fract() == 0.0) => {
            Ok(v.iter().map(|&x| x as i64).collect())
        }
        _ => Err(unsupported(
            op,
            format!("attribute `{name}` is missing or not {len} integers"),
        )),
    }
}

/// The values of operand `v` of `op`, which a constant (`const_shape` for shapes) must give.
pub(super) fn constant_operand(graph: &Graph, op: &Op, v: usize) -> Result<Vec<i64>, LowerError> {
    let id = *op
        .operands
        .get(v)
        .ok_or_else(|| unsupported(op, format!("operand {v} is missing")))?;
    let values = graph
        .producer(id)
        .and_then(|p| graph.ops[p].attrs.get("values"));
    match values {
        Some(Attr::Dense(values, ty)) if values.iter().all(|x| x.fract() == 0.0) => {
            let n = ty.elements().max(1);
            // shapes, zero points, multipliers: a few values per axis or channel
            if n > MAX_CONSTANT_VALUES {
                return Err(unsupported(
                    op,
                    format!(
                        "operand {v} has {n} values, more than the {MAX_CONSTANT_VALUES} a lowered shader folds in"
                    ),
                ));
            }
            Ok(match values[..] {
                // a splat
                [x] => vec![x as i64; n],
                _ => values.iter().map(|&x| x as i64).collect(),
            })
        }
        _ => Err(unsupported(
            op,
            format!("operand {v} must be a constant of integers (`tosa.const_shape`)"),
        )),
    }
}

/// The most values of a constant operand folded into a generated shader.
pub(super) const MAX_CONSTANT_VALUES: usize = 1 << 16;

/// The `axis` attribute, checked against a rank.
pub(super) fn axis_attr(op: &Op, rank: usize) -> Result<usize, LowerError> {
    let axis = float_attr(op, "axis")?;
    if axis < 0.0 || axis as usize >= rank || axis.fract() != 0.0 {
        return Err(unsupported(
            op,
            format!("axis {axis} is outside rank {rank}"),
        ));
    }
    Ok(axis as usize)
}
