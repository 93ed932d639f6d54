//! Serializing a [`Vgf`] into the on-disk layout: a 128-byte header, three FlatBuffers sections
//! (modules, model sequence, resources; no file identifier) and the raw `CONST00` section, every
//! section 8-byte aligned.

use flatbuffers::{FlatBufferBuilder, ForwardsUOffset, TableFinishedWIPOffset, Vector, WIPOffset};

use super::super::flatbuf::field;
use super::fb::slots;
use super::format::{BindingSlot, ModelSequence, Module, ModuleCode, Resource, Vgf};

/// The header's size in bytes.
pub const HEADER_SIZE: usize = 128;
/// The header's FourCC.
pub const MAGIC: &[u8; 4] = b"VGF1";
/// The constants section's version tag.
pub const CONSTANTS_TAG: &[u8; 8] = b"CONST00\0";
/// Bytes per constant metadata record.
pub const CONSTANT_RECORD: usize = 24;

/// The file's bytes.
pub fn write(vgf: &Vgf) -> Vec<u8> {
    let sections = [
        module_table(&vgf.modules),
        sequence_table(&vgf.sequence),
        resource_table(&vgf.resources),
        constants_section(vgf),
    ];
    let mut out = vec![0u8; HEADER_SIZE];
    out[..4].copy_from_slice(MAGIC);
    out[4..6].copy_from_slice(&vgf.vk_header_version.to_le_bytes());
    out[8] = vgf.version.0;
    out[9] = vgf.version.1;
    out[10] = vgf.version.2;
    for (i, section) in sections.iter().enumerate() {
        let offset = out.len() as u64;
        let entry = 16 + 16 * i;
        out[entry..entry + 8].copy_from_slice(&offset.to_le_bytes());
        out[entry + 8..entry + 16].copy_from_slice(&(section.len() as u64).to_le_bytes());
        out.extend_from_slice(section);
        out.resize(out.len().next_multiple_of(8), 0);
    }
    out
}

fn module_table(modules: &[Module]) -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::new();
    let mut offsets = Vec::with_capacity(modules.len());
    for m in modules {
        let name = fbb.create_string(&m.name);
        let entry = fbb.create_string(&m.entry_point);
        let code = match &m.code {
            ModuleCode::None => None,
            ModuleCode::Spirv(words) => {
                let v = fbb.create_vector(words);
                let t = fbb.start_table();
                fbb.push_slot_always(field(0), v);
                Some((1u8, fbb.end_table(t)))
            }
            ModuleCode::Glsl(text) | ModuleCode::Hlsl(text) => {
                let s = fbb.create_string(text);
                let t = fbb.start_table();
                fbb.push_slot_always(field(0), s);
                let kind = if matches!(m.code, ModuleCode::Glsl(_)) {
                    2
                } else {
                    3
                };
                Some((kind, fbb.end_table(t)))
            }
        };
        let t = fbb.start_table();
        fbb.push_slot_always(slots::MODULE_TYPE, m.ty as u8);
        fbb.push_slot_always(slots::MODULE_NAME, name);
        fbb.push_slot_always(slots::MODULE_ENTRY, entry);
        if let Some((kind, table)) = code {
            fbb.push_slot_always(slots::MODULE_CODE_TYPE, kind);
            fbb.push_slot_always(slots::MODULE_CODE, table);
        }
        offsets.push(fbb.end_table(t));
    }
    single_vector_root(fbb, &offsets)
}

/// A section whose root table holds one field, the vector of `tables`.
fn single_vector_root(
    mut fbb: FlatBufferBuilder<'_>,
    tables: &[WIPOffset<TableFinishedWIPOffset>],
) -> Vec<u8> {
    let v = fbb.create_vector(tables);
    let t = fbb.start_table();
    fbb.push_slot_always(field(0), v);
    let root = fbb.end_table(t);
    fbb.finish_minimal(root);
    fbb.finished_data().to_vec()
}

type TableVector<'a> = WIPOffset<Vector<'a, ForwardsUOffset<TableFinishedWIPOffset>>>;

fn binding_slots<'a>(fbb: &mut FlatBufferBuilder<'a>, slots: &[BindingSlot]) -> TableVector<'a> {
    let tables: Vec<_> = slots
        .iter()
        .map(|s| {
            let t = fbb.start_table();
            fbb.push_slot_always(field(0), s.binding);
            fbb.push_slot_always(field(1), s.mrt_index);
            fbb.end_table(t)
        })
        .collect();
    fbb.create_vector(&tables)
}

fn strings<'a>(
    fbb: &mut FlatBufferBuilder<'a>,
    names: &[String],
) -> WIPOffset<Vector<'a, ForwardsUOffset<&'a str>>> {
    let names: Vec<_> = names.iter().map(|n| fbb.create_string(n)).collect();
    fbb.create_vector(&names)
}

fn sequence_table(seq: &ModelSequence) -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::new();
    let mut segments = Vec::with_capacity(seq.segments.len());
    for s in &seq.segments {
        let name = fbb.create_string(&s.name);
        let sets: Vec<_> = s
            .set_infos
            .iter()
            .map(|set| {
                let bindings = binding_slots(&mut fbb, &set.bindings);
                let t = fbb.start_table();
                fbb.push_slot_always(field(0), bindings);
                fbb.push_slot(field(1), set.set_index.unwrap_or(u32::MAX), u32::MAX);
                fbb.end_table(t)
            })
            .collect();
        let sets = fbb.create_vector(&sets);
        let inputs = binding_slots(&mut fbb, &s.inputs);
        let outputs = binding_slots(&mut fbb, &s.outputs);
        let constants = fbb.create_vector(&s.constants);
        let dispatch = fbb.create_vector(&s.dispatch_shape);
        let ranges: Vec<_> = s
            .push_constant_ranges
            .iter()
            .map(|r| {
                let t = fbb.start_table();
                fbb.push_slot_always(field(0), r.stage_flags);
                fbb.push_slot_always(field(1), r.offset);
                fbb.push_slot_always(field(2), r.size);
                fbb.end_table(t)
            })
            .collect();
        let ranges = fbb.create_vector(&ranges);
        let t = fbb.start_table();
        fbb.push_slot_always(field(0), s.ty as u8);
        fbb.push_slot_always(field(1), name);
        fbb.push_slot_always(field(2), s.module_index);
        fbb.push_slot_always(field(3), sets);
        fbb.push_slot_always(field(4), inputs);
        fbb.push_slot_always(field(5), outputs);
        fbb.push_slot_always(field(6), constants);
        fbb.push_slot_always(field(7), dispatch);
        fbb.push_slot_always(field(8), ranges);
        segments.push(fbb.end_table(t));
    }
    let segments = fbb.create_vector(&segments);
    let inputs = binding_slots(&mut fbb, &seq.inputs);
    let outputs = binding_slots(&mut fbb, &seq.outputs);
    let input_names = strings(&mut fbb, &seq.input_names);
    let output_names = strings(&mut fbb, &seq.output_names);
    let t = fbb.start_table();
    fbb.push_slot_always(field(0), segments);
    fbb.push_slot_always(field(1), inputs);
    fbb.push_slot_always(field(2), outputs);
    fbb.push_slot_always(field(3), input_names);
    fbb.push_slot_always(field(4), output_names);
    let root = fbb.end_table(t);
    fbb.finish_minimal(root);
    fbb.finished_data().to_vec()
}

fn resource_table(resources: &[Resource]) -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::new();
    let mut entries = Vec::with_capacity(resources.len());
    for r in resources {
        let shape = fbb.create_vector(&r.shape);
        let strides = fbb.create_vector(&r.strides);
        let t = fbb.start_table();
        fbb.push_slot_always(field(0), shape);
        fbb.push_slot_always(field(1), strides);
        let description = fbb.end_table(t);
        let sampler = r.sampler.map(|s| {
            let t = fbb.start_table();
            for (i, v) in [
                s.min_filter,
                s.mag_filter,
                s.address_mode_u,
                s.address_mode_v,
                s.border_color,
            ]
            .into_iter()
            .enumerate()
            {
                fbb.push_slot_always(field(i), v);
            }
            fbb.end_table(t)
        });
        let t = fbb.start_table();
        fbb.push_slot_always(field(0), r.vk_descriptor_type.unwrap_or(u32::MAX));
        fbb.push_slot_always(field(1), r.vk_format);
        fbb.push_slot_always(field(2), r.category as u8);
        fbb.push_slot_always(field(3), description);
        if let Some(sampler) = sampler {
            fbb.push_slot_always(field(4), 1u8);
            fbb.push_slot_always(field(5), sampler);
        }
        fbb.push_slot(field(6), r.alias_group.unwrap_or(u32::MAX), u32::MAX);
        entries.push(fbb.end_table(t));
    }
    single_vector_root(fbb, &entries)
}

fn constants_section(vgf: &Vgf) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(CONSTANTS_TAG);
    out.extend_from_slice(&(vgf.constants.len() as u64).to_le_bytes());
    let mut offset = 0u64;
    for c in &vgf.constants {
        out.extend_from_slice(&c.mrt_index.to_le_bytes());
        out.extend_from_slice(&c.sparsity_dimension.to_le_bytes());
        out.extend_from_slice(&(c.data.len() as u64).to_le_bytes());
        out.extend_from_slice(&offset.to_le_bytes());
        offset += (c.data.len() as u64).next_multiple_of(8);
    }
    for c in &vgf.constants {
        out.extend_from_slice(&c.data);
        out.resize(out.len().next_multiple_of(8), 0);
    }
    out
}
