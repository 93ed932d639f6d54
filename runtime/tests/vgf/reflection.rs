//! A custom op's implementation attributes from its shader's reflection.

use super::*;

pub(crate) static SCALE_SUB: &fpshader::meta::ShaderModule = fpshader_macro::shader!(
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
