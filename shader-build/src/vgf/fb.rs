//! The FlatBuffers tables of Arm's `schema/vgf.fbs`, by hand: field slots for the writer, and
//! for the reader thin wrappers that the `flatbuffers` crate verifies before anything is read.
//!
//! Written by hand because flatc (which would generate this) is not a Rust crate; the wrappers
//! follow the shape of generated code: `Follow` to view, `Verifiable` to bounds-check.

use flatbuffers::{
    Follow, ForwardsUOffset, InvalidFlatbuffer, Table, VOffsetT, Vector, Verifiable, Verifier,
};

/// The vtable slot of the `i`-th field of a table.
pub const fn field(i: usize) -> VOffsetT {
    (4 + 2 * i) as VOffsetT
}

/// Slots of `Module`, whose union takes two (type, then value).
pub mod slots {
    use super::field;
    use flatbuffers::VOffsetT;
    /// `type`.
    pub const MODULE_TYPE: VOffsetT = field(0);
    /// `name`.
    pub const MODULE_NAME: VOffsetT = field(1);
    /// `entry_point`.
    pub const MODULE_ENTRY: VOffsetT = field(2);
    /// `code_type` (the union's discriminant).
    pub const MODULE_CODE_TYPE: VOffsetT = field(3);
    /// `code`.
    pub const MODULE_CODE: VOffsetT = field(4);
}

type Res = Result<(), InvalidFlatbuffer>;
type Tables<'a, T> = Vector<'a, ForwardsUOffset<T>>;

/// A view of one table; only reachable through a root the verifier has checked.
macro_rules! wrapper {
    ($name:ident) => {
        #[derive(Clone, Copy)]
        pub(super) struct $name<'a>(Table<'a>);

        impl<'a> Follow<'a> for $name<'a> {
            type Inner = $name<'a>;
            unsafe fn follow(buf: &'a [u8], loc: usize) -> Self::Inner {
                // SAFETY: the caller (flatbuffers' Follow contract) vouches for `loc`
                $name(unsafe { Table::new(buf, loc) })
            }
        }

        impl<'a> Fields<'a> for $name<'a> {
            fn table(self) -> Table<'a> {
                self.0
            }
        }
    };
}

/// A view plus a verifier that checks each field at its schema type.
macro_rules! table {
    ($name:ident { $($idx:literal $fname:literal: $ty:ty),* $(,)? }) => {
        wrapper!($name);

        impl Verifiable for $name<'_> {
            fn run_verifier(v: &mut Verifier, pos: usize) -> Res {
                v.visit_table(pos)?
                    $(.visit_field::<$ty>($fname, field($idx), false)?)*
                    .finish();
                Ok(())
            }
        }
    };
}

/// Typed reads of the fields of a verified table, absent fields giving the schema's default.
/// Private: the accessors below name each field once, at the type its verifier checked.
trait Fields<'a>: Copy {
    fn table(self) -> Table<'a>;

    fn read<T: Follow<'a> + 'a>(self, i: usize) -> Option<T::Inner> {
        // SAFETY: the table was verified (root_with_opts) with field `i` at type `T`
        unsafe { self.table().get::<T>(field(i), None) }
    }
    fn u8_at(self, i: usize) -> u8 {
        self.read::<u8>(i).unwrap_or(0)
    }
    fn u32_at(self, i: usize, default: u32) -> u32 {
        self.read::<u32>(i).unwrap_or(default)
    }
    fn str_at(self, i: usize) -> &'a str {
        self.read::<ForwardsUOffset<&'a str>>(i).unwrap_or("")
    }
    fn u32s_at(self, i: usize) -> Vec<u32> {
        self.read::<ForwardsUOffset<Vector<'a, u32>>>(i)
            .map(|v| v.iter().collect())
            .unwrap_or_default()
    }
    fn int64s_at(self, i: usize) -> Vec<i64> {
        self.read::<ForwardsUOffset<Int64s<'a>>>(i)
            .map_or_else(Vec::new, Int64s::to_vec)
    }
    fn strings_at(self, i: usize) -> Vec<String> {
        self.read::<ForwardsUOffset<Vector<'a, ForwardsUOffset<&'a str>>>>(i)
            .map(|v| v.iter().map(str::to_string).collect())
            .unwrap_or_default()
    }
    fn tables_at<T: Follow<'a, Inner = T> + 'a>(self, i: usize) -> Vec<T> {
        self.read::<ForwardsUOffset<Tables<'a, T>>>(i)
            .map(|v| v.iter().collect())
            .unwrap_or_default()
    }
    fn slots_at(self, i: usize) -> Vec<super::format::BindingSlot> {
        self.tables_at::<BindingSlot<'a>>(i)
            .into_iter()
            .map(BindingSlot::read)
            .collect()
    }
}

table!(Spirv { 0 "words": ForwardsUOffset<Vector<'_, u32>> });
table!(Source { 0 "code": ForwardsUOffset<&str> });
table!(BindingSlot { 0 "binding": u32, 1 "mrt_index": u32 });
table!(DescriptorSetInfo {
    0 "bindings": ForwardsUOffset<Tables<'_, BindingSlot<'_>>>,
    1 "set_index": u32,
});
table!(PushConstantRange { 0 "stage_flags": u32, 1 "offset": u32, 2 "size": u32 });
table!(SegmentInfo {
    0 "type": u8,
    1 "name": ForwardsUOffset<&str>,
    2 "module_index": u32,
    3 "set_infos": ForwardsUOffset<Tables<'_, DescriptorSetInfo<'_>>>,
    4 "inputs": ForwardsUOffset<Tables<'_, BindingSlot<'_>>>,
    5 "outputs": ForwardsUOffset<Tables<'_, BindingSlot<'_>>>,
    6 "constants": ForwardsUOffset<Vector<'_, u32>>,
    7 "dispatch_shape": ForwardsUOffset<Vector<'_, u32>>,
    8 "push_constant_ranges": ForwardsUOffset<Tables<'_, PushConstantRange<'_>>>,
});
table!(ModelSequenceTable {
    0 "segments": ForwardsUOffset<Tables<'_, SegmentInfo<'_>>>,
    1 "inputs": ForwardsUOffset<Tables<'_, BindingSlot<'_>>>,
    2 "outputs": ForwardsUOffset<Tables<'_, BindingSlot<'_>>>,
    3 "input_names": ForwardsUOffset<Vector<'_, ForwardsUOffset<&str>>>,
    4 "output_names": ForwardsUOffset<Vector<'_, ForwardsUOffset<&str>>>,
});
table!(Description {
    0 "shape": ForwardsUOffset<Int64s<'_>>,
    1 "strides": ForwardsUOffset<Int64s<'_>>,
});
table!(SamplerConfig {
    0 "min_filter": u32, 1 "mag_filter": u32, 2 "address_mode_u": u32,
    3 "address_mode_v": u32, 4 "border_color": u32,
});
table!(ModuleTable { 0 "modules": ForwardsUOffset<Tables<'_, Module<'_>>> });
table!(ModelResourceTable { 0 "mrt_entry": ForwardsUOffset<Tables<'_, ResourceEntry<'_>>> });

/// A `[int64]` vector read without requiring 8-byte alignment of its elements: Arm's writer
/// leaves empty ones (`strides: []`) 4-aligned, which the crate's verifier would refuse.
#[derive(Clone, Copy)]
pub(super) struct Int64s<'a>(&'a [u8]);

impl<'a> Follow<'a> for Int64s<'a> {
    type Inner = Int64s<'a>;
    unsafe fn follow(buf: &'a [u8], loc: usize) -> Self::Inner {
        // the verifier checked that the length and the elements lie inside `buf`
        let len = u32::from_le_bytes([buf[loc], buf[loc + 1], buf[loc + 2], buf[loc + 3]]);
        Int64s(&buf[loc + 4..loc + 4 + len as usize * 8])
    }
}

impl Verifiable for Int64s<'_> {
    fn run_verifier(v: &mut Verifier, pos: usize) -> Res {
        let len = v.get_uoffset(pos)? as usize;
        v.range_in_buffer(pos.saturating_add(4), len.saturating_mul(8))
    }
}

impl Int64s<'_> {
    fn to_vec(self) -> Vec<i64> {
        self.0
            .chunks_exact(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b.copy_from_slice(c);
                i64::from_le_bytes(b)
            })
            .collect()
    }
}

// `Module` and `ModelResourceTableEntry` verify by hand for their unions
wrapper!(Module);
wrapper!(ResourceEntry);

impl Verifiable for Module<'_> {
    fn run_verifier(v: &mut Verifier, pos: usize) -> Res {
        v.visit_table(pos)?
            .visit_field::<u8>("type", field(0), false)?
            .visit_field::<ForwardsUOffset<&str>>("name", field(1), false)?
            .visit_field::<ForwardsUOffset<&str>>("entry_point", field(2), false)?
            .visit_union::<u8, _>(
                "code_type",
                field(3),
                "code",
                field(4),
                false,
                |k, v, pos| match k {
                    1 => v.verify_union_variant::<ForwardsUOffset<Spirv>>("SPIRV", pos),
                    2 | 3 => v.verify_union_variant::<ForwardsUOffset<Source>>("source", pos),
                    _ => Ok(()),
                },
            )?
            .finish();
        Ok(())
    }
}

impl Verifiable for ResourceEntry<'_> {
    fn run_verifier(v: &mut Verifier, pos: usize) -> Res {
        v.visit_table(pos)?
            .visit_field::<u32>("vk_descriptor_type", field(0), false)?
            .visit_field::<u32>("vk_format", field(1), false)?
            .visit_field::<u8>("category", field(2), false)?
            .visit_field::<ForwardsUOffset<Description>>("description", field(3), false)?
            .visit_union::<u8, _>(
                "extra_config_type",
                field(4),
                "extra_config",
                field(5),
                false,
                |k, v, pos| match k {
                    1 => v.verify_union_variant::<ForwardsUOffset<SamplerConfig>>("Sampler", pos),
                    _ => Ok(()),
                },
            )?
            .visit_field::<u32>("alias_group_id", field(6), false)?
            .finish();
        Ok(())
    }
}

impl Spirv<'_> {
    pub(super) fn words(self) -> Vec<u32> {
        self.u32s_at(0)
    }
}

impl<'a> Source<'a> {
    pub(super) fn code(self) -> &'a str {
        self.str_at(0)
    }
}

impl BindingSlot<'_> {
    pub(super) fn read(self) -> super::format::BindingSlot {
        super::format::BindingSlot {
            binding: self.u32_at(0, 0),
            mrt_index: self.u32_at(1, 0),
        }
    }
}

impl DescriptorSetInfo<'_> {
    pub(super) fn bindings(self) -> Vec<super::format::BindingSlot> {
        self.slots_at(0)
    }
    pub(super) fn set_index(self) -> u32 {
        self.u32_at(1, u32::MAX)
    }
}

impl PushConstantRange<'_> {
    pub(super) fn read(self) -> super::format::PushConstantRange {
        super::format::PushConstantRange {
            stage_flags: self.u32_at(0, 0),
            offset: self.u32_at(1, 0),
            size: self.u32_at(2, 0),
        }
    }
}

impl<'a> SegmentInfo<'a> {
    pub(super) fn ty(self) -> u8 {
        self.u8_at(0)
    }
    pub(super) fn name(self) -> &'a str {
        self.str_at(1)
    }
    pub(super) fn module_index(self) -> u32 {
        self.u32_at(2, 0)
    }
    pub(super) fn set_infos(self) -> Vec<DescriptorSetInfo<'a>> {
        self.tables_at(3)
    }
    pub(super) fn inputs(self) -> Vec<super::format::BindingSlot> {
        self.slots_at(4)
    }
    pub(super) fn outputs(self) -> Vec<super::format::BindingSlot> {
        self.slots_at(5)
    }
    pub(super) fn constants(self) -> Vec<u32> {
        self.u32s_at(6)
    }
    pub(super) fn dispatch_shape(self) -> Vec<u32> {
        self.u32s_at(7)
    }
    pub(super) fn push_constant_ranges(self) -> Vec<super::format::PushConstantRange> {
        self.tables_at::<PushConstantRange<'a>>(8)
            .into_iter()
            .map(PushConstantRange::read)
            .collect()
    }
}

impl<'a> ModelSequenceTable<'a> {
    pub(super) fn segments(self) -> Vec<SegmentInfo<'a>> {
        self.tables_at(0)
    }
    pub(super) fn inputs(self) -> Vec<super::format::BindingSlot> {
        self.slots_at(1)
    }
    pub(super) fn outputs(self) -> Vec<super::format::BindingSlot> {
        self.slots_at(2)
    }
    pub(super) fn input_names(self) -> Vec<String> {
        self.strings_at(3)
    }
    pub(super) fn output_names(self) -> Vec<String> {
        self.strings_at(4)
    }
}

impl Description<'_> {
    pub(super) fn shape(self) -> Vec<i64> {
        self.int64s_at(0)
    }
    pub(super) fn strides(self) -> Vec<i64> {
        self.int64s_at(1)
    }
}

impl SamplerConfig<'_> {
    pub(super) fn read(self) -> super::format::SamplerConfig {
        super::format::SamplerConfig {
            min_filter: self.u32_at(0, 0),
            mag_filter: self.u32_at(1, 0),
            address_mode_u: self.u32_at(2, 0),
            address_mode_v: self.u32_at(3, 0),
            border_color: self.u32_at(4, 0),
        }
    }
}

impl<'a> ModuleTable<'a> {
    pub(super) fn modules(self) -> Vec<Module<'a>> {
        self.tables_at(0)
    }
}

impl<'a> ModelResourceTable<'a> {
    pub(super) fn entries(self) -> Vec<ResourceEntry<'a>> {
        self.tables_at(0)
    }
}

impl<'a> Module<'a> {
    pub(super) fn ty(self) -> u8 {
        self.u8_at(0)
    }
    pub(super) fn name(self) -> &'a str {
        self.str_at(1)
    }
    pub(super) fn entry_point(self) -> &'a str {
        self.str_at(2)
    }
    pub(super) fn code_type(self) -> u8 {
        self.u8_at(3)
    }
    pub(super) fn spirv(self) -> Option<Spirv<'a>> {
        (self.code_type() == 1).then(|| self.read::<ForwardsUOffset<Spirv<'a>>>(4))?
    }
    pub(super) fn source(self) -> Option<Source<'a>> {
        matches!(self.code_type(), 2 | 3).then(|| self.read::<ForwardsUOffset<Source<'a>>>(4))?
    }
}

impl<'a> ResourceEntry<'a> {
    pub(super) fn descriptor_type(self) -> u32 {
        self.u32_at(0, 0)
    }
    pub(super) fn format(self) -> u32 {
        self.u32_at(1, 0)
    }
    pub(super) fn category(self) -> u8 {
        self.u8_at(2)
    }
    pub(super) fn description(self) -> Option<Description<'a>> {
        self.read::<ForwardsUOffset<Description<'a>>>(3)
    }
    pub(super) fn sampler(self) -> Option<SamplerConfig<'a>> {
        (self.u8_at(4) == 1).then(|| self.read::<ForwardsUOffset<SamplerConfig<'a>>>(5))?
    }
    pub(super) fn alias_group(self) -> u32 {
        self.u32_at(6, u32::MAX)
    }
}
