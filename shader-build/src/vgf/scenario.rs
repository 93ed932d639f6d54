//! A scenario file for Arm's scenario runner that runs a VGF once: the model's inputs read from
//! `<name>.npy`, its outputs written to `<name>.npy`, next to the scenario (the layout
//! `vgf_dump --scenario-template` proposes, filled in).

use serde_json::{Value, json};

use super::file::format::{DESCRIPTOR_TYPE_TENSOR_ARM, Vgf, format_name};

/// The scenario JSON for running `vgf`, stored as `vgf_file` (a path relative to the scenario).
pub fn scenario(vgf: &Vgf, vgf_file: &str) -> Value {
    let mut resources = vec![json!({"graph": {"src": vgf_file, "uid": "vgf_graph_ref"}})];
    let mut bindings = Vec::new();
    let seq = &vgf.sequence;
    let sides = [
        (&seq.inputs, &seq.input_names, "input", "readonly", "src"),
        (
            &seq.outputs,
            &seq.output_names,
            "output",
            "writeonly",
            "dst",
        ),
    ];
    for (slots, names, side, access, key) in sides {
        for (i, slot) in slots.iter().enumerate() {
            let uid = format!("{side}_{i}_ref");
            let name = names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("{side}_{i}"));
            let size = vgf
                .resources
                .get(slot.mrt_index as usize)
                .and_then(|r| r.byte_size())
                .unwrap_or(0);
            let resource = vgf.resources.get(slot.mrt_index as usize);
            // a graph reads a model input as a tensor; the runner wants its shape and format
            let entry = match resource
                .filter(|r| r.vk_descriptor_type == Some(DESCRIPTOR_TYPE_TENSOR_ARM))
            {
                Some(r) => {
                    let mut t = json!({
                        "dims": r.shape,
                        "format": format_name(r.vk_format).unwrap_or("VK_FORMAT_UNDEFINED"),
                        "shader_access": access,
                        "uid": uid,
                    });
                    t[key] = json!(format!("{name}.npy"));
                    json!({ "tensor": t })
                }
                None => {
                    let mut b = json!({"shader_access": access, "size": size, "uid": uid});
                    b[key] = json!(format!("{name}.npy"));
                    json!({ "buffer": b })
                }
            };
            resources.push(entry);
            bindings.push(json!({"id": slot.binding, "resource_ref": uid, "set": 0}));
        }
    }
    json!({
        "commands": [{"dispatch_graph": {
            "bindings": bindings,
            "graph_ref": "vgf_graph_ref",
            "shader_substitutions": [],
        }}],
        "resources": resources,
    })
}
