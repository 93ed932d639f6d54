//! VGF: custom-op attributes, partitioning against Arm's own converter, our files read by Arm's
//! `vgf_dump`, the reader under truncation and mutation, and compute-only VGFs run on the GPU
//! (lavapipe in CI, both shader paths) against a CPU reference.
//!
//! Arm's tools come from the oracle virtualenv that `cargo xtask test` fills (next to
//! `FPSHADER_NCNN_PYTHON`); without it the oracle tests fail unless `FPSHADER_SKIP_ARM=1`.

mod common;

use std::path::PathBuf;
use std::process::Command;

use fpshader::vgf::VgfModel;
use fpshader_build::vgf::{self, ModuleType, convert, custom_op, partition, tosa};
use fpshader_build::{Compiler, Settings};

const GLSL_AXPY: &str = "#version 450\n\
layout(local_size_x = 16, local_size_y = 1, local_size_z = 1) in;\n\
layout(set=0, binding=0) readonly buffer A { float a[]; };\n\
layout(set=0, binding=1) readonly buffer B { float b[]; };\n\
layout(set=0, binding=2) writeonly buffer C { float c[]; };\n\
void main() { uint i = gl_GlobalInvocationID.x; if (i < 64u) c[i] = a[i] * 2.0 + b[i]; }\n";

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
    let params: Vec<String> = (0..args)
        .map(|i| format!("%arg{i}: tensor<64xf32>"))
        .collect();
    format!(
        "func.func @main({}) -> tensor<64xf32> {{\n{body}  return {ret} : tensor<64xf32>\n}}\n",
        params.join(", ")
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
    convert::convert(graph, &compiler(), convert::ConvertOptions::default()).unwrap()
}

#[test]
fn partitions_match_arms_converter() {
    for (name, mlir, kinds) in cases() {
        let graph = tosa::mlir::parse(name, &mlir).unwrap();
        let ours: String = partition::partition(&graph)
            .iter()
            .map(|p| {
                if p.kind == partition::Kind::Ml {
                    'M'
                } else {
                    'S'
                }
            })
            .collect();
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
        let run = Command::new(converter)
            .arg("-i")
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let dump = vgf_dump(&output).unwrap();
        let arms: String = dump["model_sequence"]["segments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| if s["type"] == "GRAPH" { 'M' } else { 'S' })
            .collect();
        assert_eq!(ours, arms, "{name}: our partitions against Arm's segments");
    }
}

#[test]
fn arms_vgf_dump_reads_our_files_as_we_do() {
    for (name, mlir, _) in cases() {
        let model = compute_only(&tosa::mlir::parse(name, &mlir).unwrap());
        let file = common::scratch().join(format!("{name}.vgf"));
        std::fs::write(&file, vgf::write(&model)).unwrap();
        let Some(arms) = vgf_dump(&file) else {
            continue;
        };
        assert_eq!(arms, vgf::dump::dump(&model), "{name}");
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
    let graph = tosa::mlir::parse("m", &mlir).unwrap();
    let err = convert::convert(&graph, &compiler(), convert::ConvertOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("declares local size [32, 1, 1]"), "{err}");
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
            let model = VgfModel::load(&ctx, &file, &Default::default()).unwrap();
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
        let err = VgfModel::load(&ctx, &file, &Default::default())
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("placeholder"), "{err}");
        let spirv = compiler()
            .compile_str("axpy", GLSL_AXPY, Default::default())
            .unwrap();
        let shaders = [("axpy".to_string(), spirv)].into_iter().collect();
        let model = VgfModel::load(&ctx, &file, &shaders).unwrap();
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
fn graph_segments_are_refused_with_a_way_out() {
    let graph = tosa::mlir::parse("m", &cases()[1].1).unwrap();
    let options = convert::ConvertOptions {
        compute_only: false,
        ..Default::default()
    };
    let err = convert::convert(&graph, &compiler(), options)
        .unwrap_err()
        .to_string();
    assert!(err.contains("--compute-only"), "{err}");
    let model = compute_only(&graph);
    assert!(
        model
            .sequence
            .segments
            .iter()
            .all(|s| s.ty == ModuleType::Compute)
    );
}
