//! VGF: custom-op attributes, partitioning against Arm's own converter, our files read by Arm's
//! `vgf_dump`, the reader under truncation and mutation, and compute-only VGFs run on the GPU
//! (lavapipe in CI, both shader paths) against a CPU reference.
//!
//! Arm's tools come from the oracle virtualenv that `cargo xtask test` fills (next to
//! `FPSHADER_NCNN_PYTHON`); without it the oracle tests fail unless `FPSHADER_SKIP_ARM=1`.
//! Every VGF loaded here carries SPIR-V from glslang or Arm's converter, which is what
//! `VgfModel::load`'s safety promise asks for.
#![cfg(not(fpshader_emulated))]

mod common;

use std::path::PathBuf;
use std::process::Command;

use fpshader::vgf::VgfModel;
use fpshader_build::vgf::{self, ModuleType, convert, custom_op, partition, tosa};
use fpshader_build::{Compiler, Settings};
use rayon::prelude::*;

const GLSL_AXPY: &str = "#version 450\n\
layout(local_size_x = 16, local_size_y = 1, local_size_z = 1) in;\n\
layout(set=0, binding=0) readonly buffer A { float a[]; };\n\
layout(set=0, binding=1) readonly buffer B { float b[]; };\n\
layout(set=0, binding=2) writeonly buffer C { float c[]; };\n\
void main() { uint i = gl_GlobalInvocationID.x; if (i < 64u) c[i] = a[i] * 2.0 + b[i]; }\n";

/// The same shader in HLSL (shaderc's HLSL front end compiles it ahead of time).
const HLSL_AXPY: &str = "[[vk::binding(0, 0)]] StructuredBuffer<float> A;\n\
[[vk::binding(1, 0)]] StructuredBuffer<float> B;\n\
[[vk::binding(2, 0)]] RWStructuredBuffer<float> C;\n\
[numthreads(16, 1, 1)]\n\
void main(uint3 id : SV_DispatchThreadID) { if (id.x < 64) C[id.x] = A[id.x] * 2.0 + B[id.x]; }\n";

/// `implementation_attrs` for a shader with `inputs` storage-buffer operands and one result.
fn attrs(code: Option<&str>, inputs: usize) -> String {
    let mut m = serde_json::json!({"entry_point": "main", "workgroup_sizes": [16, 1, 1]});
    if let Some(code) = code {
        m["shader_language"] = "GLSL".into();
        m["shader_code"] = code.into();
    }
    let mut res = |key: String, binding: usize| {
        m[format!("{key}_binding")] = binding.into();
        m[format!("{key}_descriptorset")] = 0.into();
        m[format!("{key}_vkdescriptortype")] = "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER".into();
        m[format!("{key}_vkformat")] = "VK_FORMAT_R32_SFLOAT".into();
    };
    for i in 0..inputs {
        res(format!("input_{i}"), i);
    }
    res("output_0".into(), inputs);
    m.to_string()
}

/// A `tosa.custom` line: `%res = tosa.custom operands {…}`.
fn custom(res: &str, operands: &[&str], name: &str, code: Option<&str>) -> String {
    let json = attrs(code, operands.len())
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    let types = vec!["tensor<64xf32>"; operands.len()].join(", ");
    format!(
        "  {res} = tosa.custom {} {{domain_name = \"com.arm.VulkanCustomShader\", operator_name = \"{name}\", implementation_attrs = \"{json}\"}} : ({types}) -> tensor<64xf32>\n",
        operands.join(", ")
    )
}

fn func(args: usize, body: &str, ret: &str) -> String {
    func_returning(args, body, &[ret])
}

/// [`func`] returning several values (one without parentheses).
fn func_returning(args: usize, body: &str, rets: &[&str]) -> String {
    let params: Vec<String> = (0..args)
        .map(|i| format!("%arg{i}: tensor<64xf32>"))
        .collect();
    let types = vec!["tensor<64xf32>"; rets.len()].join(", ");
    let result = if rets.len() == 1 {
        types.clone()
    } else {
        format!("({types})")
    };
    format!(
        "func.func @main({}) -> {result} {{\n{body}  return {} : {types}\n}}\n",
        params.join(", "),
        rets.join(", ")
    )
}

fn unary(res: &str, op: &str, x: &str) -> String {
    format!("  {res} = tosa.{op} {x} : (tensor<64xf32>) -> tensor<64xf32>\n")
}

/// The partitioning cases: (name, MLIR, expected partition kinds).
fn cases() -> Vec<(&'static str, String, &'static str)> {
    let g = Some(GLSL_AXPY);
    let k = " = \"tosa.const\"() <{values = dense<0.5> : tensor<64xf32>}> : () -> tensor<64xf32>\n";
    vec![
        (
            "single",
            func(2, &custom("%0", &["%arg0", "%arg1"], "axpy", g), "%0"),
            "S",
        ),
        (
            "ml_shader_ml",
            func(
                2,
                &(unary("%0", "abs", "%arg0")
                    + &custom("%1", &["%0", "%arg1"], "axpy", g)
                    + &unary("%2", "exp", "%1")),
                "%2",
            ),
            "MSM",
        ),
        (
            "two_shaders",
            func(
                2,
                &(custom("%0", &["%arg0", "%arg1"], "first", g)
                    + &custom("%1", &["%0", "%arg1"], "second", g)),
                "%1",
            ),
            "SS",
        ),
        (
            "shader_feeds_two",
            func(
                2,
                &(custom("%0", &["%arg0", "%arg1"], "axpy", g)
                    + &unary("%1", "abs", "%0")
                    + &unary("%2", "exp", "%0")
                    + "  %3 = tosa.add %1, %2 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>\n"),
                "%3",
            ),
            "SM",
        ),
        (
            "constant_to_shader",
            func(
                1,
                &(format!("  %k{k}") + &custom("%0", &["%arg0", "%k"], "axpy", g)),
                "%0",
            ),
            "MS",
        ),
        (
            "duplicated",
            func(1, &custom("%0", &["%arg0", "%arg0"], "axpy", g), "%0"),
            "S",
        ),
        (
            "swapped",
            func(2, &custom("%0", &["%arg1", "%arg0"], "axpy", g), "%0"),
            "S",
        ),
        (
            "placeholder",
            func(2, &custom("%0", &["%arg0", "%arg1"], "axpy", None), "%0"),
            "S",
        ),
        // int8 tables around a shader: the crossing values as buffer and tensor aliases
        (
            "int8_tables_around_shader",
            {
                let table: Vec<String> = (0..256)
                    .map(|k| ((k * 37) % 256 - 128).to_string())
                    .collect();
                let shader = custom("%1", &["%0"], "s", None)
                    .replace("VK_FORMAT_R32_SFLOAT", "VK_FORMAT_R8_SINT")
                    .replace("tensor<64xf32>", "tensor<64xi8>");
                format!(
                    "func.func @main(%arg0: tensor<64xi8>) -> tensor<64xi8> {{
  %t = \"tosa.const\"() <{{values = dense<[{}]> : tensor<256xi8>}}> : () -> tensor<256xi8>
  %0 = tosa.table %arg0, %t : (tensor<64xi8>, tensor<256xi8>) -> tensor<64xi8>
{shader}  %2 = tosa.table %1, %t : (tensor<64xi8>, tensor<256xi8>) -> tensor<64xi8>
  return %2 : tensor<64xi8>
}}
",
                    table.join(", ")
                )
            },
            "MSM",
        ),
        // a value of the first ML partition read again after the shader (hoisted across it)
        (
            "hoisted",
            func(
                1,
                &(unary("%0", "abs", "%arg0")
                    + &custom("%1", &["%0"], "s", None)
                    + &unary("%2", "exp", "%0")
                    + "  %3 = tosa.add %1, %2 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>\n"),
                "%3",
            ),
            "MSM",
        ),
        // model inputs returned as outputs: an OUTPUT tensor in the input's alias group, the
        // outputs' resources last in output order
        (
            "passthrough_shader",
            func_returning(
                2,
                &custom("%0", &["%arg0", "%arg1"], "axpy", g),
                &["%arg0", "%0"],
            ),
            "S",
        ),
        (
            "passthrough_ml",
            func_returning(1, &unary("%0", "abs", "%arg0"), &["%0", "%arg0"]),
            "M",
        ),
        (
            "passthrough_chain",
            func_returning(
                2,
                &(unary("%0", "abs", "%arg0")
                    + &custom("%1", &["%0", "%arg1"], "axpy", g)
                    + &unary("%2", "exp", "%1")),
                &["%arg1", "%2", "%arg0"],
            ),
            "MSM",
        ),
    ]
}

fn arm_tool(name: &str) -> Option<PathBuf> {
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

fn vgf_dump(file: &std::path::Path) -> Option<serde_json::Value> {
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

fn compiler() -> Compiler {
    Compiler::new(Settings::default()).unwrap()
}

fn compute_only(graph: &tosa::Graph) -> vgf::Vgf {
    convert::convert(graph, &compiler(), convert::ConvertOptions::default())
        .unwrap()
        .vgf
}

/// ML partitions as SPV_ARM_graph segments, as Arm's converter writes them.
fn with_graphs(graph: &tosa::Graph) -> vgf::Vgf {
    let options = convert::ConvertOptions {
        compute_only: false,
        ..Default::default()
    };
    convert::convert(graph, &compiler(), options).unwrap().vgf
}

/// What must agree between our graph-segment files and Arm's converter's: the resource table
/// (categories, descriptor types, formats, shapes, alias groups), and per segment its type and
/// the resources it binds (binding numbers are ours to choose).
fn structure(dump: &serde_json::Value, bindings: bool) -> serde_json::Value {
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
fn partition_kinds(graph: &tosa::Graph) -> String {
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
        let mine = vgf::dump::dump(&with_graphs(&graph));
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
fn arm_vgf(converter: &std::path::Path, mlir: &std::path::Path, vgf: &std::path::Path, name: &str) {
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
fn to_tosa(converter: &std::path::Path, mlir: &std::path::Path) -> Vec<u8> {
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
            assert_eq!(arms, vgf::dump::dump(&model), "{name} ({kind})");
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

#[test]
fn attribute_errors_name_op_and_field() {
    let good = attrs(Some(GLSL_AXPY), 2);
    assert!(custom_op::parse("k", &good, 2, 1).is_ok());
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
        f(&mut v);
        custom_op::parse("k", &v.to_string(), 2, 1)
            .unwrap_err()
            .to_string()
    };
    let cases: Vec<(String, &str)> = vec![
        (
            edit(&|v| v["input_1_vkformat"] = "VK_FORMAT_R32_FLOAT".into()),
            "input_1_vkformat: unknown Vulkan name `VK_FORMAT_R32_FLOAT`",
        ),
        (
            edit(&|v| {
                v.as_object_mut().unwrap().remove("input_0_binding");
            }),
            "input_0_binding: required",
        ),
        (
            edit(&|v| {
                let m = v.as_object_mut().unwrap();
                for f in ["binding", "descriptorset", "vkdescriptortype", "vkformat"] {
                    let x = m.remove(&format!("input_1_{f}")).unwrap();
                    m.insert(format!("input_2_{f}"), x);
                }
            }),
            "input_1 is missing",
        ),
        (
            edit(&|v| v["output_0_binding"] = 1.into()),
            "set 0 binding 1 is already used by input_1",
        ),
        (
            edit(&|v| {
                v.as_object_mut().unwrap().remove("shader_code");
            }),
            "shader_language is given without shader_code",
        ),
        (
            edit(&|v| v["workgroup_sizes"] = serde_json::json!([16, 0, 1])),
            "workgroup_sizes: expected 3 integers >= 1",
        ),
        (
            edit(&|v| v["input_0_vkdescriptortype"] = "VK_DESCRIPTOR_TYPE_BUFFER".into()),
            "unknown Vulkan name",
        ),
    ];
    for (got, want) in cases {
        assert!(got.starts_with("custom shader op `k`: "), "{got}");
        assert!(got.contains(want), "`{got}` should contain `{want}`");
    }
    let count = custom_op::parse("k", &good, 3, 1).unwrap_err().to_string();
    assert!(
        count.contains("the op has 3 operands but the attributes describe 2"),
        "{count}"
    );
}

#[test]
fn shader_must_match_its_attributes() {
    let mlir = func(
        2,
        &custom(
            "%0",
            &["%arg0", "%arg1"],
            "axpy",
            Some(&GLSL_AXPY.replace("local_size_x = 16", "local_size_x = 32")),
        ),
        "%0",
    );
    // another declared local size: workgroup_sizes is the workgroup count, as Arm's runtime
    // reads it, with a note saying so
    let graph = tosa::mlir::parse("m", &mlir).unwrap();
    let converted =
        convert::convert(&graph, &compiler(), convert::ConvertOptions::default()).unwrap();
    let shader = |v: &vgf::Vgf| {
        let s = (v.sequence.segments.iter())
            .find(|s| v.modules[s.module_index as usize].name == "axpy")
            .unwrap();
        s.dispatch_shape.clone()
    };
    assert_eq!(shader(&converted.vgf), [16, 1, 1]);
    assert!(
        converted.notes.len() == 1 && converted.notes[0].contains("read as the workgroup count"),
        "{:?}",
        converted.notes
    );
    // the declared size: the local size, the count from result 0's 64 values, no note
    let same = func(
        2,
        &custom("%0", &["%arg0", "%arg1"], "axpy", Some(GLSL_AXPY)),
        "%0",
    );
    let converted = convert::convert(
        &tosa::mlir::parse("m", &same).unwrap(),
        &compiler(),
        Default::default(),
    )
    .unwrap();
    assert_eq!(shader(&converted.vgf), [4, 1, 1]);
    assert!(converted.notes.is_empty(), "{:?}", converted.notes);
    // a specializable size (local_size_x_id): the local size, written into its default
    let by_id = GLSL_AXPY.replace(
        "local_size_x = 16, local_size_y = 1, local_size_z = 1",
        "local_size_x_id = 0",
    );
    let mlir = func(
        2,
        &custom("%0", &["%arg0", "%arg1"], "axpy", Some(&by_id)),
        "%0",
    );
    let converted = convert::convert(
        &tosa::mlir::parse("m", &mlir).unwrap(),
        &compiler(),
        Default::default(),
    )
    .unwrap();
    assert_eq!(shader(&converted.vgf), [4, 1, 1]);
    let module = (converted.vgf.modules.iter())
        .find(|m| m.name == "axpy")
        .unwrap();
    let vgf::ModuleCode::Spirv(words) = &module.code else {
        panic!("no SPIR-V");
    };
    let r = fpshader_build::reflect::reflect(words).unwrap();
    assert_eq!(r.local_size.default_size(), Some([16, 1, 1]));
    assert!(
        converted.notes.len() == 1 && converted.notes[0].contains("local_size_x_id"),
        "{:?}",
        converted.notes
    );
    let bad = func(
        2,
        &custom(
            "%0",
            &["%arg0", "%arg1"],
            "axpy",
            Some("#version 450\nvoid main() { undefined_call(); }\n"),
        ),
        "%0",
    );
    let err = convert::convert(
        &tosa::mlir::parse("m", &bad).unwrap(),
        &compiler(),
        Default::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("axpy") && err.contains(":2:"),
        "the GLSL error names the op and line: {err}"
    );
}

#[test]
fn mlir_errors_name_line_and_column() {
    let err = tosa::mlir::parse("m.mlir", "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = tosa.abs %b : (tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "m.mlir:2:17: `%b` is used before it is defined"
    );
    let err = tosa::mlir::parse(
        "m.mlir",
        "func.func @main(%a: tensor<?xf32>) -> tensor<4xf32> {",
    )
    .unwrap_err();
    assert!(
        err.to_string().starts_with("m.mlir:1:21: dimension `?`"),
        "{err}"
    );
}

#[test]
fn reader_refuses_every_truncation_and_mutation_without_panicking() {
    let graph = tosa::mlir::parse("m", &cases()[4].1).unwrap();
    let bytes = vgf::write(&compute_only(&graph));
    assert_eq!(vgf::read(&bytes).unwrap(), compute_only(&graph));
    for len in 0..bytes.len() {
        let _ = vgf::read(&bytes[..len]);
    }
    let mut rng = common::Rng(0x5eed);
    for _ in 0..20_000 {
        let mut m = bytes.clone();
        for _ in 0..1 + (rng.next().abs() * 4.0) as usize {
            let at = ((rng.next().abs() * m.len() as f32) as usize).min(m.len() - 1);
            m[at] = (rng.next() * 255.0) as i32 as u8;
        }
        let _ = vgf::read(&m);
    }
    assert!(matches!(
        vgf::read(&bytes[..100]),
        Err(vgf::ReadError::TruncatedHeader { len: 100 })
    ));

    // the graph SPIR-V reader (and the lowering of what it reads), on our graph modules
    for (name, mlir) in ml_models() {
        let model = with_graphs(&tosa::mlir::parse(name, &mlir).unwrap());
        let vgf::ModuleCode::Spirv(words) = &model.modules[0].code else {
            panic!("{name}: no SPIR-V");
        };
        let entry = &model.modules[0].entry_point;
        let lower_all = |g: &tosa::Graph| {
            for op in g.ops.iter().filter(|op| op.kind() != "const") {
                let _ = vgf::lower::lower(g, op);
            }
        };
        for len in 0..words.len() {
            assert!(
                tosa::spirv::read(&words[..len], entry).is_err(),
                "{name}: cut at {len}"
            );
        }
        for _ in 0..5_000 {
            let mut m = words.clone();
            for _ in 0..1 + (rng.next().abs() * 3.0) as usize {
                let at = ((rng.next().abs() * m.len() as f32) as usize).min(m.len() - 1);
                let bits = (rng.next().abs() * 32.0) as u32 % 32;
                m[at] ^= 1 << bits;
            }
            if let Ok(module) = tosa::spirv::read(&m, entry) {
                lower_all(&module.graph);
            }
        }
    }

    // the TOSA flatbuffer reader, on a file Arm's converter wrote
    let Some(converter) = arm_tool("model-converter") else {
        return;
    };
    let dir = common::scratch();
    let mlir = dir.join("m.mlir");
    std::fs::write(&mlir, &ml_models()[0].1).unwrap();
    let bytes = to_tosa(&converter, &mlir);
    let whole = tosa::flatbuffer::parse("m.tosa", &bytes).unwrap();
    for len in 0..bytes.len() {
        // a cut into trailing padding still reads, and reads the same
        match tosa::flatbuffer::parse("m.tosa", &bytes[..len]) {
            Ok(graph) => assert_eq!(graph, whole, "cut at {len}"),
            Err(err) => assert!(err.to_string().starts_with("m.tosa: byte "), "{err}"),
        }
    }
    for _ in 0..20_000 {
        let mut m = bytes.clone();
        for _ in 0..1 + (rng.next().abs() * 4.0) as usize {
            let at = ((rng.next().abs() * m.len() as f32) as usize).min(m.len() - 1);
            m[at] = (rng.next() * 255.0) as i32 as u8;
        }
        let _ = tosa::flatbuffer::parse("m.tosa", &m);
    }
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytemuck::pod_collect_to_vec(bytes)
}

#[test]
fn compute_only_vgfs_run_on_the_gpu() {
    let a: Vec<f32> = (0..64).map(|i| (i as f32 - 30.0) / 7.0).collect();
    let b: Vec<f32> = (0..64).map(|i| (i as f32 * 0.37).sin()).collect();
    let bytes = |v: &[f32]| bytemuck::cast_slice::<f32, u8>(v).to_vec();
    let all = cases();
    type Reference<'a> = Box<dyn Fn(usize) -> f32 + 'a>;
    let checks: Vec<(usize, Reference)> = vec![
        (1, Box::new(|i| (a[i].abs() * 2.0 + b[i]).exp())),
        (2, Box::new(|i| (a[i] * 2.0 + b[i]) * 2.0 + b[i])),
        (
            3,
            Box::new(|i| {
                let s = a[i] * 2.0 + b[i];
                s.abs() + s.exp()
            }),
        ),
        (4, Box::new(|i| a[i] * 2.0 + 0.5)),
        (5, Box::new(|i| a[i] * 3.0)),
        (6, Box::new(|i| b[i] * 2.0 + a[i])),
    ];
    for ctx in common::gpu_contexts() {
        for (case, want) in &checks {
            let (name, mlir, _) = &all[*case];
            let file = vgf::write(&compute_only(&tosa::mlir::parse(name, mlir).unwrap()));
            let model = unsafe { VgfModel::load(&ctx, &file, &Default::default()) }.unwrap();
            let inputs: Vec<Vec<u8>> = [&a, &b][..model.input_names().len()]
                .iter()
                .map(|v| bytes(v))
                .collect();
            let views: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
            let got = f32s(&model.run(&ctx, &views).unwrap()[0]);
            let want: Vec<f32> = (0..64).map(want).collect();
            common::assert_close(&got, &want, 1e-5, &format!("{name} on {}", ctx.describe()));
        }
        // a placeholder runs with the shader supplied by operator name
        let (name, mlir, _) = &all[7];
        let model = compute_only(&tosa::mlir::parse(name, mlir).unwrap());
        assert!(matches!(model.modules[0].code, vgf::ModuleCode::None));
        let file = vgf::write(&model);
        let err = unsafe { VgfModel::load(&ctx, &file, &Default::default()) }
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("placeholder"), "{err}");
        let spirv = compiler()
            .compile_str("axpy", GLSL_AXPY, Default::default())
            .unwrap();
        let shaders = [("axpy".to_string(), spirv)].into_iter().collect();
        let model = unsafe { VgfModel::load(&ctx, &file, &shaders) }.unwrap();
        let got = f32s(&model.run(&ctx, &[&bytes(&a), &bytes(&b)]).unwrap()[0]);
        let want: Vec<f32> = (0..64).map(|i| a[i] * 2.0 + b[i]).collect();
        common::assert_close(&got, &want, 1e-5, "placeholder");
        // wrong input sizes are an error, not a panic
        let err = model
            .run(&ctx, &[&bytes(&a[..10]), &bytes(&b)])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("40 bytes given"), "{err}");
    }
}

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

/// numpy's side of the end-to-end test: `prepare` writes seeded inputs (`input_<i>.npy` for
/// the scenario runner, `.raw` for fpshader); `check` computes the model's outputs with numpy
/// and compares every `<run>.out<j>.npy|.raw` in the folder against them.
const NUMPY_CHECK: &str = r#"
import glob, json, os, sys
import numpy as np
d, model, mode = sys.argv[1], sys.argv[2], sys.argv[3]

def window(x, kh, kw, stride, pad, dil, fill):
    n, h, w, c = x.shape
    xp = np.pad(x, ((0, 0), (pad[0], pad[1]), (pad[2], pad[3]), (0, 0)), constant_values=fill)
    oh = (h - 1 + pad[0] + pad[1] - (kh - 1) * dil[0]) // stride[0] + 1
    ow = (w - 1 + pad[2] + pad[3] - (kw - 1) * dil[1]) // stride[1] + 1
    out = np.empty((n, oh, ow, kh, kw, c), np.float64)
    for ky in range(kh):
        for kx in range(kw):
            y, x0 = ky * dil[0], kx * dil[1]
            out[:, :, :, ky, kx, :] = xp[:, y:y + (oh - 1) * stride[0] + 1:stride[0],
                                         x0:x0 + (ow - 1) * stride[1] + 1:stride[1], :]
    return out

def conv2d(x, w, b, pad, stride, dil):
    return np.einsum('nyxhwc,ohwc->nyxo', window(x, w.shape[1], w.shape[2], stride, pad, dil, 0), w) + b

def depthwise(x, w, b, pad, stride, dil):
    r = np.einsum('nyxhwc,hwcm->nyxcm', window(x, w.shape[0], w.shape[1], stride, pad, dil, 0), w)
    return r.reshape(r.shape[:3] + (-1,)) + b

def max_pool(x, k, stride, pad):
    return window(x, k[0], k[1], stride, pad, (1, 1), -np.inf).max(axis=(3, 4))

def avg_pool(x, k, stride, pad):
    s = window(x, k[0], k[1], stride, pad, (1, 1), 0).sum(axis=(3, 4))
    return s / window(np.ones_like(x), k[0], k[1], stride, pad, (1, 1), 0).sum(axis=(3, 4))

def transpose_conv(x, w, b, out_pad, stride):
    n, ih, iw, _ = x.shape
    oc, kh, kw, _ = w.shape
    o = np.zeros((n, (ih - 1) * stride[0] + out_pad[0] + out_pad[1] + kh,
                  (iw - 1) * stride[1] + out_pad[2] + out_pad[3] + kw, oc))
    for iy in range(ih):
        for ix in range(iw):
            for ky in range(kh):
                for kx in range(kw):
                    o[:, iy * stride[0] + out_pad[0] + ky, ix * stride[1] + out_pad[2] + kx, :] += \
                        x[:, iy, ix, :] @ w[:, ky, kx, :].T
    return o + b

def apply_scale(v, m, s, dbl):
    r = 1 << (s - 1)
    if dbl and s > 31:
        r += (1 << 30) if v >= 0 else -(1 << 30)
    return (v * m + r) >> s

def resize(x, scale, offset, border, mode):
    n, ih, iw, c = x.shape
    syn, syd, sxn, sxd = scale
    oh = ((ih - 1) * syn - offset[0] + border[0]) // syd + 1
    ow = ((iw - 1) * sxn - offset[1] + border[1]) // sxd + 1
    out = np.zeros((n, oh, ow, c))
    cl = lambda v, hi: min(max(v, 0), hi - 1)
    for oy in range(oh):
        for ox in range(ow):
            y, xx = oy * syd + offset[0], ox * sxd + offset[1]
            iy, ix = y // syn, xx // sxn
            fy, fx = (y - iy * syn) / syn, (xx - ix * sxn) / sxn
            if mode == 'nearest':
                out[:, oy, ox] = x[:, cl(iy + (fy >= 0.5), ih), cl(ix + (fx >= 0.5), iw)]
            else:
                v = lambda a, b: x[:, cl(iy + a, ih), cl(ix + b, iw)]
                out[:, oy, ox] = v(0, 0) * (1 - fy) * (1 - fx) + v(0, 1) * (1 - fy) * fx + \
                    v(1, 0) * fy * (1 - fx) + v(1, 1) * fy * fx
    return out

def resize_int(x, scale, offset, border, mode):
    n, ih, iw, c = x.shape
    syn, syd, sxn, sxd = scale
    oh = ((ih - 1) * syn - offset[0] + border[0]) // syd + 1
    ow = ((iw - 1) * sxn - offset[1] + border[1]) // sxd + 1
    out = np.zeros((n, oh, ow, c), np.int64)
    cl = lambda v, hi: min(max(v, 0), hi - 1)
    for oy in range(oh):
        for ox in range(ow):
            y, xx = oy * syd + offset[0], ox * sxd + offset[1]
            iy, ix = y // syn, xx // sxn
            dy, dx = y - iy * syn, xx - ix * sxn
            if mode == 'nearest':
                out[:, oy, ox] = x[:, cl(iy + (2 * dy >= syn), ih), cl(ix + (2 * dx >= sxn), iw)]
            else:
                v = lambda a, b: x[:, cl(iy + a, ih), cl(ix + b, iw)]
                out[:, oy, ox] = v(0, 0) * (syn - dy) * (sxn - dx) + v(0, 1) * (syn - dy) * dx + \
                    v(1, 0) * dy * (sxn - dx) + v(1, 1) * dy * dx
    return out

TABLE = np.array([(k * 37) % 256 - 128 for k in range(256)])

def reference(i):
    if model == 'ops':
        c = np.tile(np.array([0.5, 1.5, 2.0, -1.0]), 16)
        return [(np.clip(i[0], -1, 30) * c).reshape(8, 8).T,
                conv2d(i[1], np.full((4, 3, 3, 3), 0.25), np.arange(4.0), (1, 1, 1, 1), (1, 1), (1, 1))]
    if model == 'pool':
        dw = depthwise(i[0], np.full((3, 3, 4, 2), 0.125), np.arange(8) * 0.1, (1, 1, 1, 1), (2, 2), (1, 1))
        k = np.array(MATMUL_B)
        return [max_pool(dw, (3, 3), (2, 2), (1, 1, 1, 1)), avg_pool(dw, (2, 2), (1, 1), (0, 1, 0, 1)),
                transpose_conv(i[1], np.full((5, 3, 3, 3), 0.5), np.ones(5), (0, 0, 0, 0), (2, 2)),
                i[2] @ k]
    if model == 'shader':
        return [np.exp(np.abs(i[0]) * 2 + i[1])]
    if model == 'glsl':
        return [np.exp(np.abs(i[0]) * 2 + i[1])]
    if model == 'hlsl':
        return [np.abs(i[0]) * 2 + i[1]]
    if model == 'passthrough':
        return [i[0], np.abs(i[0]) * 2 + i[1]]
    if model == 'sets':
        return [np.exp(np.abs(i[0]) * 2 + i[1])]
    if model == 'count':
        # four workgroups of 16: Arm's reading of workgroup_sizes [4, 1, 1]
        return [np.exp(np.abs(i[0]) * 2 + i[1] + 4)]
    if model == 'constant_shader':
        return [i[0] * 2 + 0.5]
    if model == 'shape_ops':
        import math
        x, y = i[0], i[1]
        return [x[1:3, 2:5], np.tile(x, (2, 2)), np.pad(x, ((1, 1), (2, 1)), constant_values=-2.5),
                np.concatenate([x, y], 1), x.sum(1, keepdims=True), x.max(0, keepdims=True),
                np.vectorize(math.erf)(x), y.min(1, keepdims=True), y.prod(0, keepdims=True)]
    if model == 'index_ops':
        x, y = i[0], i[1]
        idx, sidx = np.array([[4, 0, 2, 2], [1, 3, 0, 4]]), np.array([[4, 0, 2, 1], [1, 3, 0, 2]])
        g = np.stack([x[b][idx[b]] for b in range(2)])
        sc = x.copy()
        for b in range(2):
            sc[b][sidx[b]] = y[b]
        c = np.rint(x).astype(np.int32)
        return [np.argmax(x, 1).astype(np.int32), x[:, ::-1, :], g, sc, c, c.astype(np.float64)]
    if model == 'bool_ops':
        x, y = i[0], i[1]
        k = np.clip(x, 0, 1)
        e, g, ge = k == x, x > y, y >= k
        return [e, e & g, e | ge, g ^ ge, ~g, np.where(g, x, y)]
    if model == 'tensor_shader':
        return [i[0] * 2]
    if model == 'tensor_ml_shader_ml':
        return [np.exp(np.abs(i[0]) * 2)]
    if model == 'tensor_constant':
        return [np.full(64, 1.0)]
    if model == 'tensor_transpose':
        return [i[0].T]
    if model == 'tensor_bounds':
        o = np.zeros((8, 8))
        o[:, :4] = i[0][:, 4:]
        return [o]
    if model == 'resize':
        return [resize(i[0], (2, 1, 2, 1), (0, 0), (0, 0), 'bilinear'),
                resize(i[0], (4, 3, 5, 2), (1, -1), (1, -1), 'nearest')]
    if model == 'int_resize':
        x = i[0].astype(np.int64)
        return [resize_int(x, (2, 1, 2, 1), (0, 0), (0, 0), 'bilinear').astype(np.int32),
                resize_int(x, (4, 3, 5, 2), (1, -1), (1, -1), 'nearest').astype(np.int8)]
    if model == 'casts':
        x = np.float32(i[0] * 300)
        i8 = np.clip(np.rint(x), -128, 127).astype(np.int8)
        i32 = np.rint(x).astype(np.int64)
        return [i8, ((i32 + 128) % 256 - 128).astype(np.int8), i8.astype(np.float64),
                (i32 != 0).astype(np.int32), i[0].astype(np.float16), i[0].astype(np.float16).astype(np.float64)]
    if model == 'int_ops':
        x, y = i[0].astype(np.int64), i[1].astype(np.int64)
        i32 = lambda v: (np.asarray(v, np.int64) & 0xffffffff).astype(np.uint32).view(np.int32)
        return [i32(x & y), i32(x | y), i32(x ^ y), i32(~x), i32(x << 3), i32((x & 0xffffffff) >> 3),
                i32((x >> 3) + ((x >> 2) & 1)), i32(np.fix(x / 7)),
                np.array([32 - (int(v) & 0xffffffff).bit_length() for v in x], np.int32)]
    if model == 'fp16_ops':
        x, y = i[0], i[1]
        h = lambda v: np.asarray(v).astype(np.float16)
        return [h(x + y), h(1 / (1 + np.exp(-x))), h(x.T), h(y.sum(1, keepdims=True)), h(x * y),
                h((x @ x.T)[None])]
    if model == 'int8_conv':
        x, a = i[0], i[1]
        pat = lambda n, mul, mod, shape: (np.arange(n) * mul % mod - mod // 2).reshape(shape).astype(np.float64)
        w = pat(144, 37, 11, (4, 3, 3, 4))
        dw = pat(72, 29, 13, (3, 3, 4, 2))
        mb = pat(24, 7, 9, (1, 6, 4))
        conv = conv2d(x - 2, w + 1, np.array([10, -20, 30, 0]), (1, 1, 1, 1), (1, 1), (1, 1))
        dwo = depthwise(x - 2, dw + 1, np.arange(1, 9), (1, 0, 1, 0), (2, 2), (1, 1))
        mm = (a - 1) @ mb
        h, wd, c = x.shape[1:]
        avg = np.zeros(x.shape)
        for yy in range(h):
            for xx in range(wd):
                for ch in range(c):
                    vals = [int(x[0, iy, ix, ch]) - 1 for iy in range(yy - 1, yy + 2)
                            for ix in range(xx - 1, xx + 2) if 0 <= iy < h and 0 <= ix < wd]
                    k = 0 if len(vals) == 1 else (len(vals) - 1).bit_length()
                    m = (((1 << 30) + 1) << k) // len(vals)
                    avg[0, yy, xx, ch] = min(max(apply_scale(sum(vals), m, 30 + k, False) - 3, -128), 127)
        mx = max_pool(x, (2, 2), (2, 2), (0, 0, 0, 0))
        tw = pat(32, 5, 7, (2, 2, 2, 4))
        tc = transpose_conv(x - 2, tw + 1, np.array([5, -5]), (0, 0, 0, 0), (2, 2))
        return [conv.astype(np.int32), dwo.astype(np.int32), mm.astype(np.int32), avg.astype(np.int8),
                mx.astype(np.int8), tc.astype(np.int32)]
    if model == 'int8_ops':
        scale = apply_scale
        x = [int(v) for v in i[0]]
        a = [scale(v - 3, 1073741824, 31, False) - 7 for v in x]
        out = [min(max(scale(v, 1518500250, 33, True) - 5, -128), 127) for v in a]
        return [np.array(out, np.int8), np.array([(v * v + 4) >> 3 for v in a], np.int32)]
    if model == 'fft':
        f = np.fft.fft2(np.abs(i[0]) + 1j * i[1])
        g = np.fft.ifft2(i[0] + 1j * i[1]) * 32
        r = np.fft.rfft2(i[2])
        return [f.real, f.imag, g.real, g.imag, r.real, r.imag]
    if model == 'image_storage':
        return [i[0] * 2]
    if model == 'image_sampled':
        a = np.abs(i[0][0])
        t = np.stack([np.stack([a[(y + 2) % 4, min(x + 1, 3)] for x in range(4)]) for y in range(4)])
        return [np.exp(t * 3)[None]]
    if model == 'image_linear':
        a = np.abs(i[0][0]).astype(np.float16).astype(np.float64)
        t = np.stack([np.stack([(a[y, x] + a[y, min(x + 1, 3)]) / 2 for x in range(4)]) for y in range(4)])
        # the shader's fp16 image rounds t / 2 once more (to nearest or toward zero, as Vulkan
        # lets a device convert), within the fp16 tolerance
        return [np.exp(t * 0.5).astype(np.float16)[None]]
    if model == 'fft_chain':
        return [32 * (i[0] + i[1])]
    if model == 'table':
        return [TABLE[i[0].astype(np.int64) + 128].astype(np.int8)]
    raise SystemExit('unknown model ' + model)

if mode == 'prepare':
    rng = np.random.default_rng(7)
    for n, shape in enumerate(json.loads(sys.argv[4])):
        if model in ('table', 'int8_ops', 'int8_conv', 'int_resize'):
            x = rng.integers(-128, 128, shape).astype(np.int8)
        elif model == 'int_ops':
            x = rng.integers(-100000, 100000, shape).astype(np.int32)
        elif model in ('fp16_ops', 'image_linear'):
            x = rng.uniform(-1, 1, shape).astype(np.float16)
        else:
            x = rng.uniform(-1, 1, shape).astype(np.float32)
        np.save(os.path.join(d, 'input_%d.npy' % n), x)
        x.tofile(os.path.join(d, 'input_%d.raw' % n))
    sys.exit(0)

inputs = [np.load(f).astype(np.float64) for f in sorted(glob.glob(os.path.join(d, 'input_*.npy')))]
refs = reference(inputs)
runs = sys.argv[4:]
bad = 0
for run in runs:
    for j, ref in enumerate(refs):
        rt = np.asarray(ref).dtype
        dtype = np.int8 if rt == np.int8 else np.uint8 if rt.kind == 'b' else np.int32 if rt.kind in 'iu' \
            else np.float16 if rt == np.float16 else np.float32
        files = glob.glob(os.path.join(d, '%s.out%d.*' % (run, j)))
        if len(files) != 1:
            print('%s: output %d missing' % (run, j)); bad += 1; continue
        f = files[0]
        got = np.load(f) if f.endswith('.npy') else np.fromfile(f, dtype)
        if run.endswith('-cli'):
            got = got.astype(dtype)  # `fpshader run` writes float32 values
        if got.dtype != dtype:
            got = got.view(dtype)  # the scenario runner writes buffers as bytes
        if got.size != ref.size:
            print('%s: output %d has %d values, numpy %d' % (run, j, got.size, ref.size)); bad += 1; continue
        ref = ref.astype(np.float64)
        err = np.abs(got.reshape(ref.shape).astype(np.float64) - ref).max() / max(1.0, np.abs(ref).max())
        print('%s output %d %s: max relative error %.2e' % (run, j, ref.shape, err))
        # fp16 results: each rounded once, by us and by numpy; a sum rounded apart by one unit
        bad += err > (2e-3 if dtype == np.float16 else 1e-4)
sys.exit(1 if bad else 0)
"#;

/// The second matmul operand of the `pool` model, as MLIR writes it and numpy reads it.
const MATMUL_B: &str = "[[[1.0, 0.0, -1.0], [0.5, 0.5, 0.5], [2.0, -2.0, 0.0], [0.0, 1.0, 0.0], \
                        [-1.0, 0.25, 3.0], [1.0, 1.0, 1.0]]]";

/// ML-only models exercising every lowering the end-to-end test checks: (name, MLIR).
fn ml_models() -> Vec<(&'static str, String)> {
    let c: Vec<&str> = ["0.5", "1.5", "2.0", "-1.0"].repeat(16);
    let ops = format!(
        "func.func @main(%arg0: tensor<64xf32>, %arg1: tensor<1x8x8x3xf32>) -> (tensor<8x8xf32>, tensor<1x8x8x4xf32>) {{
  %c = \"tosa.const\"() <{{values = dense<[{}]> : tensor<64xf32>}}> : () -> tensor<64xf32>
  %1 = tosa.clamp %arg0 {{min_val = -1.0 : f32, max_val = 30.0 : f32}} : (tensor<64xf32>) -> tensor<64xf32>
  %shift = \"tosa.const\"() <{{values = dense<0> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %2 = tosa.mul %1, %c, %shift : (tensor<64xf32>, tensor<64xf32>, tensor<1xi8>) -> tensor<64xf32>
  %s = tosa.const_shape {{values = dense<[8, 8]> : tensor<2xindex>}} : () -> !tosa.shape<2>
  %3 = tosa.reshape %2, %s : (tensor<64xf32>, !tosa.shape<2>) -> tensor<8x8xf32>
  %4 = tosa.transpose %3 {{perms = array<i32: 1, 0>}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %w = \"tosa.const\"() <{{values = dense<0.25> : tensor<4x3x3x3xf32>}}> : () -> tensor<4x3x3x3xf32>
  %b = \"tosa.const\"() <{{values = dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>}}> : () -> tensor<4xf32>
  %zp = \"tosa.const\"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %5 = tosa.conv2d %arg1, %w, %b, %zp, %zp {{acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x4xf32>
  return %4, %5 : tensor<8x8xf32>, tensor<1x8x8x4xf32>
}}
",
        c.join(", ")
    );
    let pool = format!(
        "func.func @main(%arg0: tensor<1x9x9x4xf32>, %arg1: tensor<1x4x4x3xf32>, %arg2: tensor<1x4x6xf32>) -> (tensor<1x3x3x8xf32>, tensor<1x5x5x8xf32>, tensor<1x9x9x5xf32>, tensor<1x4x3xf32>) {{
  %zp = \"tosa.const\"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %w = \"tosa.const\"() <{{values = dense<0.125> : tensor<3x3x4x2xf32>}}> : () -> tensor<3x3x4x2xf32>
  %b = \"tosa.const\"() <{{values = dense<[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]> : tensor<8xf32>}}> : () -> tensor<8xf32>
  %d = tosa.depthwise_conv2d %arg0, %w, %b, %zp, %zp {{acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>}} : (tensor<1x9x9x4xf32>, tensor<3x3x4x2xf32>, tensor<8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x5x5x8xf32>
  %m = tosa.max_pool2d %d {{kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>}} : (tensor<1x5x5x8xf32>) -> tensor<1x3x3x8xf32>
  %a = tosa.avg_pool2d %d, %zp, %zp {{acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 1, 0, 1>, stride = array<i64: 1, 1>}} : (tensor<1x5x5x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x5x5x8xf32>
  %w2 = \"tosa.const\"() <{{values = dense<0.5> : tensor<5x3x3x3xf32>}}> : () -> tensor<5x3x3x3xf32>
  %b2 = \"tosa.const\"() <{{values = dense<1.0> : tensor<5xf32>}}> : () -> tensor<5xf32>
  %t = tosa.transpose_conv2d %arg1, %w2, %b2, %zp, %zp {{acc_type = f32, out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>}} : (tensor<1x4x4x3xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x9x9x5xf32>
  %k = \"tosa.const\"() <{{values = dense<{MATMUL_B}> : tensor<1x6x3xf32>}}> : () -> tensor<1x6x3xf32>
  %mm = tosa.matmul %arg2, %k, %zp, %zp : (tensor<1x4x6xf32>, tensor<1x6x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  return %m, %a, %t, %mm : tensor<1x3x3x8xf32>, tensor<1x5x5x8xf32>, tensor<1x9x9x5xf32>, tensor<1x4x3xf32>
}}
"
    );
    let table: Vec<String> = (0..256)
        .map(|k| ((k * 37) % 256 - 128).to_string())
        .collect();
    let table = format!(
        "func.func @main(%arg0: tensor<64xi8>) -> tensor<64xi8> {{
  %t = \"tosa.const\"() <{{values = dense<[{}]> : tensor<256xi8>}}> : () -> tensor<256xi8>
  %0 = tosa.table %arg0, %t : (tensor<64xi8>, tensor<256xi8>) -> tensor<64xi8>
  return %0 : tensor<64xi8>
}}
",
        table.join(", ")
    );
    // data movement, reductions and erf (TOSA 1.0's shape operands as `tosa.const_shape`)
    let shape_ops = "func.func @main(%arg0: tensor<4x6xf32>, %arg1: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<8x12xf32>, tensor<6x9xf32>, tensor<4x9xf32>, tensor<4x1xf32>, tensor<1x6xf32>, tensor<4x6xf32>, tensor<4x1xf32>, tensor<1x3xf32>) {
  %start = tosa.const_shape {values = dense<[1, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %size = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.slice %arg0, %start, %size : (tensor<4x6xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<2x3xf32>
  %m = tosa.const_shape {values = dense<[2, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %1 = tosa.tile %arg0, %m : (tensor<4x6xf32>, !tosa.shape<2>) -> tensor<8x12xf32>
  %p = tosa.const_shape {values = dense<[1, 1, 2, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %pc = \"tosa.const\"() <{values = dense<-2.5> : tensor<1xf32>}> : () -> tensor<1xf32>
  %2 = tosa.pad %arg0, %p, %pc : (tensor<4x6xf32>, !tosa.shape<4>, tensor<1xf32>) -> tensor<6x9xf32>
  %3 = tosa.concat %arg0, %arg1 {axis = 1 : i32} : (tensor<4x6xf32>, tensor<4x3xf32>) -> tensor<4x9xf32>
  %4 = tosa.reduce_sum %arg0 {axis = 1 : i32} : (tensor<4x6xf32>) -> tensor<4x1xf32>
  %5 = tosa.reduce_max %arg0 {axis = 0 : i32} : (tensor<4x6xf32>) -> tensor<1x6xf32>
  %6 = tosa.erf %arg0 : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %7 = tosa.reduce_min %arg1 {axis = 1 : i32} : (tensor<4x3xf32>) -> tensor<4x1xf32>
  %8 = tosa.reduce_product %arg1 {axis = 0 : i32} : (tensor<4x3xf32>) -> tensor<1x3xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<2x3xf32>, tensor<8x12xf32>, tensor<6x9xf32>, tensor<4x9xf32>, tensor<4x1xf32>, tensor<1x6xf32>, tensor<4x6xf32>, tensor<4x1xf32>, tensor<1x3xf32>
}
".to_string();
    // indexing and casts: i32 results, indices and casts both ways
    let index_ops = "func.func @main(%arg0: tensor<2x5x3xf32>, %arg1: tensor<2x4x3xf32>) -> (tensor<2x3xi32>, tensor<2x5x3xf32>, tensor<2x4x3xf32>, tensor<2x5x3xf32>, tensor<2x5x3xi32>, tensor<2x5x3xf32>) {
  %0 = tosa.argmax %arg0 {axis = 1 : i32} : (tensor<2x5x3xf32>) -> tensor<2x3xi32>
  %1 = tosa.reverse %arg0 {axis = 1 : i32} : (tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  %idx = \"tosa.const\"() <{values = dense<[[4, 0, 2, 2], [1, 3, 0, 4]]> : tensor<2x4xi32>}> : () -> tensor<2x4xi32>
  %2 = tosa.gather %arg0, %idx : (tensor<2x5x3xf32>, tensor<2x4xi32>) -> tensor<2x4x3xf32>
  %sidx = \"tosa.const\"() <{values = dense<[[4, 0, 2, 1], [1, 3, 0, 2]]> : tensor<2x4xi32>}> : () -> tensor<2x4xi32>
  %3 = tosa.scatter %arg0, %sidx, %arg1 : (tensor<2x5x3xf32>, tensor<2x4xi32>, tensor<2x4x3xf32>) -> tensor<2x5x3xf32>
  %4 = tosa.cast %arg0 : (tensor<2x5x3xf32>) -> tensor<2x5x3xi32>
  %5 = tosa.cast %4 : (tensor<2x5x3xi32>) -> tensor<2x5x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3xi32>, tensor<2x5x3xf32>, tensor<2x4x3xf32>, tensor<2x5x3xf32>, tensor<2x5x3xi32>, tensor<2x5x3xf32>
}
".to_string();
    vec![
        ("ops", ops),
        ("pool", pool),
        ("table", table),
        ("shape_ops", shape_ops),
        ("index_ops", index_ops),
        ("bool_ops", BOOL_OPS.to_string()),
        ("resize", RESIZE.to_string()),
        ("int_resize", INT_RESIZE.to_string()),
        ("int8_ops", INT8_OPS.to_string()),
        ("int8_conv", int8_conv()),
        ("fp16_ops", FP16_OPS.to_string()),
        ("int_ops", INT_OPS.to_string()),
        ("casts", CASTS.to_string()),
        ("fft", FFT.to_string()),
        ("fft_chain", FFT_CHAIN.to_string()),
    ]
}

/// fft2d forward (of a computed value) and inverse (no normalization), rfft2d (W/2 + 1
/// columns), each result a model output.
const FFT: &str = "func.func @main(%arg0: tensor<2x4x8xf32>, %arg1: tensor<2x4x8xf32>, %arg2: tensor<1x8x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x8x5xf32>, tensor<1x8x5xf32>) {
  %a = tosa.abs %arg0 : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %0, %1 = tosa.fft2d %a, %arg1 {inverse = false} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>)
  %2, %3 = tosa.fft2d %arg0, %arg1 {inverse = true, local_bound = true} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>)
  %4, %5 = tosa.rfft2d %arg2 : (tensor<1x8x8xf32>) -> (tensor<1x8x5xf32>, tensor<1x8x5xf32>)
  return %0, %1, %2, %3, %4, %5 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x8x5xf32>, tensor<1x8x5xf32>
}
";

/// fft2d's results fed on: through the inverse (H·W times the input) and added.
const FFT_CHAIN: &str = "func.func @main(%arg0: tensor<2x4x8xf32>, %arg1: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0, %1 = tosa.fft2d %arg0, %arg1 {inverse = false} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>)
  %2, %3 = tosa.fft2d %0, %1 {inverse = true} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>)
  %4 = tosa.add %2, %3 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %4 : tensor<2x4x8xf32>
}
";

/// Casts between f32, fp16, i32, int8 and booleans: rounding ties to even, saturating from
/// floats, narrowing integers to their low bits.
const CASTS: &str = "func.func @main(%arg0: tensor<64xf32>) -> (tensor<64xi8>, tensor<64xi8>, tensor<64xf32>, tensor<64xi32>, tensor<64xf16>, tensor<64xf32>) {
  %k = \"tosa.const\"() <{values = dense<300.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = \"tosa.const\"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %x = tosa.mul %arg0, %k, %shift : (tensor<64xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<64xf32>
  %0 = tosa.cast %x : (tensor<64xf32>) -> tensor<64xi8>
  %i = tosa.cast %x : (tensor<64xf32>) -> tensor<64xi32>
  %1 = tosa.cast %i : (tensor<64xi32>) -> tensor<64xi8>
  %2 = tosa.cast %0 : (tensor<64xi8>) -> tensor<64xf32>
  %b = tosa.cast %i : (tensor<64xi32>) -> tensor<64xi1>
  %3 = tosa.cast %b : (tensor<64xi1>) -> tensor<64xi32>
  %4 = tosa.cast %arg0 : (tensor<64xf32>) -> tensor<64xf16>
  %5 = tosa.cast %4 : (tensor<64xf16>) -> tensor<64xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<64xi8>, tensor<64xi8>, tensor<64xf32>, tensor<64xi32>, tensor<64xf16>, tensor<64xf32>
}
";

/// i32 bit operations: and/or/xor/not, the three shifts (the arithmetic one rounded), intdiv and
/// clz.
const INT_OPS: &str = "func.func @main(%arg0: tensor<64xi32>, %arg1: tensor<64xi32>) -> (tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>) {
  %s = \"tosa.const\"() <{values = dense<3> : tensor<1xi32>}> : () -> tensor<1xi32>
  %d = \"tosa.const\"() <{values = dense<7> : tensor<1xi32>}> : () -> tensor<1xi32>
  %0 = tosa.bitwise_and %arg0, %arg1 : (tensor<64xi32>, tensor<64xi32>) -> tensor<64xi32>
  %1 = tosa.bitwise_or %arg0, %arg1 : (tensor<64xi32>, tensor<64xi32>) -> tensor<64xi32>
  %2 = tosa.bitwise_xor %arg0, %arg1 : (tensor<64xi32>, tensor<64xi32>) -> tensor<64xi32>
  %3 = tosa.bitwise_not %arg0 : (tensor<64xi32>) -> tensor<64xi32>
  %4 = tosa.logical_left_shift %arg0, %s : (tensor<64xi32>, tensor<1xi32>) -> tensor<64xi32>
  %5 = tosa.logical_right_shift %arg0, %s : (tensor<64xi32>, tensor<1xi32>) -> tensor<64xi32>
  %6 = tosa.arithmetic_right_shift %arg0, %s {round = true} : (tensor<64xi32>, tensor<1xi32>) -> tensor<64xi32>
  %7 = tosa.intdiv %arg0, %d : (tensor<64xi32>, tensor<1xi32>) -> tensor<64xi32>
  %8 = tosa.clz %arg0 : (tensor<64xi32>) -> tensor<64xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>
}
";

/// fp16 tensors: elementwise, a sigmoid, a transpose, a reduction and a matmul, each computed
/// in fp32 and stored rounded to fp16.
const FP16_OPS: &str = "func.func @main(%arg0: tensor<4x8xf16>, %arg1: tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>, tensor<8x4xf16>, tensor<4x1xf16>, tensor<4x8xf16>, tensor<1x4x4xf16>) {
  %0 = tosa.add %arg0, %arg1 : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %1 = tosa.sigmoid %arg0 : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %2 = tosa.transpose %arg0 {perms = array<i32: 1, 0>} : (tensor<4x8xf16>) -> tensor<8x4xf16>
  %3 = tosa.reduce_sum %arg1 {axis = 1 : i32} : (tensor<4x8xf16>) -> tensor<4x1xf16>
  %shift = \"tosa.const\"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %4 = tosa.mul %arg0, %arg1, %shift : (tensor<4x8xf16>, tensor<4x8xf16>, tensor<1xi8>) -> tensor<4x8xf16>
  %s3 = tosa.const_shape {values = dense<[1, 4, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %a = tosa.reshape %arg0, %s3 : (tensor<4x8xf16>, !tosa.shape<3>) -> tensor<1x4x8xf16>
  %s3b = tosa.const_shape {values = dense<[1, 8, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %b = tosa.reshape %2, %s3b : (tensor<8x4xf16>, !tosa.shape<3>) -> tensor<1x8x4xf16>
  %zp = \"tosa.const\"() <{values = dense<0.0> : tensor<1xf16>}> : () -> tensor<1xf16>
  %5 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf16>, tensor<1x8x4xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x4x4xf16>
  return %0, %1, %2, %3, %4, %5 : tensor<4x8xf16>, tensor<4x8xf16>, tensor<8x4xf16>, tensor<4x1xf16>, tensor<4x8xf16>, tensor<1x4x4xf16>
}
";

/// `values` (row-major) as MLIR's nested `dense<…>` list of `shape`.
fn nested(values: &[i64], shape: &[usize]) -> String {
    match shape {
        [] | [_] => format!(
            "[{}]",
            values
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        [_, rest @ ..] => {
            let step: usize = rest.iter().product();
            let parts: Vec<String> = values
                .chunks(step)
                .map(|chunk| nested(chunk, rest))
                .collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

/// The int8 operations of a quantized network: conv2d, depthwise_conv2d, transpose_conv2d and
/// matmul to i32 with input and weight zero points, avg_pool2d (zero points, TOSA's reciprocal scale) and
/// max_pool2d to int8. Weights follow small patterns numpy recomputes.
fn int8_conv() -> String {
    let pattern = |n: usize, mul: i64, modulo: i64| -> Vec<i64> {
        (0..n as i64)
            .map(|k| k * mul % modulo - modulo / 2)
            .collect()
    };
    let w = nested(&pattern(4 * 3 * 3 * 4, 37, 11), &[4, 3, 3, 4]);
    let dw = nested(&pattern(3 * 3 * 4 * 2, 29, 13), &[3, 3, 4, 2]);
    let mb = nested(&pattern(6 * 4, 7, 9), &[1, 6, 4]);
    let tw = nested(&pattern(2 * 2 * 2 * 4, 5, 7), &[2, 2, 2, 4]);
    format!(
        "func.func @main(%arg0: tensor<1x6x6x4xi8>, %arg1: tensor<1x4x6xi8>) -> (tensor<1x6x6x4xi32>, tensor<1x3x3x8xi32>, tensor<1x4x4xi32>, tensor<1x6x6x4xi8>, tensor<1x3x3x4xi8>, tensor<1x12x12x2xi32>) {{
  %w = \"tosa.const\"() <{{values = dense<{w}> : tensor<4x3x3x4xi8>}}> : () -> tensor<4x3x3x4xi8>
  %b = \"tosa.const\"() <{{values = dense<[10, -20, 30, 0]> : tensor<4xi32>}}> : () -> tensor<4xi32>
  %izp = \"tosa.const\"() <{{values = dense<2> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %wzp = \"tosa.const\"() <{{values = dense<-1> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %0 = tosa.conv2d %arg0, %w, %b, %izp, %wzp {{acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}} : (tensor<1x6x6x4xi8>, tensor<4x3x3x4xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x6x6x4xi32>
  %dw = \"tosa.const\"() <{{values = dense<{dw}> : tensor<3x3x4x2xi8>}}> : () -> tensor<3x3x4x2xi8>
  %db = \"tosa.const\"() <{{values = dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi32>}}> : () -> tensor<8xi32>
  %1 = tosa.depthwise_conv2d %arg0, %dw, %db, %izp, %wzp {{acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 0, 1, 0>, stride = array<i64: 2, 2>}} : (tensor<1x6x6x4xi8>, tensor<3x3x4x2xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x3x8xi32>
  %mb = \"tosa.const\"() <{{values = dense<{mb}> : tensor<1x6x4xi8>}}> : () -> tensor<1x6x4xi8>
  %azp = \"tosa.const\"() <{{values = dense<1> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %bzp = \"tosa.const\"() <{{values = dense<0> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %2 = tosa.matmul %arg1, %mb, %azp, %bzp : (tensor<1x4x6xi8>, tensor<1x6x4xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4xi32>
  %pizp = \"tosa.const\"() <{{values = dense<1> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %pozp = \"tosa.const\"() <{{values = dense<-3> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %3 = tosa.avg_pool2d %arg0, %pizp, %pozp {{acc_type = i32, kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}} : (tensor<1x6x6x4xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x6x6x4xi8>
  %4 = tosa.max_pool2d %arg0 {{kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>}} : (tensor<1x6x6x4xi8>) -> tensor<1x3x3x4xi8>
  %tw = \"tosa.const\"() <{{values = dense<{tw}> : tensor<2x2x2x4xi8>}}> : () -> tensor<2x2x2x4xi8>
  %tb = \"tosa.const\"() <{{values = dense<[5, -5]> : tensor<2xi32>}}> : () -> tensor<2xi32>
  %5 = tosa.transpose_conv2d %arg0, %tw, %tb, %izp, %wzp {{acc_type = i32, out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>}} : (tensor<1x6x6x4xi8>, tensor<2x2x2x4xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x12x12x2xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<1x6x6x4xi32>, tensor<1x3x3x8xi32>, tensor<1x4x4xi32>, tensor<1x6x6x4xi8>, tensor<1x3x3x4xi8>, tensor<1x12x12x2xi32>
}}
"
    )
}

/// The integer path of a quantized network: int8 rescaled to i32 (input zero point, single
/// rounding), i32 arithmetic, a product shifted right, and i32 rescaled to int8 (double rounding
/// past 31 bits, output zero point, clamped).
const INT8_OPS: &str = "func.func @main(%arg0: tensor<64xi8>) -> (tensor<64xi8>, tensor<64xi32>) {
  %m1 = \"tosa.const\"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s1 = \"tosa.const\"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = \"tosa.const\"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp0 = \"tosa.const\"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %0 = tosa.rescale %arg0, %m1, %s1, %izp, %zp0 {scale32 = true, rounding_mode = SINGLE_ROUND, per_channel = false, input_unsigned = false, output_unsigned = false} : (tensor<64xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<64xi32>
  %c = \"tosa.const\"() <{values = dense<-7> : tensor<64xi32>}> : () -> tensor<64xi32>
  %1 = tosa.add %0, %c : (tensor<64xi32>, tensor<64xi32>) -> tensor<64xi32>
  %m2 = \"tosa.const\"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s2 = \"tosa.const\"() <{values = dense<33> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp2 = \"tosa.const\"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = \"tosa.const\"() <{values = dense<-5> : tensor<1xi8>}> : () -> tensor<1xi8>
  %2 = tosa.rescale %1, %m2, %s2, %izp2, %ozp {scale32 = true, rounding_mode = DOUBLE_ROUND, per_channel = false, input_unsigned = false, output_unsigned = false} : (tensor<64xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<64xi8>
  %shift = \"tosa.const\"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %3 = tosa.mul %1, %1, %shift : (tensor<64xi32>, tensor<64xi32>, tensor<1xi8>) -> tensor<64xi32>
  return %2, %3 : tensor<64xi8>, tensor<64xi32>
}
";

/// TOSA resize: bilinear 2x up, and nearest at 4/3 × 5/2 with offsets and borders (the shapes
/// follow TOSA's `((IH - 1) * scale_n - offset + border) / scale_d + 1`, wholly divisible).
const RESIZE: &str = "func.func @main(%arg0: tensor<1x4x5x2xf32>) -> (tensor<1x7x9x2xf32>, tensor<1x5x11x2xf32>) {
  %s2 = tosa.const_shape {values = dense<[2, 1, 2, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %zero = tosa.const_shape {values = dense<[0, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.resize %arg0, %s2, %zero, %zero {mode = BILINEAR} : (tensor<1x4x5x2xf32>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x7x9x2xf32>
  %s = tosa.const_shape {values = dense<[4, 3, 5, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %off = tosa.const_shape {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %b = tosa.const_shape {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %1 = tosa.resize %arg0, %s, %off, %b {mode = NEAREST_NEIGHBOR} : (tensor<1x4x5x2xf32>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x5x11x2xf32>
  return %0, %1 : tensor<1x7x9x2xf32>, tensor<1x5x11x2xf32>
}
";

/// TOSA resize of int8: nearest to int8 (rounding at 2·d ≥ scale_n) and bilinear to i32 (the
/// integer weights, undivided), at the scales, offsets and borders of [`RESIZE`].
const INT_RESIZE: &str = "func.func @main(%arg0: tensor<1x4x5x4xi8>) -> (tensor<1x7x9x4xi32>, tensor<1x5x11x4xi8>) {
  %s2 = tosa.const_shape {values = dense<[2, 1, 2, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %zero = tosa.const_shape {values = dense<[0, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.resize %arg0, %s2, %zero, %zero {mode = BILINEAR} : (tensor<1x4x5x4xi8>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x7x9x4xi32>
  %s = tosa.const_shape {values = dense<[4, 3, 5, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %off = tosa.const_shape {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %b = tosa.const_shape {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %1 = tosa.resize %arg0, %s, %off, %b {mode = NEAREST_NEIGHBOR} : (tensor<1x4x5x4xi8>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x5x11x4xi8>
  return %0, %1 : tensor<1x7x9x4xi32>, tensor<1x5x11x4xi8>
}
";

/// Comparisons, logical operations and select: booleans made and used inside the model.
const BOOL_OPS: &str = "func.func @main(%arg0: tensor<4x4xf32>, %arg1: tensor<4x4xf32>) -> (tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xf32>) {
  %k = tosa.clamp %arg0 {min_val = 0.0 : f32, max_val = 1.0 : f32} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = tosa.equal %k, %arg0 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xi1>
  %g = tosa.greater %arg0, %arg1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xi1>
  %ge = tosa.greater_equal %arg1, %k : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xi1>
  %and = tosa.logical_and %e, %g : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  %or = tosa.logical_or %e, %ge : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  %xor = tosa.logical_xor %g, %ge : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  %not = tosa.logical_not %g : (tensor<4x4xi1>) -> tensor<4x4xi1>
  %sel = tosa.select %g, %arg0, %arg1 : (tensor<4x4xi1>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %e, %and, %or, %xor, %not, %sel : tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xf32>
}
";

/// The shader models: abs → a SPIR-V custom shader (axpy) → exp (a graph segment, a compute
/// segment and a graph segment in Arm's file), and a constant fed to the shader (a graph that
/// only passes the constant on); SPIR-V so that Arm's converter carries the shader as we run it.
fn shader_models() -> Vec<(&'static str, String)> {
    use base64::Engine as _;
    let words = compiler()
        .compile_str("axpy", GLSL_AXPY, Default::default())
        .unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytemuck::cast_slice(&words));
    let glsl_op = custom("%1", &["%0", "%arg1"], "axpy", Some(GLSL_AXPY));
    // same attributes, the code swapped for another language's
    let escaped = |s: &str| {
        let json = serde_json::to_string(s).unwrap();
        json[1..json.len() - 1]
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
    };
    let swap = |language: &str, code: &str| {
        let op = glsl_op
            .replace(&escaped(GLSL_AXPY), &escaped(code))
            .replace("\\\"GLSL\\\"", &format!("\\\"{language}\\\""));
        assert!(op.contains(language) && op.contains(&escaped(code)));
        op
    };
    let spirv_op = swap("SPIR-V", &b64);
    // a shader of local size 16 dispatched as 4 workgroups (Arm's reading of workgroup_sizes),
    // whose values say how many workgroups ran
    let counted = GLSL_AXPY.replace(
        "c[i] = a[i] * 2.0 + b[i];",
        "c[i] = a[i] * 2.0 + b[i] + float(gl_NumWorkGroups.x);",
    );
    assert_ne!(counted, GLSL_AXPY);
    let count_op = swap("GLSL", &counted).replace("[16,1,1]", "[4,1,1]");
    // the operands in descriptor set 1, the result in set 0
    let sets_glsl = GLSL_AXPY
        .replace("set=0, binding=0", "set=1, binding=0")
        .replace("set=0, binding=1", "set=1, binding=1")
        .replace("set=0, binding=2", "set=0, binding=0");
    assert_eq!(sets_glsl.matches("set=1").count(), 2);
    let sets_op = swap("GLSL", &sets_glsl)
        .replace("input_0_descriptorset\\\":0", "input_0_descriptorset\\\":1")
        .replace("input_1_descriptorset\\\":0", "input_1_descriptorset\\\":1")
        .replace("output_0_binding\\\":2", "output_0_binding\\\":0");
    assert!(
        sets_op.contains("input_1_descriptorset\\\":1")
            && sets_op.contains("output_0_binding\\\":0")
    );
    assert!(count_op.contains("[4,1,1]"));
    let hlsl_op = swap("HLSL", HLSL_AXPY);
    let k =
        "  %k = \"tosa.const\"() <{values = dense<0.5> : tensor<64xf32>}> : () -> tensor<64xf32>\n";
    // abs → the shader `op` (writing %1) → exp
    let chained = |op: &str| {
        func(
            2,
            &(unary("%0", "abs", "%arg0") + op + &unary("%2", "exp", "%1")),
            "%2",
        )
    };
    vec![
        ("shader", chained(&spirv_op)),
        ("glsl", chained(&glsl_op)),
        (
            "hlsl",
            func(2, &(unary("%0", "abs", "%arg0") + &hlsl_op), "%1"),
        ),
        (
            "passthrough",
            func_returning(
                2,
                &(unary("%0", "abs", "%arg0") + &glsl_op),
                &["%arg0", "%1"],
            ),
        ),
        ("sets", chained(&sets_op)),
        ("count", chained(&count_op)),
        (
            "constant_shader",
            func(
                1,
                &(k.to_string() + &spirv_op.replace("%0, %arg1", "%arg0, %k")),
                "%1",
            ),
        ),
    ]
}

/// Environment for Arm's scenario runner with Arm's emulation layer (VK_ARM_tensors and
/// VK_ARM_data_graph on any Vulkan device). The graph layer must sit above the tensor layer;
/// Debian 12's loader (1.3.239) orders explicit layers by where it finds their manifests, not
/// by `VK_INSTANCE_LAYERS`, so each manifest gets a folder of its own, graph first.
fn emulation_layer_env(python: &std::path::Path, dir: &std::path::Path) -> Vec<(String, String)> {
    let out = Command::new(python)
        .args([
            "-c",
            "import emulation_layer, os; print(os.path.join(os.path.dirname(emulation_layer.__file__), 'deploy'))",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the emulation layer is missing from the oracle venv: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deploy = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    let mut paths = Vec::new();
    for layer in ["Graph", "Tensor"] {
        let manifest = deploy.join(format!(
            "share/vulkan/explicit_layer.d/VkLayer_{layer}.json"
        ));
        let mut json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
        let lib = deploy.join(format!("lib/libVkLayer_{layer}.so"));
        json["layer"]["library_path"] = lib.to_string_lossy().into_owned().into();
        let folder = dir.join(format!("layer-{layer}"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("manifest.json"), json.to_string()).unwrap();
        paths.push(folder.to_string_lossy().into_owned());
    }
    vec![
        ("VK_LAYER_PATH".into(), paths.join(":")),
        (
            "VK_INSTANCE_LAYERS".into(),
            "VK_LAYER_ML_Graph_Emulation:VK_LAYER_ML_Tensor_Emulation".into(),
        ),
    ]
}

/// Runs [`NUMPY_CHECK`] in `mode` for `model` over the folder `dir`.
fn numpy(
    python: &std::path::Path,
    dir: &std::path::Path,
    model: &str,
    mode: &str,
    args: &[String],
) -> String {
    run_ok(
        Command::new(python)
            .arg("-c")
            .arg(NUMPY_CHECK.replace("MATMUL_B", MATMUL_B))
            .args([dir.to_str().unwrap(), model, mode])
            .args(args),
        &format!("{model}: numpy {mode}"),
    )
}

fn run_ok(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed:\n{text}");
    text
}

/// Points a scenario's `input_<i>_ref`/`output_<j>_ref` resources at `input_<i>.npy` and
/// `<run>.out<j>.npy`, and its `shader_<m>_ref` substitutions at module m's code as `dump`
/// (`vgf_dump`, run in `dir` on `vgf`) writes it.
fn fill_scenario(
    scenario: &mut serde_json::Value,
    run: &str,
    dump: &std::path::Path,
    dir: &std::path::Path,
    vgf: &str,
) {
    for r in scenario["resources"].as_array_mut().unwrap() {
        let Some((_, body)) = r.as_object_mut().unwrap().iter_mut().next() else {
            continue;
        };
        let uid = body["uid"].as_str().unwrap_or_default().to_string();
        let index = |prefix: &str| {
            uid.strip_prefix(prefix)
                .and_then(|s| s.strip_suffix("_ref"))
                .map(str::to_string)
        };
        if let Some(i) = index("input_") {
            body["src"] = format!("input_{i}.npy").into();
        } else if let Some(j) = index("output_") {
            body["dst"] = format!("{run}.out{j}.npy").into();
        } else if let Some(m) = index("shader_") {
            let flag = match body["type"].as_str() {
                Some("SPIR-V") => "--dump-spirv",
                Some("HLSL") => "--dump-hlsl",
                _ => "--dump-glsl",
            };
            let file = format!("{vgf}.module{m}");
            run_ok(
                Command::new(dump)
                    .current_dir(dir)
                    .args(["-i", vgf, "-o", &file, flag, &m]),
                "vgf_dump --dump-…",
            );
            body["src"] = file.into();
        }
    }
    let text = scenario.to_string();
    assert!(!text.contains("TEMPLATE_PATH"), "unfilled template: {text}");
}

/// Arm's tools for running models: its converter, the oracle virtualenv's Python (numpy, the
/// emulation layer), its scenario runner and `vgf_dump`.
struct ArmTools {
    converter: PathBuf,
    python: PathBuf,
    runner: PathBuf,
    dump: PathBuf,
}

/// [`ArmTools`], or `None` where `FPSHADER_SKIP_ARM` is set.
fn arm_tools() -> Option<ArmTools> {
    Some(ArmTools {
        converter: arm_tool("model-converter")?,
        python: arm_tool("python")?,
        runner: arm_tool("scenario_runner")?,
        dump: arm_tool("vgf_dump")?,
    })
}

/// Arm's converter's `arm.vgf` of `dir/m.mlir`, and `arm.json`: vgf_dump's scenario template
/// for it, filled for the run `arms-arm-runner`.
fn arm_file_and_scenario(
    converter: &std::path::Path,
    dump: &std::path::Path,
    dir: &std::path::Path,
) {
    arm_vgf(
        converter,
        &dir.join("m.mlir"),
        &dir.join("arm.vgf"),
        "m.mlir",
    );
    run_ok(
        Command::new(dump).current_dir(dir).args([
            "-i",
            "arm.vgf",
            "-o",
            "template.json",
            "--scenario-template",
        ]),
        "vgf_dump --scenario-template",
    );
    let mut scenario: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("template.json")).unwrap()).unwrap();
    fill_scenario(&mut scenario, "arms-arm-runner", dump, dir, "arm.vgf");
    std::fs::write(dir.join("arm.json"), scenario.to_string()).unwrap();
}

/// `model` written as `dir/{file}.vgf` with our scenario `{file}.json` for the run
/// `{run}-arm-runner`.
fn our_file_and_scenario(
    model: &vgf::Vgf,
    dump: &std::path::Path,
    dir: &std::path::Path,
    file: &str,
    run: &str,
) {
    let vgf_name = format!("{file}.vgf");
    std::fs::write(dir.join(&vgf_name), vgf::write(model)).unwrap();
    let mut scenario = vgf::scenario::scenario(model, &vgf_name);
    fill_scenario(
        &mut scenario,
        &format!("{run}-arm-runner"),
        dump,
        dir,
        &vgf_name,
    );
    std::fs::write(dir.join(format!("{file}.json")), scenario.to_string()).unwrap();
}

/// numpy's inputs for `graph` in `dir` (`input_<i>.raw`/`.npy`, by [`NUMPY_CHECK`]'s
/// `prepare`), read back.
fn prepared_inputs(
    python: &std::path::Path,
    dir: &std::path::Path,
    name: &str,
    graph: &tosa::Graph,
) -> Vec<Vec<u8>> {
    let shapes: Vec<&Vec<i64>> = (graph.inputs.iter())
        .map(|&v| &graph.values[v].ty.shape)
        .collect();
    numpy(
        python,
        dir,
        name,
        "prepare",
        &[serde_json::to_string(&shapes).unwrap()],
    );
    (0..shapes.len())
        .map(|i| std::fs::read(dir.join(format!("input_{i}.raw"))).unwrap())
        .collect()
}

/// Arm's scenario runner, with the emulation layers, on each of `scenarios` in `dir`.
fn run_scenarios(
    (runner, python): (&std::path::Path, &std::path::Path),
    dir: &std::path::Path,
    name: &str,
    scenarios: &[&str],
) {
    let layers = emulation_layer_env(python, dir);
    for file in scenarios {
        run_ok(
            Command::new(runner)
                .current_dir(dir)
                .envs(layers.iter().cloned())
                .args(["--scenario", file]),
            &format!("{name}: Arm's scenario runner on {file}"),
        );
    }
}

/// Each of `files` (`<file>.vgf` in `dir`) run by fpshader on every context of `contexts` with
/// `inputs`, its outputs written as `<file>-fpshader-<k>.out<j>.raw`; the runs, context by
/// context.
fn run_in_fpshader(
    contexts: &[std::sync::Arc<fpshader::Context>],
    dir: &std::path::Path,
    name: &str,
    files: &[&str],
    inputs: &[Vec<u8>],
) -> Vec<String> {
    let views: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    let mut runs = Vec::new();
    for (k, ctx) in contexts.iter().enumerate() {
        for file in files {
            let bytes = std::fs::read(dir.join(format!("{file}.vgf"))).unwrap();
            let model = unsafe { VgfModel::load(ctx, &bytes, &Default::default()) }
                .unwrap_or_else(|e| panic!("{name}: {file}.vgf on {}: {e}", ctx.describe()));
            let outputs = model.run(ctx, &views).unwrap();
            let run = format!("{file}-fpshader-{k}");
            for (j, out) in outputs.iter().enumerate() {
                std::fs::write(dir.join(format!("{run}.out{j}.raw")), out).unwrap();
            }
            runs.push(run);
        }
    }
    runs
}

#[test]
fn vgfs_run_in_arms_runner_and_fpshader_as_numpy_computes() {
    let Some(ArmTools {
        converter,
        python,
        runner,
        dump,
    }) = arm_tools()
    else {
        return;
    };
    let contexts = common::gpu_contexts();
    let mut models = ml_models();
    models.extend(shader_models());
    // the models side by side: each is mostly Arm's tools and numpy in processes of their own
    models.into_par_iter().for_each(|(name, mlir)| {
        let dir = common::scratch();
        std::fs::write(dir.join("m.mlir"), &mlir).unwrap();
        let graph = tosa::mlir::parse(name, &mlir).unwrap();
        let inputs = prepared_inputs(&python, &dir, name, &graph);
        // ours: compute-only, and with graph segments, each with our scenario file
        let ours = compute_only(&graph);
        our_file_and_scenario(&ours, &dump, &dir, "ours", "ours");
        our_file_and_scenario(&with_graphs(&graph), &dump, &dir, "graphs", "graphs");
        // the `.tosa` twin converts to the same file
        let converter_tosa = to_tosa(&converter, &dir.join("m.mlir"));
        let twin = tosa::flatbuffer::parse("m.tosa", &converter_tosa).unwrap();
        assert!(
            vgf::write(&compute_only(&twin)) == vgf::write(&ours),
            "{name}: the .tosa twin converts differently"
        );
        // Arm's: graph segments, with vgf_dump's scenario template
        arm_file_and_scenario(&converter, &dump, &dir);
        // Arm's converter keeps HLSL as source, which Arm's runner compiles only on Windows
        // ("HLSL shaders are not supported on this platform") and fpshader only ahead of time
        let arm_runs = name != "hlsl";
        // a model input returned as an output does not run in Arm's tools, its own file
        // included: vgf_dump's scenario template makes the OUTPUT tensor that aliases the input
        // memory of its own, bound at the input's binding and never written; that model runs
        // in fpshader only. Nor does a graph where an fft2d result feeds another op: Arm's
        // emulation layer ends in SIGSEGV on it (its own file too; fft2d results that are model
        // outputs run)
        let scenarios: &[&str] = if name == "passthrough" || name == "fft_chain" {
            &[]
        } else if arm_runs {
            &["ours.json", "graphs.json", "arm.json"]
        } else {
            &["ours.json", "graphs.json"]
        };
        run_scenarios((&runner, &python), &dir, name, scenarios);
        // the files in fpshader, on every GPU context (Arm's HLSL one refused by name)
        let mut runs: Vec<String> = ["ours", "graphs", "arms"][..scenarios.len()]
            .iter()
            .map(|r| format!("{r}-arm-runner"))
            .collect();
        let files: &[&str] = if arm_runs {
            &["ours", "graphs", "arm"]
        } else {
            for ctx in &contexts {
                let bytes = std::fs::read(dir.join("arm.vgf")).unwrap();
                let err = unsafe { VgfModel::load(ctx, &bytes, &Default::default()) }
                    .err()
                    .unwrap()
                    .to_string();
                assert!(err.contains("HLSL source"), "{err}");
            }
            &["ours", "graphs"]
        };
        runs.extend(run_in_fpshader(&contexts, &dir, name, files, &inputs));
        // and Arm's file through the command line, as a user runs it
        if arm_runs {
            let out = dir.join("cli");
            let mut cli = Command::new(env!("CARGO_BIN_EXE_fpshader"));
            cli.current_dir(&dir)
                .args(["run", "arm.vgf", "-o"])
                .arg(&out);
            for i in 0..inputs.len() {
                cli.args(["--input", &format!("input_{i}.npy")]);
            }
            run_ok(&mut cli, &format!("{name}: fpshader run arm.vgf"));
            let outputs = graph.outputs.len();
            for j in 0..outputs {
                let from = if outputs == 1 {
                    out.clone()
                } else {
                    out.join(format!("output_{j}.npy"))
                };
                std::fs::rename(from, dir.join(format!("arm-cli.out{j}.npy"))).unwrap();
            }
            runs.push("arm-cli".into());
        }
        let report = numpy(&python, &dir, name, "check", &runs);
        println!("{name}:\n{report}");
    });
}

/// A shader that binds its operand and result as tensors (`GL_ARM_tensors`, SPV_ARM_tensors):
/// `c[i] = a[i] * 2`.
const GLSL_TENSOR_DOUBLE: &str = "#version 460
#extension GL_ARM_tensors : require
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) uniform tensorARM<float, 1> a;
layout(set = 0, binding = 1) uniform tensorARM<float, 1> c;
void main() {
  uint i = gl_GlobalInvocationID.x;
  float v;
  tensorReadARM(a, uint[](i), v);
  tensorWriteARM(c, uint[](i), v * 2.0);
}
";

/// Checks `words` with spirv-val for Vulkan 1.3 (xtask's, `FPSHADER_SPIRV_VAL`).
fn spirv_val_13(words: &[u32], dir: &std::path::Path) {
    let file = dir.join("rewritten.spv");
    std::fs::write(&file, bytemuck::cast_slice::<u32, u8>(words)).unwrap();
    let tool = std::env::var_os("FPSHADER_SPIRV_VAL").unwrap_or_else(|| "spirv-val".into());
    run_ok(
        Command::new(&tool)
            .args(["--target-env", "vulkan1.3"])
            .arg(&file),
        "spirv-val of the rewritten tensor shader",
    );
}

/// A 2-D tensor shader: `c` is `a` transposed (`c[y][x] = a[x][y]`), its width queried.
const GLSL_TENSOR_TRANSPOSE: &str = "#version 460
#extension GL_ARM_tensors : require
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) uniform tensorARM<float, 2> a;
layout(set = 0, binding = 1) uniform tensorARM<float, 2> c;
void main() {
  uint i = gl_GlobalInvocationID.x;
  uint w = tensorSizeARM(c, 1);
  uint y = i / w;
  uint x = i % w;
  float v;
  tensorReadARM(a, uint[](x, y), v);
  tensorWriteARM(c, uint[](y, x), v);
}
";

/// Coordinates past a dimension but inside the buffer: `c[y][x] = a[y][x + 4]` over an 8 × 8
/// tensor (zero where `x + 4` is past the row, as SPV_ARM_tensors reads), and a write to
/// `c[y][x + 8]` that SPV_ARM_tensors drops (unchecked, it lands on the next row's `c[y + 1][x]`).
const GLSL_TENSOR_BOUNDS: &str = "#version 460
#extension GL_ARM_tensors : require
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) uniform tensorARM<float, 2> a;
layout(set = 0, binding = 1) uniform tensorARM<float, 2> c;
void main() {
  uint i = gl_GlobalInvocationID.x;
  uint y = i / 8u;
  uint x = i % 8u;
  float v;
  tensorReadARM(a, uint[](y, x + 4u), v);
  tensorWriteARM(c, uint[](y, x), v);
  tensorWriteARM(c, uint[](y, x + 8u), 100.0);
}
";

/// The glslc that Arm's scenario runner ships (glslang with GL_ARM_tensors, which shaderc lacks).
fn arm_glslc(python: &std::path::Path) -> PathBuf {
    let dir = run_ok(
        Command::new(python).args([
            "-c",
            "import scenario_runner, os; print(os.path.dirname(scenario_runner.__file__))",
        ]),
        "locating the scenario runner",
    );
    PathBuf::from(dir.trim()).join("binaries/bin/glslc")
}

/// Custom shaders that bind tensors (`VK_DESCRIPTOR_TYPE_TENSOR_ARM`): input → shader → output,
/// ML → shader → ML, a constant fed to the shader, a 2-D transpose and coordinates out of
/// bounds (read as zero, writes dropped). Each value the shader binds as a tensor is
/// one resource, as in Arm's converter's files (checked against its `vgf_dump`); both files run
/// in Arm's scenario runner and in fpshader on every GPU context (the tensors rewritten to
/// storage buffers at load, the rewrite valid SPIR-V by spirv-val) as numpy computes.
#[test]
fn tensor_descriptor_shaders_match_arms_converter() {
    use base64::Engine as _;
    let Some(ArmTools {
        converter,
        python,
        runner,
        dump,
    }) = arm_tools()
    else {
        return;
    };
    let dir = common::scratch();
    // each shader compiled by Arm's glslc, its rewrite valid, and its custom op's attributes
    let compile = |name: &str, glsl: &str, shape: Vec<i64>, count: Option<[u32; 3]>| {
        std::fs::write(dir.join(format!("{name}.comp")), glsl).unwrap();
        run_ok(
            Command::new(arm_glslc(&python)).current_dir(&dir).args([
                "--input",
                &format!("{name}.comp"),
                "--output",
                &format!("{name}.spv"),
            ]),
            "Arm's glslc",
        );
        let spv = std::fs::read(dir.join(format!("{name}.spv"))).unwrap();
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&spv);
        let rewritten = vgf::tensors::rewrite(&words, &|_, _| Some(shape.clone()))
            .unwrap()
            .expect("the shader binds tensors");
        assert!(
            !rewritten.windows(2).any(|w| w == [0x0002_0011, 4174]),
            "{name}: TensorsARM left"
        );
        spirv_val_13(&rewritten, &dir);
        // every truncation and many word mutations: an error or a module, never a panic
        let mut rng = common::Rng(17);
        for cut in 0..words.len() {
            let _ = vgf::tensors::rewrite(&words[..cut], &|_, _| Some(shape.clone()));
        }
        for _ in 0..2000 {
            let mut bad = words.clone();
            let at =
                5 + ((rng.next() + 1.0) * 0.5 * (bad.len() - 5) as f32) as usize % (bad.len() - 5);
            bad[at] = match (rng.next() * 4.0) as i32 {
                0 => 0,
                1 => bad[at] ^ 0xffff,
                2 => bad[at].wrapping_add(1),
                _ => u32::MAX,
            };
            let _ = vgf::tensors::rewrite(&bad, &|_, _| Some(shape.clone()));
        }
        let b64 = base64::engine::general_purpose::STANDARD.encode(&spv);
        let mut m = serde_json::json!({"entry_point": "main", "workgroup_sizes": [16, 1, 1],
            "shader_language": "SPIR-V", "shader_code": b64});
        if let Some(count) = count {
            m["fpshader_workgroup_count"] = serde_json::json!(count);
        }
        for (key, binding) in [("input_0", 0), ("output_0", 1)] {
            m[format!("{key}_binding")] = binding.into();
            m[format!("{key}_descriptorset")] = 0.into();
            m[format!("{key}_vkdescriptortype")] = "VK_DESCRIPTOR_TYPE_TENSOR_ARM".into();
            m[format!("{key}_vkformat")] = "VK_FORMAT_R32_SFLOAT".into();
        }
        m.to_string().replace('\\', "\\\\").replace('"', "\\\"")
    };
    let double = compile("double", GLSL_TENSOR_DOUBLE, vec![64], None);
    // one invocation per element along x: fpshader's count given (Arm's runner dispatches
    // workgroup_sizes as the count, past the 64 elements, whose writes it drops)
    let transpose = compile(
        "transpose",
        GLSL_TENSOR_TRANSPOSE,
        vec![8, 8],
        Some([4, 1, 1]),
    );
    let bounds = compile("bounds", GLSL_TENSOR_BOUNDS, vec![8, 8], Some([4, 1, 1]));
    let op = |json: &str, res: &str, x: &str, ty: &str| {
        format!(
            "  {res} = tosa.custom {x} {{domain_name = \"com.arm.VulkanCustomShader\", operator_name = \"t\", implementation_attrs = \"{json}\"}} : ({ty}) -> {ty}\n"
        )
    };
    let shader = |res: &str, x: &str| op(&double, res, x, "tensor<64xf32>");
    let k =
        "  %k = \"tosa.const\"() <{values = dense<0.5> : tensor<64xf32>}> : () -> tensor<64xf32>\n";
    let models = [
        ("tensor_shader", func(1, &shader("%0", "%arg0"), "%0")),
        (
            "tensor_ml_shader_ml",
            func(
                1,
                &(unary("%0", "abs", "%arg0") + &shader("%1", "%0") + &unary("%2", "exp", "%1")),
                "%2",
            ),
        ),
        (
            "tensor_constant",
            func(0, &(k.to_string() + &shader("%0", "%k")), "%0"),
        ),
        (
            "tensor_transpose",
            format!(
                "func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {{\n{}  return %0 : tensor<8x8xf32>\n}}\n",
                op(&transpose, "%0", "%arg0", "tensor<8x8xf32>")
            ),
        ),
        (
            "tensor_bounds",
            format!(
                "func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {{\n{}  return %0 : tensor<8x8xf32>\n}}\n",
                op(&bounds, "%0", "%arg0", "tensor<8x8xf32>")
            ),
        ),
    ];
    let contexts = common::gpu_contexts();
    for (name, mlir) in models {
        let graph = tosa::mlir::parse(name, &mlir).unwrap();
        let model_dir = dir.join(name);
        std::fs::create_dir_all(&model_dir).unwrap();
        std::fs::write(model_dir.join("m.mlir"), &mlir).unwrap();
        arm_file_and_scenario(&converter, &dump, &model_dir);
        let ours = with_graphs(&graph);
        our_file_and_scenario(&ours, &dump, &model_dir, "ours", "ours");
        let arms = vgf_dump(&model_dir.join("arm.vgf")).unwrap();
        assert_eq!(
            structure(&vgf::dump::dump(&ours), true),
            structure(&arms, true),
            "{name}: our file against Arm's"
        );
        // both files in Arm's scenario runner and in fpshader, as numpy computes
        let inputs = prepared_inputs(&python, &model_dir, name, &graph);
        run_scenarios(
            (&runner, &python),
            &model_dir,
            name,
            &["ours.json", "arm.json"],
        );
        let mut runs = vec!["ours-arm-runner".to_string(), "arms-arm-runner".to_string()];
        runs.extend(run_in_fpshader(
            &contexts,
            &model_dir,
            name,
            &["ours", "arm"],
            &inputs,
        ));
        println!(
            "{name}:\n{}",
            numpy(&python, &model_dir, name, "check", &runs)
        );
    }
}

static SCALE_SUB: &fpshader::meta::ShaderModule = fpshader_macro::shader!(
    src: "#version 450
layout (local_size_x = 32) in;
layout (binding = 0) readonly buffer a_blob { sfp a_data[]; };
layout (binding = 1) readonly buffer b_blob { sfp b_data[]; };
layout (binding = 2) writeonly buffer c_blob { sfp c_data[]; };
void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i >= 64)
        return;
    afp v = buffer_ld1(a_data, i) * afp(3.0) - buffer_ld1(b_data, i);
    buffer_st1(c_data, i, v);
}
",
    fp16s,
);

#[test]
fn implementation_attrs_come_from_a_shaders_reflection() {
    let variant = |opt: &str| {
        let set = fpshader_build::OptionSet::parse(opt).unwrap();
        SCALE_SUB
            .variants
            .iter()
            .find(|v| v.options == set)
            .unwrap_or_else(|| panic!("no `{opt}` variant"))
    };
    let attrs = |opt: &str| -> serde_json::Value {
        serde_json::from_str(&variant(opt).implementation_attrs().unwrap()).unwrap()
    };
    let (fp32, fp16) = (attrs(""), attrs("fp16s"));
    assert_eq!(fp32["workgroup_sizes"], serde_json::json!([32, 1, 1]));
    assert_eq!(fp32["shader_language"], "SPIR-V");
    for key in ["input_0", "input_1", "output_0"] {
        assert_eq!(
            fp32[format!("{key}_vkformat")],
            "VK_FORMAT_R32_SFLOAT",
            "{key}"
        );
        assert_eq!(
            fp16[format!("{key}_vkformat")],
            "VK_FORMAT_R16_SFLOAT",
            "{key}"
        );
        assert_eq!(
            fp32[format!("{key}_vkdescriptortype")],
            "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER"
        );
    }
    assert_eq!(
        (
            fp32["input_1_binding"].clone(),
            fp32["output_0_binding"].clone()
        ),
        (1.into(), 2.into())
    );
    assert!(fp32.get("input_2_binding").is_none() && fp32.get("output_1_binding").is_none());

    // the JSON drops into a custom op as it is, and the model runs
    let json = fp32.to_string().replace('\\', "\\\\").replace('"', "\\\"");
    let op = format!(
        "  %0 = tosa.custom %arg0, %arg1 {{domain_name = \"com.arm.VulkanCustomShader\", operator_name = \"scale_sub\", implementation_attrs = \"{json}\"}} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>\n"
    );
    let graph = tosa::mlir::parse("reflected", &func(2, &op, "%0")).unwrap();
    let file = vgf::write(&compute_only(&graph));
    let a: Vec<f32> = (0..64).map(|i| i as f32 * 0.25).collect();
    let b: Vec<f32> = (0..64).map(|i| (i as f32).cos()).collect();
    let want: Vec<f32> = (0..64).map(|i| a[i] * 3.0 - b[i]).collect();
    for ctx in common::gpu_contexts() {
        let model = unsafe { VgfModel::load(&ctx, &file, &Default::default()) }.unwrap();
        let out = model
            .run(&ctx, &[bytemuck::cast_slice(&a), bytemuck::cast_slice(&b)])
            .unwrap();
        common::assert_close(&f32s(&out[0]), &want, 1e-6, &ctx.describe());
    }

    // images cannot be described from reflection alone: a typed error names the binding
    let image = compiler()
        .compile_str(
            "img",
            "#version 450\nlayout(local_size_x = 1) in;\nlayout(binding = 0, rgba8) uniform writeonly image2D im;\nvoid main() { imageStore(im, ivec2(0), vec4(1.0)); }\n",
            Default::default(),
        )
        .unwrap();
    let err = vgf::custom_op::implementation_attrs(&image)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("set 0 binding 0 `im`: only buffers"),
        "{err}"
    );
}

/// A shader reading a storage image: `o = 2·imageLoad(img)`, texel by texel into a buffer.
const GLSL_IMAGE_LOAD: &str = "#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0, rgba32f) uniform readonly image2D img;
layout(set = 0, binding = 1) buffer Out { float o[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= 16u) return;
  vec4 v = imageLoad(img, ivec2(int(i % 4u), int(i / 4u))) * 2.0;
  o[4u * i] = v.x; o[4u * i + 1u] = v.y; o[4u * i + 2u] = v.z; o[4u * i + 3u] = v.w;
}
";

/// A shader sampling a combined image-sampler at `at` texels (x, y) past each output texel's
/// corner, writing `scale`× the sample into a storage image of GLSL format `format`.
fn glsl_image_sample(format: &str, at: [f32; 2], scale: f32) -> String {
    format!(
        "#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) uniform sampler2D tex;
layout(set = 0, binding = 1, {format}) uniform writeonly image2D outimg;
void main() {{
  uint i = gl_GlobalInvocationID.x;
  if (i >= 16u) return;
  ivec2 p = ivec2(int(i % 4u), int(i / 4u));
  imageStore(outimg, p, texture(tex, (vec2(p) + vec2({:?}, {:?})) / 4.0) * {scale:?});
}}
",
        at[0], at[1]
    )
}

/// Arm's `dds_utils` (next to its scenario runner in the oracle venv).
fn dds_utils(python: &std::path::Path) -> PathBuf {
    arm_glslc(python).with_file_name("dds_utils")
}

/// A scenario for Arm's runner over `FILE.vgf` (argv: FILE, RUN, dds_utils), from its
/// `vgf_dump` (`FILE-dump.json`): each model input and output bound at its binding, an image
/// input as an `image` resource of dims `[1, H, W, 1]` read from a DDS file of numpy's input
/// (its header from `dds_utils generate`), a storage buffer as a `buffer`, a tensor as a
/// `tensor`; outputs to `RUN-arm-runner.out<j>.npy`. Written as `FILE-images.json`.
const IMAGE_SCENARIO: &str = r#"
import json, os, subprocess, sys
import numpy as np
file, run, dds_utils = sys.argv[1:4]
dump = json.load(open(file + '-dump.json'))
res, seq = dump['resources'], dump['model_sequence']
DXGI = {'VK_FORMAT_R32G32B32A32_SFLOAT': ('DXGI_FORMAT_R32G32B32A32_FLOAT', 16),
        'VK_FORMAT_R16G16B16A16_SFLOAT': ('DXGI_FORMAT_R16G16B16A16_FLOAT', 8)}
SIZE = {'VK_FORMAT_R32_SFLOAT': 4, 'VK_FORMAT_R16_SFLOAT': 2}
resources = [{'graph': {'uid': 'g', 'src': file + '.vgf'}}]
bindings = []
for kind, slots in (('input', seq['inputs']), ('output', seq['outputs'])):
    for j, slot in enumerate(slots):
        r = res[slot['mrt_index']]
        uid = '%s_%d' % (kind, j)
        bindings.append({'id': slot['binding'], 'set': 0, 'resource_ref': uid})
        ty, shape, fmt = r['vk_descriptor_type'], r['shape'], r['vk_format']
        access = 'readonly' if kind == 'input' else 'writeonly'
        out = '%s-arm-runner.out%d.npy' % (run, j)
        if 'IMAGE' in ty:
            assert kind == 'input', 'image outputs are not written here'
            _, h, w, _ = shape
            dxgi, texel = DXGI[fmt]
            dds = '%s-input%d.dds' % (file, j)
            subprocess.run([dds_utils, '--action', 'generate', '--height', str(h), '--width', str(w),
                            '--element-size', str(texel), '--element-dtype', 'float32', '--format', dxgi,
                            '--output', dds], check=True)
            head = open(dds, 'rb').read()[:148]
            data = np.load('input_%d.npy' % j).tobytes()
            open(dds, 'wb').write(head + data)
            resources.append({'image': {'uid': uid, 'format': fmt, 'dims': [1, h, w, 1],
                                        'shader_access': access, 'src': dds}})
        elif ty == 'VK_DESCRIPTOR_TYPE_STORAGE_BUFFER':
            e = {'uid': uid, 'size': int(np.prod(shape)) * SIZE[fmt], 'shader_access': access}
            e['src' if kind == 'input' else 'dst'] = 'input_%d.npy' % j if kind == 'input' else out
            resources.append({'buffer': e})
        else:
            e = {'uid': uid, 'format': fmt, 'dims': shape, 'shader_access': access}
            e['src' if kind == 'input' else 'dst'] = 'input_%d.npy' % j if kind == 'input' else out
            resources.append({'tensor': e})
scenario = {'commands': [{'dispatch_graph': {'bindings': bindings, 'graph_ref': 'g',
                                             'shader_substitutions': []}}],
            'resources': resources}
json.dump(scenario, open(file + '-images.json', 'w'))
"#;

/// Custom shaders that bind images (a storage image read, combined image-samplers with their
/// sampler state, nearest over fp32 and linear over fp16, storage images written), fed by a
/// model input and by ML ops: the resource
/// tables equal Arm's converter's (`vgf_dump`: image descriptor types, RGBA formats, sampler
/// state, alias groups with the graph's tensors), and both files run in fpshader on every GPU
/// context and in Arm's scenario runner as numpy computes (the scenarios written by the test:
/// `vgf_dump`'s template refuses image resources, "Not implemented descriptor type support").
/// A cubic filter and a shape that is not texels are typed errors at load.
#[test]
fn image_shaders_match_arms_converter_and_run() {
    use base64::Engine as _;
    let Some(ArmTools {
        converter,
        python,
        runner,
        dump,
    }) = arm_tools()
    else {
        return;
    };
    let attrs = |glsl: &str,
                 input: (&str, Option<serde_json::Value>),
                 output: &str,
                 image: &str| {
        let words = compiler()
            .compile_str("image", glsl, Default::default())
            .unwrap();
        let b64 = base64::engine::general_purpose::STANDARD.encode(bytemuck::cast_slice(&words));
        let mut m = serde_json::json!({"entry_point": "main", "workgroup_sizes": [16, 1, 1],
            "fpshader_workgroup_count": [1, 1, 1], "shader_language": "SPIR-V", "shader_code": b64});
        for (key, binding, ty) in [("input_0", 0, input.0), ("output_0", 1, output)] {
            m[format!("{key}_binding")] = binding.into();
            m[format!("{key}_descriptorset")] = 0.into();
            m[format!("{key}_vkdescriptortype")] = ty.into();
            m[format!("{key}_vkformat")] = if ty.ends_with("BUFFER") {
                "VK_FORMAT_R32_SFLOAT".into()
            } else {
                image.into()
            };
        }
        if let Some(sampler) = input.1 {
            m["input_0_sampler"] = sampler;
        }
        m
    };
    let sampler = |filter: &str| {
        serde_json::json!({"min_filter": filter, "mag_filter": filter,
            "address_mode_u": "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE",
            "address_mode_v": "VK_SAMPLER_ADDRESS_MODE_REPEAT",
            "border_color": "VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK"})
    };
    let model = |attrs: &serde_json::Value, chained: bool, t: &str| {
        let json = attrs.to_string().replace('\\', "\\\\").replace('"', "\\\"");
        let custom = |x: &str| {
            format!(
                "  %0 = tosa.custom {x} {{domain_name = \"com.arm.VulkanCustomShader\", operator_name = \"image\", implementation_attrs = \"{json}\"}} : ({t}) -> {t}\n"
            )
        };
        let body = if chained {
            format!(
                "  %a = tosa.abs %arg0 : ({t}) -> {t}\n{}  %1 = tosa.exp %0 : ({t}) -> {t}\n  return %1 : {t}\n",
                custom("%a")
            )
        } else {
            format!("{}  return %0 : {t}\n", custom("%arg0"))
        };
        format!("func.func @main(%arg0: {t}) -> {t} {{\n{body}}}\n")
    };
    let (f32s, f16s) = ("tensor<1x4x4x4xf32>", "tensor<1x4x4x4xf16>");
    let (rgba32, rgba16) = (
        "VK_FORMAT_R32G32B32A32_SFLOAT",
        "VK_FORMAT_R16G16B16A16_SFLOAT",
    );
    let storage = attrs(
        GLSL_IMAGE_LOAD,
        ("VK_DESCRIPTOR_TYPE_STORAGE_IMAGE", None),
        "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
        rgba32,
    );
    let sampled = |glsl: &str, filter: &str, format: &str| {
        attrs(
            glsl,
            (
                "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
                Some(sampler(filter)),
            ),
            "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE",
            format,
        )
    };
    let nearest = glsl_image_sample("rgba32f", [1.5, 2.5], 3.0);
    let linear = glsl_image_sample("rgba16f", [1.0, 0.5], 0.5);
    let contexts = common::gpu_contexts();
    for (name, mlir) in [
        ("image_storage", model(&storage, false, f32s)),
        (
            "image_sampled",
            // one texel right (u clamped), two down (v repeated), 3× the sample
            model(&sampled(&nearest, "VK_FILTER_NEAREST", rgba32), true, f32s),
        ),
        (
            "image_linear",
            // half a texel right: the mean of a texel and its right neighbour (clamped),
            // halved (small values: the model's exp magnifies the fp16 image's rounding less)
            model(&sampled(&linear, "VK_FILTER_LINEAR", rgba16), true, f16s),
        ),
    ] {
        let dir = common::scratch();
        std::fs::write(dir.join("m.mlir"), &mlir).unwrap();
        arm_vgf(&converter, &dir.join("m.mlir"), &dir.join("arm.vgf"), name);
        let graph = tosa::mlir::parse(name, &mlir).unwrap();
        let ours = with_graphs(&graph);
        std::fs::write(dir.join("ours.vgf"), vgf::write(&ours)).unwrap();
        let arms = vgf_dump(&dir.join("arm.vgf")).unwrap();
        let dumped = vgf::dump::dump(&ours);
        assert_eq!(
            structure(&dumped, true),
            structure(&arms, true),
            "{name}: our file against Arm's"
        );
        // the same dump from Arm's vgf_dump reading our file
        assert_eq!(
            vgf_dump(&dir.join("ours.vgf")).unwrap()["resources"],
            arms["resources"]
        );
        let inputs = prepared_inputs(&python, &dir, name, &graph);
        // both files in Arm's runner, from scenarios written here (its template has none)
        for (file, run) in [("ours", "ours"), ("arm", "arms")] {
            run_ok(
                Command::new(&dump).current_dir(&dir).args([
                    "-i",
                    &format!("{file}.vgf"),
                    "-o",
                    &format!("{file}-dump.json"),
                ]),
                "vgf_dump",
            );
            run_ok(
                Command::new(&python)
                    .arg("-c")
                    .arg(IMAGE_SCENARIO)
                    .current_dir(&dir)
                    .args([file, run])
                    .arg(dds_utils(&python)),
                &format!("{name}: the image scenario of {file}.vgf"),
            );
        }
        run_scenarios(
            (&runner, &python),
            &dir,
            name,
            &["ours-images.json", "arm-images.json"],
        );
        let mut runs = vec!["ours-arm-runner".to_string(), "arms-arm-runner".to_string()];
        runs.extend(run_in_fpshader(
            &contexts,
            &dir,
            name,
            &["ours", "arm"],
            &inputs,
        ));
        println!("{name}:\n{}", numpy(&python, &dir, name, "check", &runs));
    }
    // typed errors at load: a cubic filter, a shape that is not rows of RGBA texels
    let cubic = sampled(&nearest, "VK_FILTER_CUBIC_IMG", rgba32);
    let graph = tosa::mlir::parse("cubic", &model(&cubic, true, f32s)).unwrap();
    let file = vgf::write(&with_graphs(&graph));
    let three = model(&storage, false, f32s).replace("1x4x4x4", "1x4x4x3");
    let graph = tosa::mlir::parse("three", &three).unwrap();
    let wrong_shape = vgf::write(&compute_only(&graph));
    for ctx in &contexts {
        let err = unsafe { VgfModel::load(ctx, &file, &Default::default()) }
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("image resource 2: filter 1000015000 (cubic)"),
            "{err}"
        );
        let err = unsafe { VgfModel::load(ctx, &wrong_shape, &Default::default()) }
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("[1, 4, 4, 3] is not [1, H, W, C]"), "{err}");
    }
}
