//! Golden expansion tests: the preamble of each float class, and a few functions spelled out.

use std::path::PathBuf;

use fpshader_build::{OptionSet, extension};

const CLASSES: [(&str, &str); 6] = [
    ("fp32", ""),
    ("fp16p", "fp16p"),
    ("fp16pa", "fp16p,fp16a"),
    ("fp16s", "fp16s"),
    ("fp16sa", "fp16s,fp16a"),
    ("fp16sau", "fp16s,fp16a,fp16u"),
];

fn preamble(opts: &str) -> String {
    extension::preamble(OptionSet::parse(opts).unwrap().canonicalize().unwrap())
}

/// The whole preamble of each class matches `tests/golden/<class>.glsl`.
/// `FPSHADER_BLESS=1 cargo test --test golden` rewrites the files after a deliberate change.
#[test]
fn preamble_per_class_matches_golden_file() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("golden");
    let bless = std::env::var_os("FPSHADER_BLESS").is_some();
    for (class, opts) in CLASSES {
        let set = OptionSet::parse(opts).unwrap().canonicalize().unwrap();
        assert_eq!(set.float_class().name(), class);
        let text = extension::preamble(set);
        let path = dir.join(format!("{class}.glsl"));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let golden = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (FPSHADER_BLESS=1 writes it)", path.display()));
        assert_eq!(
            text,
            golden,
            "{class} preamble differs from {}",
            path.display()
        );
    }
}

fn assert_has(opts: &str, line: &str) {
    let p = preamble(opts);
    assert!(
        p.lines().any(|l| l == line),
        "[{opts}] expected line\n  {line}\nin preamble:\n{p}"
    );
}

#[test]
fn fp32_functions() {
    assert_has("", "#define sfpvec8 mat2x4");
    assert_has("", "#define buffer_ld4(buf,i) buf[i]");
    assert_has("", "#define buffer_st4(buf,i,v) {buf[i]=vec4(v);}");
    assert_has("", "#define image2d_ld4(tex,p) texelFetch(tex,p,0)");
    assert_has("", "#define imfmtc4 rgba32f");
    assert_has("", "#define unfp highp");
    assert_has("", "#define psc(x) ((x)==0?p.x:(x))");
}

#[test]
fn fp16_packed_functions() {
    assert_has("fp16p", "#define sfp float");
    assert_has("fp16p", "#define sfpvec4 uvec2");
    assert_has(
        "fp16p",
        "#define buffer_ld4(buf,i) vec4(unpackHalf2x16(buf[i].x),unpackHalf2x16(buf[i].y))",
    );
    assert_has(
        "fp16p",
        "#define buffer_st2(buf,i,v) {buf[i]=packHalf2x16(vec2(v));}",
    );
    assert_has("fp16p", "#define imfmtc1 r32f");
    assert_has("fp16p", "#define lfpvec4 uvec2");
}

#[test]
fn fp16_packed_arithmetic_functions() {
    assert_has(
        "fp16p,fp16a",
        "#define buffer_ld4(buf,i) f16vec4(unpackFloat2x16(buf[i].x),unpackFloat2x16(buf[i].y))",
    );
    assert_has("fp16p,fp16a", "#define buffer_ld1(buf,i) float16_t(buf[i])");
    assert_has("fp16p,fp16a", "#define lfp2afp(v) float16_t(v)");
    assert_has(
        "fp16p,fp16a",
        "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require",
    );
}

#[test]
fn fp16_storage_functions() {
    assert_has("fp16s", "#extension GL_EXT_shader_16bit_storage : require");
    // 16-byte accesses: a uvec4 of packed pairs, as with fp16 packed
    assert_has("fp16s", "#define sfpvec8 uvec4");
    assert_has("fp16s", "#define buffer_ld4(buf,i) vec4(buf[i])");
    assert_has(
        "fp16s",
        "#define buffer_ld8(buf,i) mat2x4(vec4(unpackHalf2x16(buf[i].r),unpackHalf2x16(buf[i].g)),vec4(unpackHalf2x16(buf[i].b),unpackHalf2x16(buf[i].a)))",
    );
    assert_has("fp16s", "#define imfmtc1 r16f");
    assert_has("fp16s", "#define unfp mediump");
}

#[test]
fn fp16_storage_arithmetic_functions() {
    assert_has("fp16s,fp16a", "#define sfpvec8 uvec4");
    assert_has("fp16s,fp16a", "#define afpvec8 f16mat2x4");
    assert_has("fp16s,fp16a", "#define buffer_ld4(buf,i) buf[i]");
    assert_has("fp16s,fp16a", "#define lfp float");
    assert_has("fp16s,fp16a", "#define lfpvec4 uint64_t");
    assert_has(
        "fp16s,fp16a",
        "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require",
    );
    assert_has(
        "fp16s,fp16a",
        "#define sfp2lfpvec4(v) pack64(float16BitsToUint16(v))",
    );
}

#[test]
fn fp16_storage_arithmetic_uniform_functions() {
    assert_has("fp16s,fp16a,fp16u", "#define lfp float16_t");
    assert_has("fp16s,fp16a,fp16u", "#define lfpvec4 f16vec4");
    assert_has("fp16s,fp16a,fp16u", "#define sfp2lfpvec4(v) (v)");
    // the uniform class needs no 64-bit integers
    assert!(!preamble("fp16s,fp16a,fp16u").contains("int64"));
}

#[test]
fn expansion_inserts_after_version_and_keeps_line_numbers() {
    let src = fpshader_build::Source::from_str(
        "t.comp",
        "// header\n#version 450 core\nvoid main() {}\n",
    )
    .unwrap();
    let text = src.expand(OptionSet::FP32).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "// header");
    assert_eq!(lines[1], "#version 450 core");
    assert!(lines[2].starts_with("#define") || lines[2].starts_with("#extension"));
    let line_directive = lines.iter().position(|l| l.starts_with("#line")).unwrap();
    assert_eq!(lines[line_directive], "#line 3");
    assert_eq!(lines[line_directive + 1], "void main() {}");
}
