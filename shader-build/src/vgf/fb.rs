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

macro_rules! table {
    ($name:ident { $($idx:literal $fname:literal: $ty:ty),* $(,)? }) => {
        #[derive(Clone, Copy)]
        pub(super) struct $name<'a>(Table<'a>);

        impl<'a> Follow<'a> for $name<'a> {
            type Inner = $name<'a>;
            unsafe fn follow(buf: &'a [u8], loc: usize) -> Self::Inner {
                // SAFETY: the caller (flatbuffers' Follow contract) vouches for `loc`
                $name(unsafe { Table::new(buf, loc) })
            }
        }

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

/// Reads field `idx` of a verified table as `T`.
macro_rules! get {
    ($self:ident, $idx:literal, $ty:ty, $default:expr) => {
        // SAFETY: the table was verified (root_with_opts) with this field at this type
        unsafe { $self.0.get::<$ty>(field($idx), $default) }
    };
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
table!(SamplerConfig {
    0 "min_filter": u32, 1 "mag_filter": u32, 2 "address_mode_u": u32,
    3 "address_mode_v": u32, 4 "border_color": u32,
});
table!(ModuleTable { 0 "modules": ForwardsUOffset<Tables<'_, Module<'_>>> });
table!(ModelResourceTable { 0 "mrt_entry": ForwardsUOffset<Tables<'_, ResourceEntry<'_>>> });

/// `Module`: by hand for its `code` union.
#[derive(Clone, Copy)]
pub(super) struct Module<'a>(Table<'a>);

impl<'a> Follow<'a> for Module<'a> {
    type Inner = Module<'a>;
    unsafe fn follow(buf: &'a [u8], loc: usize) -> Self::Inner {
        // SAFETY: the caller (flatbuffers' Follow contract) vouches for `loc`
        Module(unsafe { Table::new(buf, loc) })
    }
}

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

/// `ModelResourceTableEntry`: by hand for its `extra_config` union.
#[derive(Clone, Copy)]
pub(super) struct ResourceEntry<'a>(Table<'a>);

impl<'a> Follow<'a> for ResourceEntry<'a> {
    type Inner = ResourceEntry<'a>;
    unsafe fn follow(buf: &'a [u8], loc: usize) -> Self::Inner {
        // SAFETY: the caller (flatbuffers' Follow contract) vouches for `loc`
        ResourceEntry(unsafe { Table::new(buf, loc) })
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

fn list<'a, T: Follow<'a> + 'a>(v: Option<Tables<'a, T>>) -> Vec<T::Inner> {
    v.map(|v| v.iter().collect()).unwrap_or_default()
}

fn scalars<'a, T: Follow<'a, Inner = T> + 'a>(v: Option<Vector<'a, T>>) -> Vec<T> {
    v.map(|v| v.iter().collect()).unwrap_or_default()
}

impl<'a> Spirv<'a> {
    pub(super) fn words(&self) -> Vec<u32> {
        scalars(get!(self, 0, ForwardsUOffset<Vector<'a, u32>>, None))
    }
}

impl<'a> Source<'a> {
    pub(super) fn code(&self) -> &'a str {
        get!(self, 0, ForwardsUOffset<&str>, None).unwrap_or("")
    }
}

impl BindingSlot<'_> {
    pub(super) fn read(&self) -> super::format::BindingSlot {
        super::format::BindingSlot {
            binding: get!(self, 0, u32, Some(0)).unwrap_or(0),
            mrt_index: get!(self, 1, u32, Some(0)).unwrap_or(0),
        }
    }
}

fn slots_of(v: Option<Tables<'_, BindingSlot<'_>>>) -> Vec<super::format::BindingSlot> {
    list(v).iter().map(BindingSlot::read).collect()
}

impl<'a> DescriptorSetInfo<'a> {
    pub(super) fn bindings(&self) -> Vec<super::format::BindingSlot> {
        slots_of(get!(
            self,
            0,
            ForwardsUOffset<Tables<'a, BindingSlot<'a>>>,
            None
        ))
    }
    pub(super) fn set_index(&self) -> u32 {
        get!(self, 1, u32, Some(u32::MAX)).unwrap_or(u32::MAX)
    }
}

impl PushConstantRange<'_> {
    pub(super) fn read(&self) -> super::format::PushConstantRange {
        super::format::PushConstantRange {
            stage_flags: get!(self, 0, u32, Some(0)).unwrap_or(0),
            offset: get!(self, 1, u32, Some(0)).unwrap_or(0),
            size: get!(self, 2, u32, Some(0)).unwrap_or(0),
        }
    }
}

impl<'a> SegmentInfo<'a> {
    pub(super) fn ty(&self) -> u8 {
        get!(self, 0, u8, Some(0)).unwrap_or(0)
    }
    pub(super) fn name(&self) -> &'a str {
        get!(self, 1, ForwardsUOffset<&str>, None).unwrap_or("")
    }
    pub(super) fn module_index(&self) -> u32 {
        get!(self, 2, u32, Some(0)).unwrap_or(0)
    }
    pub(super) fn set_infos(&self) -> Vec<DescriptorSetInfo<'a>> {
        list(get!(
            self,
            3,
            ForwardsUOffset<Tables<'a, DescriptorSetInfo<'a>>>,
            None
        ))
    }
    pub(super) fn inputs(&self) -> Vec<super::format::BindingSlot> {
        slots_of(get!(
            self,
            4,
            ForwardsUOffset<Tables<'a, BindingSlot<'a>>>,
            None
        ))
    }
    pub(super) fn outputs(&self) -> Vec<super::format::BindingSlot> {
        slots_of(get!(
            self,
            5,
            ForwardsUOffset<Tables<'a, BindingSlot<'a>>>,
            None
        ))
    }
    pub(super) fn constants(&self) -> Vec<u32> {
        scalars(get!(self, 6, ForwardsUOffset<Vector<'a, u32>>, None))
    }
    pub(super) fn dispatch_shape(&self) -> Vec<u32> {
        scalars(get!(self, 7, ForwardsUOffset<Vector<'a, u32>>, None))
    }
    pub(super) fn push_constant_ranges(&self) -> Vec<super::format::PushConstantRange> {
        list(get!(
            self,
            8,
            ForwardsUOffset<Tables<'a, PushConstantRange<'a>>>,
            None
        ))
        .iter()
        .map(PushConstantRange::read)
        .collect()
    }
}

fn names(v: Option<Vector<'_, ForwardsUOffset<&str>>>) -> Vec<String> {
    v.map(|v| v.iter().map(str::to_string).collect())
        .unwrap_or_default()
}

impl<'a> ModelSequenceTable<'a> {
    pub(super) fn segments(&self) -> Vec<SegmentInfo<'a>> {
        list(get!(
            self,
            0,
            ForwardsUOffset<Tables<'a, SegmentInfo<'a>>>,
            None
        ))
    }
    pub(super) fn inputs(&self) -> Vec<super::format::BindingSlot> {
        slots_of(get!(
            self,
            1,
            ForwardsUOffset<Tables<'a, BindingSlot<'a>>>,
            None
        ))
    }
    pub(super) fn outputs(&self) -> Vec<super::format::BindingSlot> {
        slots_of(get!(
            self,
            2,
            ForwardsUOffset<Tables<'a, BindingSlot<'a>>>,
            None
        ))
    }
    pub(super) fn input_names(&self) -> Vec<String> {
        names(get!(
            self,
            3,
            ForwardsUOffset<Vector<'a, ForwardsUOffset<&str>>>,
            None
        ))
    }
    pub(super) fn output_names(&self) -> Vec<String> {
        names(get!(
            self,
            4,
            ForwardsUOffset<Vector<'a, ForwardsUOffset<&str>>>,
            None
        ))
    }
}

impl<'a> Description<'a> {
    pub(super) fn shape(&self) -> Vec<i64> {
        get!(self, 0, ForwardsUOffset<Int64s<'a>>, None).map_or_else(Vec::new, Int64s::to_vec)
    }
    pub(super) fn strides(&self) -> Vec<i64> {
        get!(self, 1, ForwardsUOffset<Int64s<'a>>, None).map_or_else(Vec::new, Int64s::to_vec)
    }
}

impl SamplerConfig<'_> {
    pub(super) fn read(&self) -> super::format::SamplerConfig {
        super::format::SamplerConfig {
            min_filter: get!(self, 0, u32, Some(0)).unwrap_or(0),
            mag_filter: get!(self, 1, u32, Some(0)).unwrap_or(0),
            address_mode_u: get!(self, 2, u32, Some(0)).unwrap_or(0),
            address_mode_v: get!(self, 3, u32, Some(0)).unwrap_or(0),
            border_color: get!(self, 4, u32, Some(0)).unwrap_or(0),
        }
    }
}

impl<'a> ModuleTable<'a> {
    pub(super) fn modules(&self) -> Vec<Module<'a>> {
        list(get!(self, 0, ForwardsUOffset<Tables<'a, Module<'a>>>, None))
    }
}

impl<'a> ModelResourceTable<'a> {
    pub(super) fn entries(&self) -> Vec<ResourceEntry<'a>> {
        list(get!(
            self,
            0,
            ForwardsUOffset<Tables<'a, ResourceEntry<'a>>>,
            None
        ))
    }
}

impl<'a> Module<'a> {
    pub(super) fn ty(&self) -> u8 {
        get!(self, 0, u8, Some(0)).unwrap_or(0)
    }
    pub(super) fn name(&self) -> &'a str {
        get!(self, 1, ForwardsUOffset<&str>, None).unwrap_or("")
    }
    pub(super) fn entry_point(&self) -> &'a str {
        get!(self, 2, ForwardsUOffset<&str>, None).unwrap_or("")
    }
    pub(super) fn code_type(&self) -> u8 {
        get!(self, 3, u8, Some(0)).unwrap_or(0)
    }
    pub(super) fn spirv(&self) -> Option<Spirv<'a>> {
        (self.code_type() == 1).then(|| get!(self, 4, ForwardsUOffset<Spirv<'a>>, None))?
    }
    pub(super) fn source(&self) -> Option<Source<'a>> {
        matches!(self.code_type(), 2 | 3)
            .then(|| get!(self, 4, ForwardsUOffset<Source<'a>>, None))?
    }
}

impl<'a> ResourceEntry<'a> {
    pub(super) fn descriptor_type(&self) -> u32 {
        get!(self, 0, u32, Some(0)).unwrap_or(0)
    }
    pub(super) fn format(&self) -> u32 {
        get!(self, 1, u32, Some(0)).unwrap_or(0)
    }
    pub(super) fn category(&self) -> u8 {
        get!(self, 2, u8, Some(0)).unwrap_or(0)
    }
    pub(super) fn description(&self) -> Option<Description<'a>> {
        get!(self, 3, ForwardsUOffset<Description<'a>>, None)
    }
    pub(super) fn sampler(&self) -> Option<SamplerConfig<'a>> {
        let kind = get!(self, 4, u8, Some(0)).unwrap_or(0);
        (kind == 1).then(|| get!(self, 5, ForwardsUOffset<SamplerConfig<'a>>, None))?
    }
    pub(super) fn alias_group(&self) -> u32 {
        get!(self, 6, u32, Some(u32::MAX)).unwrap_or(u32::MAX)
    }
}
