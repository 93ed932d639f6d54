//! Custom-op attributes and MLIR text: errors that name the op, the field, the line.

use super::*;

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
