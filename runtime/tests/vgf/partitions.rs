//! Partitioning and files against Arm's converter and `vgf_dump`.

use super::*;

#[test]
fn partitions_match_arms_converter() {
    for (name, mlir, kinds) in cases() {
        let graph = tosa::mlir::parse(name, &mlir).unwrap();
        let ours = partition_kinds(&graph);
        assert_eq!(ours, kinds, "{name}");
        let Some(converter) = arm_tool("model-converter") else {
            continue;
        };
        let dir = common::scratch();
        let (input, output) = (
            dir.join(format!("{name}.mlir")),
            dir.join(format!("{name}.vgf")),
        );
        std::fs::write(&input, &mlir).unwrap();
        arm_vgf(&converter, &input, &output, name);
        let dump = vgf_dump(&output).unwrap();
        let arms: String = dump["model_sequence"]["segments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| if s["type"] == "GRAPH" { 'M' } else { 'S' })
            .collect();
        assert_eq!(ours, arms, "{name}: our partitions against Arm's segments");
        // with graph segments, the whole structure (the bug-fix cases bind differently)
        let bug_fix = matches!(name, "duplicated" | "swapped");
        let mine = vgf::file::dump::dump(&with_graphs(&graph));
        assert_eq!(
            structure(&mine, !bug_fix),
            structure(&dump, !bug_fix),
            "{name}: our graph-segment file against Arm's"
        );
        // the `.tosa` twin, written by Arm's converter, reads to the same graph structure
        let twin = to_tosa(&converter, &input);
        let graph = tosa::flatbuffer::parse("twin.tosa", &twin).unwrap();
        let twin_kinds = partition_kinds(&graph);
        assert_eq!(twin_kinds, ours, "{name}.tosa");
    }
}

/// Arm's converter's VGF file `vgf` of the MLIR file `mlir` (`name` in the failure message).
pub(crate) fn arm_vgf(
    converter: &std::path::Path,
    mlir: &std::path::Path,
    vgf: &std::path::Path,
    name: &str,
) {
    run_ok(
        Command::new(converter)
            .arg("-i")
            .arg(mlir)
            .arg("-o")
            .arg(vgf),
        &format!("{name}: model-converter"),
    );
}

/// The TOSA flatbuffer Arm's converter writes for the MLIR file `mlir`.
pub(crate) fn to_tosa(converter: &std::path::Path, mlir: &std::path::Path) -> Vec<u8> {
    let out = mlir.with_extension("tosa");
    run_ok(
        Command::new(converter)
            .arg("-i")
            .arg(mlir)
            .arg("-o")
            .arg(&out)
            .arg("--tosa-flatbuffer"),
        "model-converter --tosa-flatbuffer",
    );
    std::fs::read(out).unwrap()
}

#[test]
fn arms_vgf_dump_reads_our_files_as_we_do() {
    for (name, mlir, _) in cases() {
        let graph = tosa::mlir::parse(name, &mlir).unwrap();
        for (kind, model) in [
            ("compute-only", compute_only(&graph)),
            ("graphs", with_graphs(&graph)),
        ] {
            let dir = common::scratch();
            let file = dir.join(format!("{name}.vgf"));
            std::fs::write(&file, vgf::write(&model)).unwrap();
            let Some(arms) = vgf_dump(&file) else {
                return;
            };
            assert_eq!(arms, vgf::file::dump::dump(&model), "{name} ({kind})");
        }
    }
}

#[test]
fn binding_i_is_operand_i() {
    // Arm's converter binds resource i to the i-th deduplicated segment input: with swapped
    // operands or one operand twice the shader reads the wrong buffers; we bind the operands
    let graph = tosa::mlir::parse("swapped", &cases()[6].1).unwrap();
    let model = compute_only(&graph);
    let set = &model.sequence.segments[0].set_infos[0].bindings;
    let mrt = |b: u32| set.iter().find(|s| s.binding == b).unwrap().mrt_index;
    assert_eq!((mrt(0), mrt(1)), (1, 0), "operand 0 is %arg1 (resource 1)");
    let graph = tosa::mlir::parse("duplicated", &cases()[5].1).unwrap();
    let model = compute_only(&graph);
    let set = &model.sequence.segments[0].set_infos[0].bindings;
    assert_eq!(set.len(), 3, "both uses of %arg0 keep a binding: {set:?}");
}
