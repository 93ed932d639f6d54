//! Shaders with tensor descriptors against Arm's converter.

use super::*;

/// A shader that binds its operand and result as tensors (`GL_ARM_tensors`, SPV_ARM_tensors):
/// `c[i] = a[i] * 2`.
pub(crate) const GLSL_TENSOR_DOUBLE: &str = "#version 460
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
pub(crate) fn spirv_val_13(words: &[u32], dir: &std::path::Path) {
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
pub(crate) const GLSL_TENSOR_TRANSPOSE: &str = "#version 460
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
pub(crate) const GLSL_TENSOR_BOUNDS: &str = "#version 460
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
pub(crate) fn arm_glslc(python: &std::path::Path) -> PathBuf {
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
            structure(&vgf::file::dump::dump(&ours), true),
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
