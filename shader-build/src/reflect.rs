//! SPIR-V reflection for compute modules, walking the words directly.
//!
//! `spirv-reflect` 0.2.3 aborts on every module in debug builds, returns no bindings for SPIR-V 1.3,
//! asserts on 1.5/1.6 and has no specialization-constant or workgroup-size API; `rspirv-reflect`
//! fails on SPIR-V 1.6 (FACTS §2). This reflector reads one pass of instructions with the `spirv`
//! crate's enums and reports malformed input as [`ReflectError`], never by panicking.

use std::borrow::Cow;
use std::collections::HashMap;

use spirv::{Capability, Decoration, Dim, ExecutionMode, ExecutionModel, Op, StorageClass};

use crate::meta::{
    Access, Binding, DescriptorKind, Features, ImageDim, LocalSize, MemberType, PushConstantMember,
    PushConstants, Reflection, Scalar, SpecConstant,
};

/// Why a module could not be reflected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReflectError {
    /// Fewer than the five header words, or a byte length that is not a multiple of four.
    #[error("not SPIR-V: {0}")]
    NotSpirv(String),
    /// The first word is not the SPIR-V magic number.
    #[error("not SPIR-V: bad magic number {0:#010x}")]
    BadMagic(u32),
    /// An instruction runs past the end of the module or has a zero word count.
    #[error("malformed SPIR-V at word {word}: {problem}")]
    Malformed {
        /// Index of the offending instruction's first word.
        word: usize,
        /// What is wrong.
        problem: String,
    },
    /// No `OpEntryPoint GLCompute`.
    #[error("no GLCompute entry point")]
    NoComputeEntryPoint,
}

const MAGIC: u32 = 0x0723_0203;

/// Reflects SPIR-V given as bytes (either byte order).
pub fn reflect_bytes(bytes: &[u8]) -> Result<Reflection, ReflectError> {
    let le = crate::meta::le_words(bytes).ok_or_else(|| {
        ReflectError::NotSpirv(format!(
            "{} bytes is not a whole number of words",
            bytes.len()
        ))
    })?;
    if le.first() == Some(&MAGIC.swap_bytes()) {
        let be: Vec<u32> = le.iter().map(|w| w.swap_bytes()).collect();
        return reflect(&be);
    }
    reflect(&le)
}

/// Reflects a SPIR-V module given as words in host order.
pub fn reflect(words: &[u32]) -> Result<Reflection, ReflectError> {
    Module::parse(words)?.reflection()
}

/// The element scalar of each storage buffer, as `(set, binding, scalar)`: the component type
/// of the block's last member (its data array, through arrays and vectors). This is what a
/// TOSA custom op's `_vkformat` describes.
pub fn buffer_scalars(words: &[u32]) -> Result<Vec<(u32, u32, Scalar)>, ReflectError> {
    let m = Module::parse(words)?;
    let mut out = Vec::new();
    for &(id, ptr_ty, _) in &m.variables {
        let Some(Type::Pointer { pointee }) = m.types.get(&ptr_ty) else {
            continue;
        };
        let Some((set, binding)) = m.set_binding(id) else {
            continue;
        };
        let Some(Type::Struct { members }) = m.types.get(pointee) else {
            continue;
        };
        let mut ty = members.last().copied();
        for _ in 0..8 {
            match ty.and_then(|t| m.types.get(&t)) {
                Some(Type::Array { element, .. } | Type::RuntimeArray { element }) => {
                    ty = Some(*element)
                }
                Some(Type::Vector { component, .. }) => ty = Some(*component),
                _ => break,
            }
        }
        if let Some(scalar) = ty.and_then(|t| m.scalar(t)) {
            out.push((set, binding, scalar));
        }
    }
    out.sort_by_key(|&(set, binding, _)| (set, binding));
    Ok(out)
}

#[derive(Clone, Debug)]
enum Type {
    Bool,
    Int { width: u32, signed: bool },
    Float { width: u32 },
    Vector { component: u32, count: u32 },
    Matrix { column: u32, count: u32 },
    Array { element: u32, length: u32 },
    RuntimeArray { element: u32 },
    Struct { members: Vec<u32> },
    Pointer { pointee: u32 },
    Image { dim: u32, sampled: u32, format: u32 },
    SampledImage { image: u32 },
    Sampler,
    Other,
}

#[derive(Clone, Copy, Debug)]
struct Constant {
    ty: u32,
    value: u64,
    spec: bool,
    word_offset: usize,
}

/// (decoration, its literal operands) pairs.
type Decorations = Vec<(u32, Vec<u32>)>;

#[derive(Default)]
struct Module {
    version: (u8, u8),
    capabilities: Vec<u32>,
    entry: Option<(u32, String)>,
    local_size: Option<([u32; 3], usize)>,
    local_size_ids: Option<[u32; 3]>,
    names: HashMap<u32, String>,
    member_names: HashMap<(u32, u32), String>,
    decorations: HashMap<u32, Decorations>,
    member_decorations: HashMap<(u32, u32), Decorations>,
    types: HashMap<u32, Type>,
    constants: HashMap<u32, Constant>,
    composites: HashMap<u32, Vec<u32>>,
    variables: Vec<(u32, u32, u32)>,
}

impl Module {
    fn parse(words: &[u32]) -> Result<Self, ReflectError> {
        if words.len() < 5 {
            return Err(ReflectError::NotSpirv(format!(
                "{} words, a header alone has 5",
                words.len()
            )));
        }
        if words[0] != MAGIC {
            return Err(ReflectError::BadMagic(words[0]));
        }
        let mut m = Module {
            version: (
                ((words[1] >> 16) & 0xff) as u8,
                ((words[1] >> 8) & 0xff) as u8,
            ),
            ..Module::default()
        };
        let mut at = 5;
        while at < words.len() {
            let count = (words[at] >> 16) as usize;
            let opcode = words[at] & 0xffff;
            if count == 0 {
                return Err(malformed(at, "instruction with word count 0"));
            }
            let Some(inst) = words.get(at..at + count) else {
                return Err(malformed(
                    at,
                    &format!("instruction of {count} words runs past the end"),
                ));
            };
            m.instruction(at, opcode, &inst[1..])?;
            at += count;
        }
        Ok(m)
    }

    fn instruction(&mut self, at: usize, opcode: u32, ops: &[u32]) -> Result<(), ReflectError> {
        let need = |n: usize| {
            if ops.len() < n {
                Err(malformed(
                    at,
                    &format!("opcode {opcode} needs {n} operands, has {}", ops.len()),
                ))
            } else {
                Ok(())
            }
        };
        let Some(op) = Op::from_u32(opcode) else {
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

    fn decoration(&self, id: u32, d: Decoration) -> Option<&[u32]> {
        self.decorations
            .get(&id)?
            .iter()
            .find(|(k, _)| *k == d as u32)
            .map(|(_, args)| args.as_slice())
    }

    /// A resource variable's descriptor set and binding, when it has both.
    fn set_binding(&self, id: u32) -> Option<(u32, u32)> {
        let set = self.decoration(id, Decoration::DescriptorSet)?.first()?;
        let binding = self.decoration(id, Decoration::Binding)?.first()?;
        Some((*set, *binding))
    }

    fn member_decoration(&self, id: u32, member: u32, d: Decoration) -> Option<&[u32]> {
        self.member_decorations
            .get(&(id, member))?
            .iter()
            .find(|(k, _)| *k == d as u32)
            .map(|(_, args)| args.as_slice())
    }

    fn name(&self, id: u32) -> Cow<'static, str> {
        Cow::Owned(self.names.get(&id).cloned().unwrap_or_default())
    }

    fn reflection(&self) -> Result<Reflection, ReflectError> {
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

    fn local_size(&self) -> LocalSize {
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

    fn binding(
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
                    let access = var_access.or(self.access_decorations(
                        all(Decoration::NonWritable),
                        all(Decoration::NonReadable),
                    ));
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

    fn access_decorations(&self, non_writable: bool, non_readable: bool) -> Option<Access> {
        match (non_writable, non_readable) {
            (true, _) => Some(Access::ReadOnly),
            (false, true) => Some(Access::WriteOnly),
            (false, false) => None,
        }
    }

    fn push_constants(&self, block: u32) -> Option<PushConstants> {
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

    fn scalar(&self, ty: u32) -> Option<Scalar> {
        match self.types.get(&ty)? {
            Type::Bool => Some(Scalar::Bool),
            Type::Int {
                width,
                signed: true,
            } => Some(Scalar::Int(*width as u8)),
            Type::Int {
                width,
                signed: false,
            } => Some(Scalar::Uint(*width as u8)),
            Type::Float { width } => Some(Scalar::Float(*width as u8)),
            _ => None,
        }
    }

    fn member_type(&self, ty: u32) -> Option<MemberType> {
        self.member_type_depth(ty, 0)
    }

    fn member_type_depth(&self, ty: u32, depth: u32) -> Option<MemberType> {
        if depth > 32 {
            return None;
        }
        let one = |scalar| MemberType {
            scalar,
            components: 1,
            columns: 1,
            array: 0,
        };
        match self.types.get(&ty)? {
            Type::Vector { component, count } => Some(MemberType {
                components: *count as u8,
                ..one(self.scalar(*component)?)
            }),
            Type::Matrix { column, count } => {
                let col = self.member_type_depth(*column, depth + 1)?;
                Some(MemberType {
                    columns: *count as u8,
                    ..col
                })
            }
            Type::Array { element, length } => Some(MemberType {
                array: *length,
                ..self.member_type_depth(*element, depth + 1)?
            }),
            _ => Some(one(self.scalar(ty)?)),
        }
    }

    /// Byte size of a type in a block, bounded in depth against malicious nesting.
    fn size_of(&self, ty: u32, matrix_stride: Option<u32>) -> Option<u32> {
        self.size_of_depth(ty, matrix_stride, 0)
    }

    fn size_of_depth(&self, ty: u32, matrix_stride: Option<u32>, depth: u32) -> Option<u32> {
        if depth > 32 {
            return None;
        }
        match self.types.get(&ty)? {
            Type::Bool => Some(4),
            Type::Int { width, .. } | Type::Float { width } => Some(width / 8),
            Type::Vector { component, count } => Some(
                self.size_of_depth(*component, None, depth + 1)?
                    .checked_mul(*count)?,
            ),
            Type::Matrix { column, count } => {
                let stride = match matrix_stride {
                    Some(s) => s,
                    None => self.size_of_depth(*column, None, depth + 1)?,
                };
                stride.checked_mul(*count)
            }
            Type::Array { element, length } => {
                let stride = match self.decoration(ty, Decoration::ArrayStride) {
                    Some([s, ..]) => *s,
                    _ => self.size_of_depth(*element, matrix_stride, depth + 1)?,
                };
                stride.checked_mul(*length)
            }
            Type::Struct { members } => {
                let mut end = 0u32;
                for (i, m) in members.iter().enumerate() {
                    let i = i as u32;
                    let offset = self
                        .member_decoration(ty, i, Decoration::Offset)
                        .and_then(|a| a.first().copied())
                        .unwrap_or(end);
                    let stride = self
                        .member_decoration(ty, i, Decoration::MatrixStride)
                        .and_then(|a| a.first().copied());
                    end = end.max(offset.checked_add(self.size_of_depth(
                        *m,
                        stride,
                        depth + 1,
                    )?)?);
                }
                Some(end)
            }
            _ => None,
        }
    }

    fn features(&self) -> Features {
        let mut f = Features::NONE;
        for cap in &self.capabilities {
            let Some(cap) = Capability::from_u32(*cap) else {
                continue;
            };
            f = f.union(match cap {
                Capability::Float16 => Features::FLOAT16,
                Capability::StorageBuffer16BitAccess
                | Capability::UniformAndStorageBuffer16BitAccess
                | Capability::StorageInputOutput16 => Features::STORAGE_16BIT,
                Capability::StoragePushConstant16 => Features::PUSH_CONSTANT_16BIT,
                Capability::Int8 => Features::INT8,
                Capability::StorageBuffer8BitAccess
                | Capability::UniformAndStorageBuffer8BitAccess
                | Capability::StoragePushConstant8 => Features::STORAGE_8BIT,
                Capability::Int16 => Features::INT16,
                Capability::Int64 => Features::INT64,
                Capability::Float64 => Features::FLOAT64,
                Capability::GroupNonUniform
                | Capability::GroupNonUniformVote
                | Capability::GroupNonUniformArithmetic
                | Capability::GroupNonUniformBallot
                | Capability::GroupNonUniformShuffle
                | Capability::GroupNonUniformShuffleRelative
                | Capability::GroupNonUniformClustered
                | Capability::GroupNonUniformQuad
                | Capability::SubgroupBallotKHR
                | Capability::SubgroupVoteKHR => Features::SUBGROUP,
                Capability::StorageImageReadWithoutFormat
                | Capability::StorageImageWriteWithoutFormat => {
                    Features::STORAGE_IMAGE_WITHOUT_FORMAT
                }
                Capability::CooperativeMatrixKHR => Features::COOPERATIVE_MATRIX,
                _ => Features::NONE,
            });
        }
        f
    }
}

fn image_dimension(dim: u32) -> Option<ImageDim> {
    match Dim::from_u32(dim)? {
        Dim::Dim1D => Some(ImageDim::D1),
        Dim::Dim2D => Some(ImageDim::D2),
        Dim::Dim3D => Some(ImageDim::D3),
        Dim::DimCube => Some(ImageDim::Cube),
        Dim::DimBuffer => Some(ImageDim::Buffer),
        _ => None,
    }
}

fn malformed(word: usize, problem: &str) -> ReflectError {
    ReflectError::Malformed {
        word,
        problem: problem.to_string(),
    }
}

/// Decodes a SPIR-V literal string (UTF-8, NUL-terminated, packed little-endian into words).
fn string(words: &[u32]) -> Option<String> {
    let mut bytes = Vec::new();
    for w in words {
        for b in w.to_le_bytes() {
            if b == 0 {
                return String::from_utf8(bytes).ok();
            }
            bytes.push(b);
        }
    }
    None
}
