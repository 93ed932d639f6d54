//! The one pass over a module's instructions: ids, names, types, decorations, constants and
//! the variables, recorded for the other files to read.

use std::borrow::Cow;

use spirv::{Decoration, ExecutionMode, ExecutionModel, Op};

use super::{Constant, Module, ReflectError, Type, malformed, string};
use crate::spv;

impl Module {
    pub(super) fn parse(words: &[u32]) -> Result<Self, ReflectError> {
        let module = spv::Module::new(words)?;
        let mut m = Module {
            version: module.version(),
            ..Module::default()
        };
        for inst in module.instructions() {
            m.instruction(&inst?)?;
        }
        Ok(m)
    }

    pub(super) fn instruction(&mut self, inst: &spv::Instruction<'_>) -> Result<(), ReflectError> {
        let at = inst.word;
        let ops = inst.operands;
        let need = |n: usize| inst.need(n).map(|_| ()).map_err(ReflectError::from);
        let Some(op) = inst.op() else {
            return Ok(()); // unknown to this spirv crate version: nothing we reflect
        };
        match op {
            Op::Capability => {
                need(1)?;
                self.capabilities.push(ops[0]);
            }
            Op::EntryPoint => {
                need(3)?;
                if ops[0] == ExecutionModel::GLCompute as u32 && self.entry.is_none() {
                    let name = string(&ops[2..]).ok_or_else(|| malformed(at, "bad entry name"))?;
                    self.entry = Some((ops[1], name));
                }
            }
            Op::ExecutionMode => {
                need(2)?;
                if ops[1] == ExecutionMode::LocalSize as u32 {
                    need(5)?;
                    self.local_size = Some(([ops[2], ops[3], ops[4]], at + 3));
                }
            }
            Op::ExecutionModeId => {
                need(2)?;
                if ops[1] == ExecutionMode::LocalSizeId as u32 {
                    need(5)?;
                    self.local_size_ids = Some([ops[2], ops[3], ops[4]]);
                }
            }
            Op::Name => {
                need(2)?;
                if let Some(s) = string(&ops[1..]) {
                    self.names.insert(ops[0], s);
                }
            }
            Op::MemberName => {
                need(3)?;
                if let Some(s) = string(&ops[2..]) {
                    self.member_names.insert((ops[0], ops[1]), s);
                }
            }
            Op::Decorate => {
                need(2)?;
                self.decorations
                    .entry(ops[0])
                    .or_default()
                    .push((ops[1], ops[2..].to_vec()));
            }
            Op::MemberDecorate => {
                need(3)?;
                self.member_decorations
                    .entry((ops[0], ops[1]))
                    .or_default()
                    .push((ops[2], ops[3..].to_vec()));
            }
            Op::TypeBool => {
                need(1)?;
                self.types.insert(ops[0], Type::Bool);
            }
            Op::TypeInt => {
                need(3)?;
                self.types.insert(
                    ops[0],
                    Type::Int {
                        width: ops[1],
                        signed: ops[2] != 0,
                    },
                );
            }
            Op::TypeFloat => {
                need(2)?;
                self.types.insert(ops[0], Type::Float { width: ops[1] });
            }
            Op::TypeVector => {
                need(3)?;
                self.types.insert(
                    ops[0],
                    Type::Vector {
                        component: ops[1],
                        count: ops[2],
                    },
                );
            }
            Op::TypeMatrix => {
                need(3)?;
                self.types.insert(
                    ops[0],
                    Type::Matrix {
                        column: ops[1],
                        count: ops[2],
                    },
                );
            }
            Op::TypeArray => {
                need(3)?;
                // the length is a constant id, possibly a specialization constant
                let length = self.constants.get(&ops[2]).map_or(0, |c| c.value as u32);
                self.types.insert(
                    ops[0],
                    Type::Array {
                        element: ops[1],
                        length,
                    },
                );
            }
            Op::TypeRuntimeArray => {
                need(2)?;
                self.types
                    .insert(ops[0], Type::RuntimeArray { element: ops[1] });
            }
            Op::TypeStruct => {
                need(1)?;
                self.types.insert(
                    ops[0],
                    Type::Struct {
                        members: ops[1..].to_vec(),
                    },
                );
            }
            Op::TypePointer => {
                need(3)?;
                self.types.insert(ops[0], Type::Pointer { pointee: ops[2] });
            }
            Op::TypeImage => {
                need(8)?;
                self.types.insert(
                    ops[0],
                    Type::Image {
                        dim: ops[2],
                        sampled: ops[6],
                        format: ops[7],
                    },
                );
            }
            Op::TypeSampledImage => {
                need(2)?;
                self.types
                    .insert(ops[0], Type::SampledImage { image: ops[1] });
            }
            Op::TypeSampler => {
                need(1)?;
                self.types.insert(ops[0], Type::Sampler);
            }
            Op::TypeTensorARM => {
                need(2)?;
                self.types.insert(ops[0], Type::Tensor);
            }
            Op::TypeVoid | Op::TypeFunction | Op::TypeForwardPointer => {
                if let Some(id) = ops.first() {
                    self.types.entry(*id).or_insert(Type::Other);
                }
            }
            Op::Constant | Op::SpecConstant => {
                need(3)?;
                let value = u64::from(ops[2]) | ops.get(3).map_or(0, |hi| u64::from(*hi) << 32);
                self.constants.insert(
                    ops[1],
                    Constant {
                        ty: ops[0],
                        value,
                        spec: op == Op::SpecConstant,
                        word_offset: at + 3,
                    },
                );
            }
            Op::ConstantTrue | Op::ConstantFalse | Op::SpecConstantTrue | Op::SpecConstantFalse => {
                need(2)?;
                self.constants.insert(
                    ops[1],
                    Constant {
                        ty: ops[0],
                        value: u64::from(matches!(op, Op::ConstantTrue | Op::SpecConstantTrue)),
                        spec: matches!(op, Op::SpecConstantTrue | Op::SpecConstantFalse),
                        word_offset: at,
                    },
                );
            }
            Op::ConstantComposite | Op::SpecConstantComposite => {
                need(2)?;
                self.composites.insert(ops[1], ops[2..].to_vec());
            }
            Op::Variable => {
                need(3)?;
                self.variables.push((ops[1], ops[0], ops[2]));
            }
            _ => {}
        }
        Ok(())
    }

    pub(super) fn decoration(&self, id: u32, d: Decoration) -> Option<&[u32]> {
        self.decorations
            .get(&id)?
            .iter()
            .find(|(k, _)| *k == d as u32)
            .map(|(_, args)| args.as_slice())
    }

    /// A resource variable's descriptor set and binding, when it has both.
    pub(super) fn set_binding(&self, id: u32) -> Option<(u32, u32)> {
        let set = self.decoration(id, Decoration::DescriptorSet)?.first()?;
        let binding = self.decoration(id, Decoration::Binding)?.first()?;
        Some((*set, *binding))
    }

    pub(super) fn member_decoration(&self, id: u32, member: u32, d: Decoration) -> Option<&[u32]> {
        self.member_decorations
            .get(&(id, member))?
            .iter()
            .find(|(k, _)| *k == d as u32)
            .map(|(_, args)| args.as_slice())
    }

    pub(super) fn name(&self, id: u32) -> Cow<'static, str> {
        Cow::Owned(self.names.get(&id).cloned().unwrap_or_default())
    }
}
