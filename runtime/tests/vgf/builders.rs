//! MLIR builders for the custom-op tests: attributes, functions, the axpy shaders, the cases.

pub(crate) const GLSL_AXPY: &str = "#version 450\n\
layout(local_size_x = 16, local_size_y = 1, local_size_z = 1) in;\n\
layout(set=0, binding=0) readonly buffer A { float a[]; };\n\
layout(set=0, binding=1) readonly buffer B { float b[]; };\n\
layout(set=0, binding=2) writeonly buffer C { float c[]; };\n\
void main() { uint i = gl_GlobalInvocationID.x; if (i < 64u) c[i] = a[i] * 2.0 + b[i]; }\n";

/// The same shader in HLSL (shaderc's HLSL front end compiles it ahead of time).
pub(crate) const HLSL_AXPY: &str = "[[vk::binding(0, 0)]] StructuredBuffer<float> A;\n\
[[vk::binding(1, 0)]] StructuredBuffer<float> B;\n\
[[vk::binding(2, 0)]] RWStructuredBuffer<float> C;\n\
[numthreads(16, 1, 1)]\n\
void main(uint3 id : SV_DispatchThreadID) { if (id.x < 64) C[id.x] = A[id.x] * 2.0 + B[id.x]; }\n";

/// `implementation_attrs` for a shader with `inputs` storage-buffer operands and one result.
pub(crate) fn attrs(code: Option<&str>, inputs: usize) -> String {
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
pub(crate) fn custom(res: &str, operands: &[&str], name: &str, code: Option<&str>) -> String {
    let json = attrs(code, operands.len())
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    let types = vec!["tensor<64xf32>"; operands.len()].join(", ");
    format!(
        "  {res} = tosa.custom {} {{domain_name = \"com.arm.VulkanCustomShader\", operator_name = \"{name}\", implementation_attrs = \"{json}\"}} : ({types}) -> tensor<64xf32>\n",
        operands.join(", ")
    )
}

pub(crate) fn func(args: usize, body: &str, ret: &str) -> String {
    func_returning(args, body, &[ret])
}

/// [`func`] returning several values (one without parentheses).
pub(crate) fn func_returning(args: usize, body: &str, rets: &[&str]) -> String {
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

pub(crate) fn unary(res: &str, op: &str, x: &str) -> String {
    format!("  {res} = tosa.{op} {x} : (tensor<64xf32>) -> tensor<64xf32>\n")
}

/// The partitioning cases: (name, MLIR, expected partition kinds).
pub(crate) fn cases() -> Vec<(&'static str, String, &'static str)> {
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
