//! Graph segments read back as written.

use super::*;

#[test]
fn graph_segments_read_back_as_written() {
    // every ML op of the end-to-end models survives SPIR-V and back with its attributes
    for (name, mlir) in ml_models() {
        let graph = tosa::mlir::parse(name, &mlir).unwrap();
        let model = with_graphs(&graph);
        let vgf::ModuleCode::Spirv(words) = &model.modules[0].code else {
            panic!("{name}: no SPIR-V");
        };
        let back = tosa::spirv::read(words, &model.modules[0].entry_point).unwrap();
        let ops = |g: &tosa::Graph| -> Vec<(String, Vec<String>)> {
            g.ops
                .iter()
                .filter(|op| op.kind() != "const" && op.kind() != "const_shape")
                .map(|op| {
                    let mut attrs: Vec<String> = [
                        "pad", "stride", "dilation", "kernel", "out_pad", "perms", "min_val",
                        "max_val",
                    ]
                    .iter()
                    .filter_map(|k| op.attrs.get(*k).map(|a| format!("{k}={a:?}")))
                    .collect();
                    attrs.sort();
                    (op.name.clone(), attrs)
                })
                .collect()
        };
        assert_eq!(ops(&back.graph), ops(&graph), "{name}");
        assert!(
            model
                .sequence
                .segments
                .iter()
                .all(|s| s.ty == ModuleType::Graph)
        );
        assert!(
            compute_only(&graph)
                .sequence
                .segments
                .iter()
                .all(|s| s.ty == ModuleType::Compute)
        );
    }
    // what a graph cannot say is an error that names the op and the way out
    let bad = "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = tosa.clamp %arg0 {min_val = 0.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n";
    let graph = tosa::mlir::parse("bad.mlir", bad).unwrap();
    let options = convert::ConvertOptions {
        compute_only: false,
        ..Default::default()
    };
    let err = convert::convert(&graph, &compiler(), options)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(
            "2:7: `tosa.clamp` cannot be written as a TOSA graph: attribute `max_val` is missing"
        ) && err.contains("--compute-only"),
        "{err}"
    );
}

// ---- end to end: Arm's converter and scenario runner, fpshader, numpy ----
