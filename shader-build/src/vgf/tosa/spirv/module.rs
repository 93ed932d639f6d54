//! The module's declarations as the graph reader needs them: types, constants (inline,
//! replicated, null, graph constants) and names, read in one pass with bounds checked.

use std::collections::HashMap;

use super::super::{Elem, TensorType};
use super::{MAX_CONSTANT, SpirvGraphError};

#[derive(Clone, Debug)]
pub(super) enum Ty {
    Bool,
    Int(u32),
    Float(u32),
    Array {
        len: u32,
    },
    Tensor {
        elem: u32,
        shape: Option<u32>,
    },
    /// Member types (an instruction's several results).
    Struct(Vec<u32>),
    Other,
}

#[derive(Clone, Debug)]
pub(super) enum Constant {
    Scalar(f64),
    Composite(Vec<u32>),
    Null,
    Replicate(u32),
}

#[derive(Default)]
pub(super) struct Module {
    pub(super) types: HashMap<u32, Ty>,
    /// Constants: (type, value).
    pub(super) constants: HashMap<u32, (u32, Constant)>,
    pub(super) names: HashMap<u32, String>,
    pub(super) decorations: HashMap<u32, (Option<u32>, Option<u32>)>,
    pub(super) entry_points: Vec<(u32, String, Vec<u32>)>,
    pub(super) tosa_set: Option<u32>,
}

pub(super) struct Reader {
    pub(super) word: usize,
}

impl Reader {
    pub(super) fn error<T>(&self, message: impl Into<String>) -> Result<T, SpirvGraphError> {
        Err(SpirvGraphError {
            word: self.word,
            message: message.into(),
        })
    }
}

impl Module {
    pub(super) fn scalar(&self, ty: u32, words: &[u32]) -> Option<f64> {
        let low = *words.first()?;
        Some(match self.types.get(&ty)? {
            Ty::Float(32) => f64::from(f32::from_bits(low)),
            Ty::Float(16) => f64::from(half::f16::from_bits(low as u16)),
            Ty::Int(64) => {
                (u64::from(low) | (u64::from(*words.get(1).unwrap_or(&0)) << 32)) as i64 as f64
            }
            Ty::Int(w @ 1..32) => {
                let shift = 32 - w;
                f64::from(((low << shift) as i32) >> shift)
            }
            Ty::Int(32) => f64::from(low as i32),
            _ => return None,
        })
    }

    /// How many leading entries a composite of `ty` has (array length or the outer dimension).
    pub(super) fn outer_len(&self, ty: u32, depth: usize) -> Option<usize> {
        match self.types.get(&ty)? {
            Ty::Array { len, .. } => usize::try_from(self.int(*len)?).ok(),
            Ty::Tensor { .. } => self
                .tensor_type_at(ty, depth)?
                .shape
                .first()
                .and_then(|&d| usize::try_from(d).ok()),
            _ => Some(1),
        }
    }

    pub(super) fn elements(&self, ty: u32, depth: usize) -> Option<usize> {
        match self.types.get(&ty)? {
            Ty::Array { len, .. } => usize::try_from(self.int(*len)?).ok(),
            Ty::Tensor { .. } => Some(self.tensor_type_at(ty, depth)?.elements()),
            _ => Some(1),
        }
    }

    /// A constant's values flattened in row-major order (at most [`MAX_CONSTANT`] of them).
    pub(super) fn values(&self, id: u32, depth: usize) -> Option<Vec<f64>> {
        if depth > 16 {
            return None;
        }
        let (ty, c) = self.constants.get(&id)?;
        Some(match c {
            Constant::Scalar(v) => vec![*v],
            Constant::Composite(parts) => {
                let mut out = Vec::new();
                for p in parts {
                    out.extend(self.values(*p, depth + 1)?);
                    if out.len() > MAX_CONSTANT {
                        return None;
                    }
                }
                out
            }
            Constant::Null => {
                let n = self.elements(*ty, depth + 1)?;
                vec![0.0; Some(n).filter(|&n| n <= MAX_CONSTANT)?]
            }
            Constant::Replicate(part) => {
                let one = self.values(*part, depth + 1)?;
                let n = self.outer_len(*ty, depth + 1)?;
                if one.len().saturating_mul(n) > MAX_CONSTANT {
                    return None;
                }
                one.repeat(n)
            }
        })
        .filter(|v| v.len() <= MAX_CONSTANT)
    }

    pub(super) fn int(&self, id: u32) -> Option<i64> {
        match self.constants.get(&id)? {
            (_, Constant::Scalar(v)) => Some(*v as i64),
            _ => None,
        }
    }

    pub(super) fn elem(&self, ty: u32) -> Option<Elem> {
        Some(match self.types.get(&ty)? {
            Ty::Bool => Elem::Bool,
            Ty::Float(32) => Elem::F32,
            Ty::Float(16) => Elem::F16,
            Ty::Int(8) => Elem::I8,
            Ty::Int(16) => Elem::I16,
            Ty::Int(32) => Elem::I32,
            Ty::Int(64) => Elem::I64,
            _ => return None,
        })
    }

    /// A tensor type (scalars count as rank-0 tensors).
    pub(super) fn tensor_type(&self, ty: u32) -> Option<TensorType> {
        self.tensor_type_at(ty, 0)
    }

    /// [`Self::tensor_type`], `depth` constants deep (a shape may not contain itself).
    pub(super) fn tensor_type_at(&self, ty: u32, depth: usize) -> Option<TensorType> {
        match self.types.get(&ty)? {
            Ty::Tensor { elem, shape } => {
                let shape = match shape {
                    Some(s) => self
                        .values(*s, depth + 1)?
                        .into_iter()
                        .map(|d| d as i64)
                        .collect(),
                    None => return None,
                };
                Some(TensorType {
                    shape,
                    elem: self.elem(*elem)?,
                })
            }
            _ => Some(TensorType {
                shape: Vec::new(),
                elem: self.elem(ty)?,
            }),
        }
    }
}
