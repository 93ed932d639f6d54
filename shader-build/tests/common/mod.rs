//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use fpshader_build::{Compiler, Settings, TargetEnv, words_as_bytes};

/// `shader-build/tests/shaders`.
pub fn shader_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("shaders")
}

/// The repository's `shaders/` folder.
pub fn builtin_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crate has a parent folder")
        .join("shaders")
}

/// A compiler with default settings plus the built-in include folder.
pub fn compiler() -> Compiler {
    Compiler::new(Settings::default().include_dir(builtin_dir().join("include")))
        .expect("shaderc starts")
}

/// Validates SPIR-V with `spirv-val` (`FPSHADER_SPIRV_VAL`, which xtask points at the one of
/// the SPIRV-Tools that shaderc vendors, else the system's). Missing `spirv-val` fails the test
/// unless `FPSHADER_SKIP_SPIRV_VAL=1` says to skip validation.
pub fn validate(words: &[u32], env: TargetEnv, what: &str) {
    if std::env::var_os("FPSHADER_SKIP_SPIRV_VAL").is_some() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("m.spv");
    std::fs::write(&file, words_as_bytes(words)).expect("write spv");
    let tool = std::env::var_os("FPSHADER_SPIRV_VAL").unwrap_or_else(|| "spirv-val".into());
    // a shader whose extension needs a newer SPIR-V is compiled for it whatever the settings
    // say (VK_NV_cooperative_matrix2: SPIR-V 1.6)
    let env = env.max(TargetEnv::of_module(words).unwrap_or(env));
    let out = Command::new(&tool)
        .args(["--target-env", env.name()])
        .arg(&file)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "spirv-val not runnable ({e}): run `cargo xtask deps`, or set \
                 FPSHADER_SKIP_SPIRV_VAL=1 to skip SPIR-V validation"
            )
        });
    assert!(
        out.status.success(),
        "spirv-val rejects {what}:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Writes `files` (name, text) into a fresh temp dir.
pub fn temp_tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, text).expect("write");
    }
    dir
}
