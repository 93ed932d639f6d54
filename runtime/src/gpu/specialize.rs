//! Host-side specialization of SPIR-V: wgpu passes no specialization constants to raw SPIR-V and
//! naga cannot read `OpSpecConstantOp` (FACTS §3), so the values are written into a copy of the
//! module instead.
//!
//! Two forms, one per wgpu path:
//! - [`patch`]: the spec constants keep their `SpecId`s, only their default literals and the
//!   `LocalSize` words change. For Vulkan passthrough, where the driver specializes.
//! - [`freeze`]: every specialization constant becomes a plain constant and every
//!   `OpSpecConstantOp` is evaluated on the host, so `psc()` shaders pass naga. For the portable path.

use std::collections::HashMap;

use fpshader_build::spv::{self, Editor};
use spirv::{Decoration, Op};

use crate::meta::{LocalSize, Reflection};

/// A value for one specialization constant, as ncnn's `vk_specialization_type` union.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SpecValue {
    /// `int` constants.
    I32(i32),
    /// `uint` constants.
    U32(u32),
    /// `float` constants.
    F32(f32),
    /// `bool` constants.
    Bool(bool),
}

impl SpecValue {
    /// The 32 bits SPIR-V stores.
    pub fn bits(self) -> u32 {
        match self {
            SpecValue::I32(v) => v as u32,
            SpecValue::U32(v) => v,
            SpecValue::F32(v) => v.to_bits(),
            SpecValue::Bool(v) => u32::from(v),
        }
    }
}

/// What to specialize: values by `constant_id`, and optionally the workgroup size.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Specialization {
    /// (`constant_id`, value) pairs; ids the shader does not declare are an error.
    pub values: Vec<(u32, SpecValue)>,
    /// The workgroup size to write into `LocalSize`, if any.
    pub local_size: Option<[u32; 3]>,
}

pub use crate::error::SpecializeError;

/// Writes `spec` into a copy of `words` as new defaults (constants stay specializable).
pub fn patch(
    words: &[u32],
    reflection: &Reflection,
    spec: &Specialization,
) -> Result<Vec<u32>, SpecializeError> {
    let mut out = words.to_vec();
    for (id, value) in &spec.values {
        set_constant(&mut out, reflection, *id, value.bits())?;
    }
    if let Some(size) = spec.local_size {
        patch_local_size(&mut out, reflection, size)?;
    }
    Ok(out)
}

/// Writes `bits` as the default of specialization constant `id`.
fn set_constant(
    words: &mut [u32],
    reflection: &Reflection,
    id: u32,
    bits: u32,
) -> Result<(), SpecializeError> {
    let sc = reflection
        .spec_constants
        .iter()
        .find(|s| s.id == id)
        .ok_or(SpecializeError::UnknownId(id))?;
    let at = sc.word_offset as usize;
    let word = words.get_mut(at).ok_or(SpecializeError::Malformed {
        what: "a constant's word offset past the module",
        at,
    })?;
    if sc.ty == crate::meta::Scalar::Bool {
        // the instruction word itself: OpSpecConstantTrue or OpSpecConstantFalse
        let op = if bits != 0 {
            Op::SpecConstantTrue
        } else {
            Op::SpecConstantFalse
        };
        *word = (*word & 0xffff_0000) | op as u32;
    } else {
        *word = bits;
    }
    Ok(())
}

/// The index of the `x` literal of `words`' `OpExecutionMode … LocalSize x y z`, if any.
fn local_size_mode(words: &[u32]) -> Result<Option<usize>, SpecializeError> {
    Ok(spv::Module::new(words)?
        .parse()?
        .iter()
        .find(|i| {
            i.op() == Some(Op::ExecutionMode)
                && i.operands.get(1) == Some(&(spirv::ExecutionMode::LocalSize as u32))
        })
        .map(|i| i.word + 3))
}

fn patch_local_size(
    words: &mut [u32],
    reflection: &Reflection,
    size: [u32; 3],
) -> Result<(), SpecializeError> {
    if size.contains(&0) {
        return Err(SpecializeError::ZeroLocalSize(size));
    }
    match &reflection.local_size {
        LocalSize::Literal { word_offset, .. } => {
            let at = *word_offset as usize;
            let slot = words
                .get_mut(at..at + 3)
                .ok_or(SpecializeError::Malformed {
                    what: "LocalSize's operands past the module",
                    at,
                })?;
            slot.copy_from_slice(&size);
            Ok(())
        }
        // a declared size that matches needs no patch
        other if other.default_size() == Some(size) => Ok(()),
        // `local_size_x_id` and friends: the size goes into those specialization constants
        LocalSize::BuiltIn {
            size: declared,
            spec_ids,
        }
        | LocalSize::Id {
            size: declared,
            spec_ids,
        } if (0..3).all(|i| declared[i] == size[i] || spec_ids[i].is_some()) => {
            for i in 0..3 {
                if let Some(id) = spec_ids[i].filter(|_| declared[i] != size[i]) {
                    set_constant(words, reflection, id, size[i])?;
                }
            }
            Ok(())
        }
        other => Err(SpecializeError::FixedLocalSize(other.clone(), size)),
    }
}

/// Turns every specialization constant into a constant with the values of `spec` (defaults for the
/// rest) and folds every `OpSpecConstantOp`, then applies `spec.local_size`. The result has no
/// `SpecId` decorations left, and write-only storage buffer members become read-write, which
/// naga's validator requires (bind such modules' buffers as read-write).
pub fn freeze(
    words: &[u32],
    reflection: &Reflection,
    spec: &Specialization,
) -> Result<Vec<u32>, SpecializeError> {
    let mut patched = patch(words, reflection, spec)?;
    if let (Some(size), LocalSize::BuiltIn { .. }) = (spec.local_size, &reflection.local_size) {
        // naga sizes workgroups by the execution mode, not the WorkgroupSize built-in that
        // overrides it in Vulkan: write the size there too
        let at = local_size_mode(&patched)?;
        if let Some(slot) = at.and_then(|at| patched.get_mut(at..at + 3)) {
            slot.copy_from_slice(&size);
        }
    }
    Freezer::default().run(&patched)
}

#[derive(Clone, Copy, Debug)]
enum Ty {
    Bool,
    Int { width: u32, signed: bool },
    Float { width: u32 },
}

/// A constant's value: its bits (bools are 0/1).
#[derive(Clone, Copy, Debug)]
struct Value {
    ty: u32,
    bits: u64,
}

#[derive(Default)]
struct Freezer {
    types: HashMap<u32, Ty>,
    values: HashMap<u32, Value>,
    composites: HashMap<u32, Vec<u32>>,
}

impl Freezer {
    fn run(mut self, words: &[u32]) -> Result<Vec<u32>, SpecializeError> {
        let module = spv::Module::new(words)?;
        let insts = module.parse()?;
        let buffers = buffer_variables(&insts);
        let mut out = Editor::new(&module);
        for inst in &insts {
            let ops = inst.operands;
            match inst.op() {
                Some(Op::Decorate) if ops.get(1) == Some(&(Decoration::SpecId as u32)) => {
                    continue; // a plain constant may not carry a SpecId
                }
                // naga's validator refuses write-only storage buffers: make them read-write
                // (storage images keep their access)
                Some(Op::MemberDecorate)
                    if ops.get(2) == Some(&(Decoration::NonReadable as u32)) =>
                {
                    continue;
                }
                Some(Op::Decorate)
                    if ops.get(1) == Some(&(Decoration::NonReadable as u32))
                        && buffers.contains(&ops[0]) =>
                {
                    continue;
                }
                Some(Op::TypeBool) => {
                    self.types.insert(ops[0], Ty::Bool);
                }
                Some(Op::TypeInt) if ops.len() >= 3 => {
                    self.types.insert(
                        ops[0],
                        Ty::Int {
                            width: ops[1],
                            signed: ops[2] != 0,
                        },
                    );
                }
                Some(Op::TypeFloat) if ops.len() >= 2 => {
                    self.types.insert(ops[0], Ty::Float { width: ops[1] });
                }
                Some(Op::Constant | Op::SpecConstant) if ops.len() >= 3 => {
                    let bits = u64::from(ops[2]) | ops.get(3).map_or(0, |h| u64::from(*h) << 32);
                    self.values.insert(ops[1], Value { ty: ops[0], bits });
                    out.retag(inst, Op::Constant);
                    continue;
                }
                Some(
                    op @ (Op::ConstantTrue
                    | Op::ConstantFalse
                    | Op::SpecConstantTrue
                    | Op::SpecConstantFalse),
                ) if ops.len() >= 2 => {
                    let truth = matches!(op, Op::ConstantTrue | Op::SpecConstantTrue);
                    self.values.insert(
                        ops[1],
                        Value {
                            ty: ops[0],
                            bits: u64::from(truth),
                        },
                    );
                    out.emit(bool_constant(truth), &ops[..2]);
                    continue;
                }
                Some(Op::ConstantComposite | Op::SpecConstantComposite) if ops.len() >= 2 => {
                    self.composites.insert(ops[1], ops[2..].to_vec());
                    out.retag(inst, Op::ConstantComposite);
                    continue;
                }
                Some(Op::SpecConstantOp) if ops.len() >= 3 => {
                    let (ty, id) = (ops[0], ops[1]);
                    let bits = self.evaluate(ty, ops[2], &ops[3..])?;
                    self.values.insert(id, Value { ty, bits });
                    match self.types.get(&ty) {
                        Some(Ty::Bool) => out.emit(bool_constant(bits != 0), &[ty, id]),
                        Some(Ty::Int { width, .. } | Ty::Float { width }) if *width == 64 => {
                            out.emit(Op::Constant, &[ty, id, bits as u32, (bits >> 32) as u32]);
                        }
                        Some(Ty::Int { .. } | Ty::Float { .. }) => {
                            out.emit(Op::Constant, &[ty, id, bits as u32]);
                        }
                        _ => {
                            return Err(SpecializeError::Unsupported {
                                op: format!("%{id}"),
                                problem: "a non-scalar result",
                            });
                        }
                    }
                    continue;
                }
                _ => {}
            }
            out.copy(inst);
        }
        Ok(out.finish())
    }

    fn value(&self, id: u32) -> Result<Value, SpecializeError> {
        self.values
            .get(&id)
            .copied()
            .ok_or_else(|| SpecializeError::Unsupported {
                op: format!("%{id}"),
                problem: "an operand that is not a known scalar constant",
            })
    }

    fn int_ty(&self, ty: u32) -> Result<(u32, bool), SpecializeError> {
        match self.types.get(&ty) {
            Some(Ty::Int { width, signed }) => Ok((*width, *signed)),
            Some(Ty::Bool) => Ok((1, false)),
            _ => Err(SpecializeError::Unsupported {
                op: format!("%{ty}"),
                problem: "a type other than an integer or a boolean",
            }),
        }
    }

    /// Evaluates one `OpSpecConstantOp` with a scalar result; returns the result's bits.
    fn evaluate(&self, result_ty: u32, opcode: u32, args: &[u32]) -> Result<u64, SpecializeError> {
        let op = Op::from_u32(opcode).ok_or_else(|| SpecializeError::Unsupported {
            op: opcode.to_string(),
            problem: "an opcode SPIR-V does not have",
        })?;
        let unsupported = |problem| SpecializeError::Unsupported {
            op: format!("{op:?}"),
            problem,
        };
        let arg = |i: usize| -> Result<Value, SpecializeError> {
            let id = *args.get(i).ok_or(SpecializeError::Malformed {
                what: "an OpSpecConstantOp lacking an operand",
                at: i,
            })?;
            self.value(id)
        };
        let (width, _) = match self.types.get(&result_ty) {
            Some(Ty::Float { width }) => (*width, true),
            _ => self.int_ty(result_ty)?,
        };
        let mask = |bits: u64| {
            if width >= 64 {
                bits
            } else {
                bits & ((1u64 << width) - 1)
            }
        };
        // operands as signed / unsigned integers of their own width
        let signed = |v: Value| -> Result<i64, SpecializeError> {
            let (w, _) = self.int_ty(v.ty)?;
            Ok(sign_extend(v.bits, w))
        };
        let unsigned = |v: Value| -> Result<u64, SpecializeError> {
            let (w, _) = self.int_ty(v.ty)?;
            Ok(if w >= 64 {
                v.bits
            } else {
                v.bits & ((1u64 << w) - 1)
            })
        };
        let b = |x: bool| u64::from(x);
        let bits = match op {
            Op::SConvert => mask(signed(arg(0)?)? as u64),
            Op::UConvert => mask(unsigned(arg(0)?)?),
            Op::FConvert => {
                let v = arg(0)?;
                let from = match self.types.get(&v.ty) {
                    Some(Ty::Float { width }) => *width,
                    _ => return Err(unsupported("a conversion from a non-float")),
                };
                let x = match from {
                    64 => f64::from_bits(v.bits),
                    32 => f64::from(f32::from_bits(v.bits as u32)),
                    16 => half::f16::from_bits(v.bits as u16).to_f64(),
                    _ => return Err(unsupported("a conversion from a float of this width")),
                };
                match width {
                    64 => x.to_bits(),
                    32 => u64::from((x as f32).to_bits()),
                    16 => u64::from(half::f16::from_f64(x).to_bits()),
                    _ => return Err(unsupported("a conversion to a float of this width")),
                }
            }
            Op::SNegate => mask(signed(arg(0)?)?.wrapping_neg() as u64),
            Op::Not => mask(!unsigned(arg(0)?)?),
            Op::IAdd => mask(unsigned(arg(0)?)?.wrapping_add(unsigned(arg(1)?)?)),
            Op::ISub => mask(unsigned(arg(0)?)?.wrapping_sub(unsigned(arg(1)?)?)),
            Op::IMul => mask(unsigned(arg(0)?)?.wrapping_mul(unsigned(arg(1)?)?)),
            Op::UDiv | Op::UMod => {
                let (x, y) = (unsigned(arg(0)?)?, unsigned(arg(1)?)?);
                if y == 0 {
                    0 // undefined in SPIR-V; any value is valid
                } else if op == Op::UDiv {
                    mask(x / y)
                } else {
                    mask(x % y)
                }
            }
            Op::SDiv | Op::SRem | Op::SMod => {
                let (x, y) = (signed(arg(0)?)?, signed(arg(1)?)?);
                if y == 0 {
                    0
                } else {
                    let r = match op {
                        Op::SDiv => x.wrapping_div(y),
                        Op::SRem => x.wrapping_rem(y),
                        _ => x.wrapping_rem(y).wrapping_add(y).wrapping_rem(y),
                    };
                    mask(r as u64)
                }
            }
            Op::ShiftRightLogical => mask(unsigned(arg(0)?)? >> (unsigned(arg(1)?)? % 64)),
            Op::ShiftRightArithmetic => {
                mask((signed(arg(0)?)? >> (unsigned(arg(1)?)? % 64)) as u64)
            }
            Op::ShiftLeftLogical => mask(unsigned(arg(0)?)? << (unsigned(arg(1)?)? % 64)),
            Op::BitwiseOr => mask(unsigned(arg(0)?)? | unsigned(arg(1)?)?),
            Op::BitwiseXor => mask(unsigned(arg(0)?)? ^ unsigned(arg(1)?)?),
            Op::BitwiseAnd => mask(unsigned(arg(0)?)? & unsigned(arg(1)?)?),
            Op::LogicalOr => b(arg(0)?.bits != 0 || arg(1)?.bits != 0),
            Op::LogicalAnd => b(arg(0)?.bits != 0 && arg(1)?.bits != 0),
            Op::LogicalNot => b(arg(0)?.bits == 0),
            Op::LogicalEqual => b((arg(0)?.bits != 0) == (arg(1)?.bits != 0)),
            Op::LogicalNotEqual => b((arg(0)?.bits != 0) != (arg(1)?.bits != 0)),
            Op::Select => {
                if arg(0)?.bits != 0 {
                    arg(1)?.bits
                } else {
                    arg(2)?.bits
                }
            }
            Op::IEqual => b(unsigned(arg(0)?)? == unsigned(arg(1)?)?),
            Op::INotEqual => b(unsigned(arg(0)?)? != unsigned(arg(1)?)?),
            Op::ULessThan => b(unsigned(arg(0)?)? < unsigned(arg(1)?)?),
            Op::UGreaterThan => b(unsigned(arg(0)?)? > unsigned(arg(1)?)?),
            Op::ULessThanEqual => b(unsigned(arg(0)?)? <= unsigned(arg(1)?)?),
            Op::UGreaterThanEqual => b(unsigned(arg(0)?)? >= unsigned(arg(1)?)?),
            Op::SLessThan => b(signed(arg(0)?)? < signed(arg(1)?)?),
            Op::SGreaterThan => b(signed(arg(0)?)? > signed(arg(1)?)?),
            Op::SLessThanEqual => b(signed(arg(0)?)? <= signed(arg(1)?)?),
            Op::SGreaterThanEqual => b(signed(arg(0)?)? >= signed(arg(1)?)?),
            Op::CompositeExtract => {
                let lacking = |at| SpecializeError::Malformed {
                    what: "a CompositeExtract lacking an operand",
                    at,
                };
                let composite = *args.first().ok_or_else(|| lacking(0))?;
                let index = *args.get(1).ok_or_else(|| lacking(1))?;
                let part = self
                    .composites
                    .get(&composite)
                    .and_then(|parts| parts.get(index as usize))
                    .ok_or_else(|| unsupported("an index past a known composite"))?;
                self.value(*part)?.bits
            }
            _ => return Err(unsupported("an op this evaluator does not implement")),
        };
        Ok(bits)
    }
}

/// Ids of variables in the StorageBuffer or Uniform storage classes (buffer blocks).
fn buffer_variables(insts: &[spv::Instruction<'_>]) -> Vec<u32> {
    let buffer = |class: u32| {
        class == spirv::StorageClass::StorageBuffer as u32
            || class == spirv::StorageClass::Uniform as u32
    };
    insts
        .iter()
        .filter(|i| i.is(Op::Variable) && i.operand(2).is_some_and(buffer))
        .filter_map(|i| i.operand(1))
        .collect()
}

fn bool_constant(truth: bool) -> Op {
    if truth {
        Op::ConstantTrue
    } else {
        Op::ConstantFalse
    }
}

fn sign_extend(bits: u64, width: u32) -> i64 {
    if width == 0 || width >= 64 {
        return bits as i64;
    }
    let shift = 64 - width;
    ((bits << shift) as i64) >> shift
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shaders::Shader;

    /// The `LocalSize` execution mode's literals of `words`.
    fn execution_mode_size(words: &[u32]) -> Option<Vec<u32>> {
        let at = local_size_mode(words).ok()??;
        Some(words[at..at + 3].to_vec())
    }

    #[test]
    fn local_size_ids_take_the_requested_size() {
        // normalize_vec4.comp declares `local_size_x_id = 3`
        let v = &Shader::NormalizeVec4.module().variants[0];
        let r = &v.reflection;
        let spec = |size: [u32; 3]| Specialization {
            values: Vec::new(),
            local_size: Some(size),
        };
        let patched = patch(&v.spirv, r, &spec([64, 1, 1])).unwrap();
        let at = r
            .spec_constants
            .iter()
            .find(|s| s.id == 3)
            .unwrap()
            .word_offset;
        assert_eq!(patched[at as usize], 64);
        // naga reads the execution mode: the frozen module carries the size there too
        let frozen = freeze(&v.spirv, r, &spec([64, 1, 1])).unwrap();
        assert_eq!(execution_mode_size(&frozen), Some(vec![64, 1, 1]));
        // y has no specialization constant: it stays 1
        assert!(matches!(
            patch(&v.spirv, r, &spec([64, 2, 1])),
            Err(SpecializeError::FixedLocalSize(_, [64, 2, 1]))
        ));
    }
}
