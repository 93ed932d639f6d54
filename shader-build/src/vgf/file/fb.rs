//! The FlatBuffers tables of Arm's `schema/vgf.fbs`: field slots for the writer, and for the
//! reader views ([`super::super::flatbuf`]) that the `flatbuffers` crate verifies before anything is
//! read.

use flatbuffers::{ForwardsUOffset, Vector, Verifiable, Verifier};

use super::super::flatbuf::{Fields, Int64s, Res, Tables, field, table, wrapper};

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

/// A `[BindingSlot]` field.
fn slots_at<'a>(t: impl Fields<'a>, i: usize) -> Vec<super::format::BindingSlot> {
    t.tables_at::<BindingSlot<'a>>(i)
        .into_iter()
        .map(BindingSlot::read)
        .collect()
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
        slots_at(self, 0)
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
        slots_at(self, 4)
    }
    pub(super) fn outputs(self) -> Vec<super::format::BindingSlot> {
        slots_at(self, 5)
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
        slots_at(self, 1)
    }
    pub(super) fn outputs(self) -> Vec<super::format::BindingSlot> {
        slots_at(self, 2)
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
