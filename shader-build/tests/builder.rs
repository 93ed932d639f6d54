//! The build.rs helper: generated code, cache behaviour, determinism, errors.

mod common;

use std::path::Path;

use fpshader_build::{BuildReport, Builder, Error, OptionError};

const USES_HELPER: &str = "#version 450\n#include \"helper.comp\"\nlayout (binding = 0) buffer b { sfpvec4 d[]; };\nvoid main() { buffer_st4(d, 0, helper(buffer_ld4(d, 1))); }\n";
const ALONE: &str = "#version 450\nlayout (binding = 0) buffer b { sfp d[]; };\nvoid main() { buffer_cp1(d, 0, d, 1); }\n";
const HELPER_V1: &str = "afpvec4 helper(afpvec4 v) { return v * afp(2); }\n";
const HELPER_V2: &str = "afpvec4 helper(afpvec4 v) { return v + afp(3); }\n";

fn build(root: &Path, out: &str, cache: &str) -> Result<BuildReport, Error> {
    Builder::new()
        .dir(root.join("shaders"))
        .include_dir(root.join("inc"))
        .options(&["fp16p", "fp16s", "fp16a"])
        .out_dir(root.join(out))
        .cache_dir(root.join(cache))
        .cargo_directives(false)
        .compile()
}

#[test]
fn changing_an_include_recompiles_only_its_shaders() {
    let dir = common::temp_tree(&[
        ("shaders/a_uses_helper.comp", USES_HELPER),
        ("shaders/b_alone.comp", ALONE),
        ("inc/helper.comp", HELPER_V1),
    ]);
    let first = build(dir.path(), "out", "cache").unwrap();
    assert_eq!(first.shaders, 2);
    assert_eq!(first.cache_hits, 0);
    assert_eq!(first.cache_misses, first.blobs);
    let a_blobs = 5; // fp32, fp16p, fp16s, fp16pa, fp16sa: afp is used
    let b_blobs = 2; // scalars are `float` in fp32 and fp16p alike, and no afp: fp32, fp16s
    assert_eq!(first.blobs, a_blobs + b_blobs);
    assert!(first.inputs.iter().any(|p| p.ends_with("inc/helper.comp")));

    let again = build(dir.path(), "out", "cache").unwrap();
    assert_eq!((again.cache_hits, again.cache_misses), (first.blobs, 0));

    std::fs::write(dir.path().join("inc/helper.comp"), HELPER_V2).unwrap();
    let changed = build(dir.path(), "out", "cache").unwrap();
    assert_eq!(
        changed.cache_misses, a_blobs,
        "only the shader including helper.comp recompiles"
    );
    assert_eq!(changed.cache_hits, b_blobs);
}

#[test]
fn two_clean_builds_generate_identical_code() {
    let dir = common::temp_tree(&[
        ("shaders/a_uses_helper.comp", USES_HELPER),
        ("shaders/b_alone.comp", ALONE),
        ("inc/helper.comp", HELPER_V1),
    ]);
    let one = build(dir.path(), "out1", "cache1").unwrap();
    let two = build(dir.path(), "out2", "cache2").unwrap();
    assert_eq!(two.cache_hits, 0, "second build is clean too");
    let read = |p: &Path| std::fs::read(p).unwrap();
    assert_eq!(read(&one.out_file), read(&two.out_file));
    let list = |d: &Path| {
        let mut v: Vec<_> = std::fs::read_dir(d.join("fpshader"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    let (o1, o2) = (dir.path().join("out1"), dir.path().join("out2"));
    assert_eq!(list(&o1), list(&o2));
    for name in list(&o1) {
        assert_eq!(
            read(&o1.join("fpshader").join(&name)),
            read(&o2.join("fpshader").join(&name))
        );
    }
    let code = String::from_utf8(read(&one.out_file)).unwrap();
    assert!(code.contains("pub static A_USES_HELPER: ::fpshader::meta::ShaderModule"));
    assert!(code.contains("pub enum Shader {"));
    assert!(code.contains("AUsesHelper,"));
    assert!(
        !code.contains(&dir.path().display().to_string()),
        "no absolute paths in generated code"
    );
}

#[test]
fn failures_are_typed_errors() {
    let dir = common::temp_tree(&[(
        "shaders/bad.comp",
        "#version 450\nvoid main() {\n  nope();\n}\n",
    )]);
    let err = build(dir.path(), "out", "cache").unwrap_err();
    let d = err.first_diagnostic().unwrap_or_else(|| panic!("{err:?}"));
    assert!(d.file.ends_with("bad.comp"));
    assert_eq!(d.line, Some(3));

    let err = Builder::new()
        .dir(dir.path().join("missing"))
        .out_dir(dir.path().join("out"))
        .cargo_directives(false)
        .compile()
        .unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");

    let err = Builder::new()
        .dir(dir.path().join("shaders"))
        .shader_options("other.comp", &["fp16s"])
        .out_dir(dir.path().join("out"))
        .cargo_directives(false)
        .compile()
        .unwrap_err();
    assert!(err.to_string().contains("other.comp"), "{err}");

    let err = Builder::new()
        .dir(dir.path().join("shaders"))
        .options(&["fp16z"])
        .out_dir(dir.path().join("out"))
        .cargo_directives(false)
        .compile()
        .unwrap_err();
    assert!(
        matches!(err, Error::Options(OptionError::UnknownOption { .. })),
        "{err:?}"
    );
}
