//! Types: scalars, push-constant member types and sizes (depth-limited, so that malformed
//! self-referencing types end), and the features the module needs.

use spirv::{Capability, Decoration};

use crate::meta::{Features, MemberType, Scalar};

use super::{Module, Type};

impl Module {
    pub(super) fn scalar(&self, ty: u32) -> Option<Scalar> {
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

    pub(super) fn member_type(&self, ty: u32) -> Option<MemberType> {
        self.member_type_depth(ty, 0)
    }

    pub(super) fn member_type_depth(&self, ty: u32, depth: u32) -> Option<MemberType> {
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
    pub(super) fn size_of(&self, ty: u32, matrix_stride: Option<u32>) -> Option<u32> {
        self.size_of_depth(ty, matrix_stride, 0)
    }

    pub(super) fn size_of_depth(
        &self,
        ty: u32,
        matrix_stride: Option<u32>,
        depth: u32,
    ) -> Option<u32> {
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

    pub(super) fn features(&self) -> Features {
        let mut f = Features::NONE;
        for cap in &self.capabilities {
            // VK_NV_cooperative_matrix2's capabilities, newer than the `spirv` crate:
            // CooperativeMatrixReductionsNV … CooperativeMatrixBlockLoadsNV, TensorAddressingNV
            if (5430..=5434).contains(cap) || *cap == 5439 {
                f = f.union(Features::COOPERATIVE_MATRIX2);
                continue;
            }
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
                Capability::DotProduct
                | Capability::DotProductInputAll
                | Capability::DotProductInput4x8Bit
                | Capability::DotProductInput4x8BitPacked => Features::INTEGER_DOT_PRODUCT,
                _ => Features::NONE,
            });
        }
        f
    }
}
