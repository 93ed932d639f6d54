//! The `fpshaderc` command line.

mod common;

use std::process::Command;

fn fpshaderc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fpshaderc"))
}

/// An ncnn-style shader: includes a shared helper, psc(), guarded #extension lines, shared lfp
/// arrays and an image branch.
const NCNN_STYLE: &str = r#"#version 450

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif

#include "vulkan_activation.comp"

layout (constant_id = 0) const int activation_type = 0;
layout (constant_id = 1) const int w = 0;

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler1D bottom_blob;
layout (binding = 1, imfmtc1) writeonly uniform unfp image1D top_blob;
#else
layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
#endif

layout (push_constant) uniform parameter { int w; } p;

#if NCNN_shader_local_memory
shared lfp tmp[64];
#endif

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    if (gx >= psc(w))
        return;
#if NCNN_image_shader
    afp v = image1d_ld1(bottom_blob, gx);
#elif NCNN_shader_local_memory
    tmp[gx % 64] = sfp2lfp(bottom_blob_data[gx]);
    afp v = lfp2afp(tmp[gx % 64]);
#else
    afp v = buffer_ld1(bottom_blob_data, gx);
#endif
    v = activation_afp(v, activation_type, 0.f, 0.f);
#if NCNN_image_shader
    image1d_st1(top_blob, gx, v);
#else
    buffer_st1(top_blob_data, gx, v);
#endif
}
"#;

#[test]
fn compile_all_variants_writes_spv_and_manifest() {
    let dir = common::temp_tree(&[
        ("src/act.comp", NCNN_STYLE),
        (
            "inc/vulkan_activation.comp",
            &std::fs::read_to_string(common::builtin_dir().join("include/vulkan_activation.comp"))
                .unwrap(),
        ),
        (
            "inc/activation_function.comp",
            &std::fs::read_to_string(
                common::builtin_dir().join("include/activation_function.comp"),
            )
            .unwrap(),
        ),
    ]);
    let out = dir.path().join("out");
    let status = fpshaderc()
        .arg("compile")
        .arg(dir.path().join("src/act.comp"))
        .args([
            "--all-variants",
            "--opts",
            "fp16p,fp16s,fp16a,fp16u,image,lmem",
            "-I",
        ])
        .arg(dir.path().join("inc"))
        .args(["-D", "UNUSED=1", "--target-env", "vulkan1.1", "-o"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["target_env"], "vulkan1.1");
    let variants = manifest["variants"].as_object().unwrap();
    assert_eq!(variants.len(), 24);
    let sau = &variants["fp16sau-lmem"];
    assert_eq!(
        sau["options"],
        serde_json::json!(["fp16s", "fp16a", "fp16u", "lmem"])
    );
    let mut files: Vec<&str> = variants
        .values()
        .map(|v| v["file"].as_str().unwrap())
        .collect();
    files.sort_unstable();
    files.dedup();
    assert!(files.len() < 24, "deduplicated: {}", files.len());
    for f in files {
        let bytes = std::fs::read(out.join(f)).unwrap();
        assert_eq!(&bytes[..4], &0x0723_0203u32.to_le_bytes(), "{f} is SPIR-V");
        let words: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        common::validate(&words, fpshader_build::TargetEnv::Vulkan1_1, f);
    }
}

#[test]
fn compile_single_option_set() {
    let dir = common::temp_tree(&[(
        "k.comp",
        "#version 450\nlayout (binding = 0) buffer b { sfpvec4 d[]; };\nvoid main() { buffer_st4(d, 0, buffer_ld4(d, 1)); }\n",
    )]);
    let out = dir.path().join("out");
    let status = fpshaderc()
        .arg("compile")
        .arg(dir.path().join("k.comp"))
        .args(["--opt", "fp16s,fp16a", "-O0", "-o"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(out.join("k.fp16sa.spv").is_file());
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"-O0\""), "{manifest}");
}

#[test]
fn expand_prints_the_preamble() {
    let dir = common::temp_tree(&[("k.comp", "#version 450\nvoid main() {}\n")]);
    let out = fpshaderc()
        .arg("expand")
        .arg(dir.path().join("k.comp"))
        .args(["--opt", "fp16s,fp16a"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("#version 450\n"));
    assert!(text.contains("#define NCNN_fp16_storage 1\n"));
    assert!(text.contains("#define afpvec4 f16vec4\n"));
    assert!(text.ends_with("#line 2\nvoid main() {}\n"));

    let out = fpshaderc()
        .arg("expand")
        .arg(dir.path().join("k.comp"))
        .arg("--preprocess")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8(out.stdout).unwrap().contains("#define"));
}

#[test]
fn failures_exit_non_zero_with_the_diagnostic() {
    let dir = common::temp_tree(&[("bad.comp", "#version 450\nvoid main() {\n  int x = ;\n}\n")]);
    let path = dir.path().join("bad.comp");
    let out = fpshaderc()
        .arg("compile")
        .arg(&path)
        .arg("-o")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{}:3: error:", path.display())),
        "{stderr}"
    );

    let out = fpshaderc()
        .arg("compile")
        .arg(&path)
        .args(["--opt", "fp16q", "-o"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown option `fp16q`"));

    let out = fpshaderc()
        .args(["compile", "/no/such/file.comp", "-o"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/file.comp"));
}
