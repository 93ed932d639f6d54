//! What the entry point declares: bindings, push constants, specialization constants and the
//! local size, as [`Reflection`].

use std::borrow::Cow;

use spirv::{Decoration, Dim, StorageClass};

use crate::meta::{
    Access, Binding, DescriptorKind, LocalSize, MemberType, PushConstantMember, PushConstants,
    Reflection, Scalar, SpecConstant,
};

use super::{Module, ReflectError, Type, image_dimension};

impl Module {
    pub(super) fn reflection(&self) -> Result<Reflection, ReflectError> {
        let (_, entry_name) = self
            .entry
            .clone()
            .ok_or(ReflectError::NoComputeEntryPoint)?;
        let mut bindings = Vec::new();
        let mut push_constants = None;
        for &(id, ptr_ty, storage) in &self.variables {
            let Some(Type::Pointer { pointee, .. }) = self.types.get(&ptr_ty) else {
                continue;
            };
            if storage == StorageClass::PushConstant as u32 {
                push_constants = self.push_constants(*pointee);
                continue;
            }
            let descriptor = [
                StorageClass::Uniform as u32,
                StorageClass::StorageBuffer as u32,
                StorageClass::UniformConstant as u32,
            ];
            if !descriptor.contains(&storage) {
                continue;
            }
            let Some((set, binding)) = self.set_binding(id) else {
                continue;
            };
            if let Some(b) = self.binding(id, set, binding, storage, *pointee) {
                bindings.push(b);
            }
        }
        bindings.sort_by_key(|b| (b.set, b.binding));

        let mut spec_constants: Vec<SpecConstant> = self
            .constants
            .iter()
            .filter(|(_, c)| c.spec)
            .filter_map(|(id, c)| {
                let spec_id = *self.decoration(*id, Decoration::SpecId)?.first()?;
                Some(SpecConstant {
                    id: spec_id,
                    name: self.name(*id),
                    ty: self.scalar(c.ty)?,
                    default: c.value,
                    word_offset: c.word_offset as u32,
                })
            })
            .collect();
        spec_constants.sort_by_key(|s| s.id);

        Ok(Reflection {
            spirv_version: self.version,
            entry_point: Cow::Owned(entry_name),
            local_size: self.local_size(),
            bindings: Cow::Owned(bindings),
            push_constants,
            spec_constants: Cow::Owned(spec_constants),
            features: self.features(),
        })
    }

    pub(super) fn local_size(&self) -> LocalSize {
        let resolve = |ids: &[u32]| {
            let mut size = [1; 3];
            let mut spec_ids = [None; 3];
            for (i, id) in ids.iter().take(3).enumerate() {
                if let Some(c) = self.constants.get(id) {
                    size[i] = c.value as u32;
                    if c.spec {
                        spec_ids[i] = self
                            .decoration(*id, Decoration::SpecId)
                            .and_then(|a| a.first().copied());
                    }
                }
            }
            (size, spec_ids)
        };
        let builtin = self.composites.iter().find(|(id, _)| {
            self.decoration(**id, Decoration::BuiltIn)
                .is_some_and(|a| a.first() == Some(&(spirv::BuiltIn::WorkgroupSize as u32)))
        });
        if let Some((_, parts)) = builtin {
            let (size, spec_ids) = resolve(parts);
            return LocalSize::BuiltIn { size, spec_ids };
        }
        if let Some(ids) = self.local_size_ids {
            let (size, spec_ids) = resolve(&ids);
            return LocalSize::Id { size, spec_ids };
        }
        match self.local_size {
            Some((size, offset)) => LocalSize::Literal {
                size,
                word_offset: offset as u32,
            },
            None => LocalSize::Absent,
        }
    }

    pub(super) fn binding(
        &self,
        id: u32,
        set: u32,
        binding: u32,
        storage: u32,
        pointee: u32,
    ) -> Option<Binding> {
        // unwrap arrays of descriptors
        let (mut ty, mut count) = (pointee, 1);
        match self.types.get(&pointee)? {
            Type::Array { element, length } => {
                ty = *element;
                count = *length;
            }
            Type::RuntimeArray { element } => {
                ty = *element;
                count = 0;
            }
            _ => {}
        }
        let var_access = self.access_decorations(
            self.decoration(id, Decoration::NonWritable).is_some(),
            self.decoration(id, Decoration::NonReadable).is_some(),
        );
        let mut image_dim = None;
        let mut image_format = None;
        let (kind, access) = match self.types.get(&ty)? {
            Type::Struct { members } => {
                let buffer_block = self.decoration(ty, Decoration::BufferBlock).is_some();
                if storage == StorageClass::StorageBuffer as u32 || buffer_block {
                    let all = |d: Decoration| {
                        !members.is_empty()
                            && (0..members.len() as u32)
                                .all(|m| self.member_decoration(ty, m, d).is_some())
                    };
                    let access = var_access.or_else(|| {
                        self.access_decorations(
                            all(Decoration::NonWritable),
                            all(Decoration::NonReadable),
                        )
                    });
                    (
                        DescriptorKind::StorageBuffer,
                        access.unwrap_or(Access::ReadWrite),
                    )
                } else {
                    (DescriptorKind::UniformBuffer, Access::ReadOnly)
                }
            }
            Type::SampledImage { image } => {
                if let Some(Type::Image { dim, .. }) = self.types.get(image) {
                    image_dim = image_dimension(*dim);
                }
                (DescriptorKind::CombinedImageSampler, Access::ReadOnly)
            }
            Type::Image {
                dim,
                sampled,
                format,
            } => {
                image_dim = image_dimension(*dim);
                let texel_buffer = *dim == Dim::DimBuffer as u32;
                if *sampled == 2 {
                    if *format != 0 {
                        image_format = spirv::ImageFormat::from_u32(*format)
                            .map(|f| Cow::Owned(format!("{f:?}")));
                    }
                    let kind = if texel_buffer {
                        DescriptorKind::StorageTexelBuffer
                    } else {
                        DescriptorKind::StorageImage
                    };
                    (kind, var_access.unwrap_or(Access::ReadWrite))
                } else if texel_buffer {
                    (DescriptorKind::UniformTexelBuffer, Access::ReadOnly)
                } else {
                    (DescriptorKind::SampledImage, Access::ReadOnly)
                }
            }
            Type::Sampler => (DescriptorKind::Sampler, Access::ReadOnly),
            Type::Tensor => (
                DescriptorKind::Tensor,
                var_access.unwrap_or(Access::ReadWrite),
            ),
            _ => return None,
        };
        let name = match self.names.get(&id) {
            Some(n) if !n.is_empty() => n.clone(),
            _ => self.names.get(&ty).cloned().unwrap_or_default(),
        };
        Some(Binding {
            set,
            binding,
            kind,
            count,
            access,
            image_dim,
            image_format,
            name: Cow::Owned(name),
        })
    }

    pub(super) fn access_decorations(
        &self,
        non_writable: bool,
        non_readable: bool,
    ) -> Option<Access> {
        match (non_writable, non_readable) {
            (true, _) => Some(Access::ReadOnly),
            (false, true) => Some(Access::WriteOnly),
            (false, false) => None,
        }
    }

    pub(super) fn push_constants(&self, block: u32) -> Option<PushConstants> {
        let Type::Struct { members } = self.types.get(&block)? else {
            return None;
        };
        let mut out = Vec::with_capacity(members.len());
        for (i, ty) in members.iter().enumerate() {
            let i = i as u32;
            let offset = self
                .member_decoration(block, i, Decoration::Offset)
                .and_then(|a| a.first().copied())
                .unwrap_or(0);
            let matrix_stride = self
                .member_decoration(block, i, Decoration::MatrixStride)
                .and_then(|a| a.first().copied());
            let size = self.size_of(*ty, matrix_stride).unwrap_or(0);
            out.push(PushConstantMember {
                name: Cow::Owned(
                    self.member_names
                        .get(&(block, i))
                        .cloned()
                        .unwrap_or_default(),
                ),
                offset,
                size,
                ty: self.member_type(*ty).unwrap_or(MemberType {
                    scalar: Scalar::Uint(32),
                    components: 1,
                    columns: 1,
                    array: 0,
                }),
            });
        }
        out.sort_by_key(|m| m.offset);
        let size = out
            .iter()
            .map(|m| m.offset.saturating_add(m.size))
            .max()
            .unwrap_or(0);
        Some(PushConstants {
            size,
            members: Cow::Owned(out),
        })
    }
}
