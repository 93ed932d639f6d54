//! `fpshaderc vgf-dump`: the JSON that Arm's `vgf_dump` (0.11) prints for a file, field for field,
//! so the two can be compared directly.

use serde_json::{Value, json};

use super::super::custom_op::{ADDRESS_MODES, BORDER_COLORS, FILTERS};
use super::format::{BindingSlot, Vgf, descriptor_type_name, format_name};

fn slots(slots: &[BindingSlot]) -> Value {
    slots
        .iter()
        .enumerate()
        .map(|(i, s)| json!({"binding": s.binding, "index": i, "mrt_index": s.mrt_index}))
        .collect()
}

fn named(slots: &[BindingSlot], names: &[String]) -> Value {
    slots
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({
                "binding": s.binding,
                "index": i,
                "mrt_index": s.mrt_index,
                "name": names.get(i).cloned().unwrap_or_default(),
            })
        })
        .collect()
}

fn enum_name(name: Option<&str>, value: u32) -> String {
    name.map_or_else(|| format!("Unknown({value})"), str::to_string)
}

/// The dump of `vgf` as `vgf_dump` prints it.
pub fn dump(vgf: &Vgf) -> Value {
    let modules: Vec<Value> = vgf
        .modules
        .iter()
        .enumerate()
        .map(|(i, m)| {
            json!({
                "entry_point": m.entry_point,
                "index": i,
                "name": m.name,
                "shader_code_available": !matches!(m.code, super::format::ModuleCode::None),
                "shader_type": m.code.type_name(),
                "type": m.ty.name(),
            })
        })
        .collect();
    let segments: Vec<Value> = vgf
        .sequence
        .segments
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let sets: Vec<Value> = s
                .set_infos
                .iter()
                .enumerate()
                .map(|(n, d)| json!({"bindings": slots(&d.bindings), "set_index": d.set_index.unwrap_or(n as u32)}))
                .collect();
            let ranges: Vec<Value> = s
                .push_constant_ranges
                .iter()
                .enumerate()
                .map(|(n, r)| json!({"index": n, "offset": r.offset, "size": r.size, "stage_flags": r.stage_flags}))
                .collect();
            let constant_bindings: Vec<Value> = s
                .constants
                .iter()
                .enumerate()
                .map(|(n, &c)| json!({"constant_table_index": c, "graph_constant_id": n}))
                .collect();
            json!({
                "constant_bindings": constant_bindings,
                "constants": s.constants,
                "descriptor_set_infos": sets,
                "dispatch_shape": s.dispatch_shape,
                "index": i,
                "inputs": slots(&s.inputs),
                "module_index": s.module_index,
                "name": s.name,
                "outputs": slots(&s.outputs),
                "push_constant_ranges": ranges,
                "type": s.ty.name(),
            })
        })
        .collect();
    let resources: Vec<Value> = vgf
        .resources
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut v = json!({
                "category": r.category.name(),
                "index": i,
                "shape": r.shape,
                "stride": r.strides,
                "vk_descriptor_type": r.vk_descriptor_type.map_or_else(
                    || "none".to_string(),
                    |d| enum_name(descriptor_type_name(d), d),
                ),
                "vk_format": enum_name(format_name(r.vk_format), r.vk_format),
            });
            if let Some(a) = r.alias_group {
                v["alias_group_id"] = json!(a);
            }
            if let Some(c) = r.sampler {
                let name = |table: &[(&str, u32)], value: u32| {
                    let found = table.iter().find(|e| e.1 == value).map(|e| e.0);
                    enum_name(found, value)
                };
                v["sampler_config"] = json!({
                    "address_mode_u": name(ADDRESS_MODES, c.address_mode_u),
                    "address_mode_v": name(ADDRESS_MODES, c.address_mode_v),
                    "border_color": name(BORDER_COLORS, c.border_color),
                    "mag_filter": name(FILTERS, c.mag_filter),
                    "min_filter": name(FILTERS, c.min_filter),
                });
            }
            v
        })
        .collect();
    let constants: Vec<Value> = vgf
        .constants
        .iter()
        .enumerate()
        .map(|(i, c)| json!({"index": i, "mrt_index": c.mrt_index, "sparsity_dimension": c.sparsity_dimension}))
        .collect();
    json!({
        "constants": constants,
        "header": {"major": vgf.version.0, "minor": vgf.version.1, "patch": vgf.version.2},
        "model_sequence": {
            "inputs": named(&vgf.sequence.inputs, &vgf.sequence.input_names),
            "outputs": named(&vgf.sequence.outputs, &vgf.sequence.output_names),
            "segments": segments,
        },
        "modules": modules,
        "resources": resources,
    })
}
