//! Image shaders (loads and sampling) against Arm's converter and run.

use super::*;

/// A shader reading a storage image: `o = 2·imageLoad(img)`, texel by texel into a buffer.
pub(crate) const GLSL_IMAGE_LOAD: &str = "#version 450
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
pub(crate) fn glsl_image_sample(format: &str, at: [f32; 2], scale: f32) -> String {
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
pub(crate) fn dds_utils(python: &std::path::Path) -> PathBuf {
    arm_glslc(python).with_file_name("dds_utils")
}

/// A scenario for Arm's runner over `FILE.vgf` (argv: FILE, RUN, dds_utils), from its
/// `vgf_dump` (`FILE-dump.json`): each model input and output bound at its binding, an image
/// input as an `image` resource of dims `[1, H, W, 1]` read from a DDS file of numpy's input
/// (its header from `dds_utils generate`), a storage buffer as a `buffer`, a tensor as a
/// `tensor`; outputs to `RUN-arm-runner.out<j>.npy`. Written as `FILE-images.json`.
pub(crate) const IMAGE_SCENARIO: &str = r#"
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
        let dumped = vgf::file::dump::dump(&ours);
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
