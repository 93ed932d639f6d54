//! Arm's tools from the oracle virtualenv, and what their output is compared by.

use super::*;

pub(crate) fn arm_tool(name: &str) -> Option<PathBuf> {
    if std::env::var_os("FPSHADER_SKIP_ARM").is_some() {
        return None;
    }
    let python = std::env::var_os("FPSHADER_NCNN_PYTHON").unwrap_or_else(|| {
        panic!(
            "FPSHADER_NCNN_PYTHON is not set: run through `cargo xtask test`, which installs \
             Arm's tools next to it, or set FPSHADER_SKIP_ARM=1"
        )
    });
    let tool = PathBuf::from(python).with_file_name(name);
    assert!(
        tool.exists(),
        "{} is missing: cargo xtask installs it",
        tool.display()
    );
    Some(tool)
}

pub(crate) fn vgf_dump(file: &std::path::Path) -> Option<serde_json::Value> {
    let tool = arm_tool("vgf_dump")?;
    let out = Command::new(tool).arg("-i").arg(file).output().unwrap();
    assert!(
        out.status.success(),
        "vgf_dump {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

pub(crate) fn compiler() -> Compiler {
    Compiler::new(Settings::default()).unwrap()
}

pub(crate) fn compute_only(graph: &tosa::Graph) -> vgf::Vgf {
    convert::convert(graph, &compiler(), convert::ConvertOptions::default())
        .unwrap()
        .vgf
}

/// ML partitions as SPV_ARM_graph segments, as Arm's converter writes them.
pub(crate) fn with_graphs(graph: &tosa::Graph) -> vgf::Vgf {
    let options = convert::ConvertOptions {
        compute_only: false,
        ..Default::default()
    };
    convert::convert(graph, &compiler(), options).unwrap().vgf
}

/// What must agree between our graph-segment files and Arm's converter's: the resource table
/// (categories, descriptor types, formats, shapes, alias groups), and per segment its type and
/// the resources it binds (binding numbers are ours to choose).
pub(crate) fn structure(dump: &serde_json::Value, bindings: bool) -> serde_json::Value {
    let segments: Vec<serde_json::Value> = dump["model_sequence"]["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let mut bound: Vec<u64> = s["descriptor_set_infos"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|d| d["bindings"].as_array().unwrap().iter())
                .map(|b| b["mrt_index"].as_u64().unwrap())
                .collect();
            bound.sort_unstable();
            let bound = if bindings || s["type"] == "GRAPH" {
                serde_json::json!(bound)
            } else {
                serde_json::Value::Null
            };
            // a segment's inputs and outputs as sets (Arm's converter lists them by resource)
            let io = |key: &str| -> Vec<u64> {
                let mut v: Vec<u64> = (s[key].as_array().unwrap().iter())
                    .map(|b| b["mrt_index"].as_u64().unwrap())
                    .collect();
                v.sort_unstable();
                v
            };
            let (inputs, outputs) = (io("inputs"), io("outputs"));
            serde_json::json!({"type": s["type"], "bound": bound, "inputs": inputs, "outputs": outputs, "constants": s["constants"].as_array().unwrap().len()})
        })
        .collect();
    let model = |key: &str| -> Vec<u64> {
        (dump["model_sequence"][key].as_array().unwrap().iter())
            .map(|b| b["mrt_index"].as_u64().unwrap())
            .collect()
    };
    let (inputs, outputs) = (model("inputs"), model("outputs"));
    serde_json::json!({"resources": dump["resources"], "segments": segments, "inputs": inputs, "outputs": outputs})
}

/// The partitions' kinds, `M` (ML) or `S` (shader), in order.
pub(crate) fn partition_kinds(graph: &tosa::Graph) -> String {
    partition::partition(graph)
        .iter()
        .map(|p| {
            if p.kind == partition::Kind::Ml {
                'M'
            } else {
                'S'
            }
        })
        .collect()
}
