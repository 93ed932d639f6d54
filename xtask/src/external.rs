//! A crate outside the workspace that uses `shader!` and the build helper through path
//! dependencies, built with nothing but `cargo build` (the "external user" check and the build-time
//! benchmarks use it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::workspace_root;

const SHADER: &str = r#"#version 450
#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif
#include "twice.comp"
layout (constant_id = 0) const int n = 0;
layout (binding = 0) buffer blob { sfpvec4 data[]; };
layout (push_constant) uniform parameter { int n; } p;
void main()
{
    const int i = int(gl_GlobalInvocationID.x);
    if (i >= psc(n)) return;
    buffer_st4(data, i, twice(buffer_ld4(data, i)));
}
"#;

const HELPER: &str = "afpvec4 twice(afpvec4 v) { return v * afp(2); }\n";

const MAIN: &str = r#"use fpshader::meta::ShaderModule;

// shader! in every position a user may write it
static DOUBLE: &ShaderModule =
    fpshader::shader!("shaders/double.comp", fp16p, fp16s, fp16a, include: ["shaders/include"]);
const DOUBLE_CONST: &ShaderModule =
    fpshader::shader!("shaders/double.comp", fp16s, include: ["shaders/include"]);

fn double_fp16s() -> &'static ShaderModule {
    fpshader::shader!("shaders/double.comp", fp16s, include: ["shaders/include"])
}

fn count(module: &'static ShaderModule) -> usize {
    module.variants.len()
}

mod built {
    include!(concat!(env!("OUT_DIR"), "/fpshader_shaders.rs"));
}

fn main() {
    let double = fpshader::shader!("shaders/double.comp", fp16s, include: ["shaders/include"]);
    let from_build = built::Shader::Double.module();
    assert_eq!(DOUBLE.variants.len(), 5);
    assert_eq!(from_build.variants.len(), 3);
    for v in DOUBLE.variants.iter() {
        assert_eq!(v.spirv[0], 0x0723_0203);
    }
    let fp16s = [
        double.variants.len(),
        DOUBLE_CONST.variants.len(),
        double_fp16s().variants.len(),
        count(fpshader::shader!("shaders/double.comp", fp16s, include: ["shaders/include"])),
    ];
    assert_eq!(fp16s, [2; 4]);
    println!(
        "external crate: shader! gave {} variants (let/static/const/return/argument), build.rs {} variants",
        DOUBLE.variants.len(),
        from_build.variants.len()
    );
}
"#;

const BUILD_RS: &str = r#"fn main() -> Result<(), fpshader_build::Error> {
    fpshader_build::Builder::new()
        .dir("shaders")
        .include_dir("shaders/include")
        .options(&["fp16s", "fp16a"])
        .compile()?;
    Ok(())
}
"#;

/// The external crate, written fresh under `dir`.
pub struct External {
    pub dir: PathBuf,
    pub target_dir: PathBuf,
}

impl External {
    /// Writes the crate into `dir` (replacing what was there).
    pub fn create(dir: &Path) -> Result<External, String> {
        let _ = std::fs::remove_dir_all(dir);
        let root = workspace_root();
        let manifest = format!(
            r#"[package]
name = "fpshader-external-check"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
fpshader = {{ path = "{runtime}", features = ["shader-macro"] }}

[build-dependencies]
fpshader-build = {{ path = "{build}" }}

# the same settings as the fpshader workspace, so cargo reuses its shaderc build
[profile.dev.package.shaderc-sys]
opt-level = 3
debug = false

[profile.dev.build-override]
opt-level = 0
debug = true

[profile.dev.package."*"]
debug = false

[workspace]
"#,
            runtime = root.join("runtime").display(),
            build = root.join("shader-build").display(),
        );
        let write = |rel: &str, text: &str| -> Result<(), String> {
            let path = dir.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
            }
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
        };
        write("Cargo.toml", &manifest)?;
        write("build.rs", BUILD_RS)?;
        write("src/main.rs", MAIN)?;
        write("shaders/double.comp", SHADER)?;
        write("shaders/include/twice.comp", HELPER)?;
        // the workspace's lock file pins the same versions, so the build needs no registry access
        std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock"))
            .map_err(|e| e.to_string())?;
        let target_dir = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target"));
        Ok(External {
            dir: dir.to_path_buf(),
            target_dir,
        })
    }

    /// `cargo <args>` in the crate, with the cache in `cache_dir`; returns the wall time.
    pub fn cargo(&self, args: &[&str], cache_dir: &Path) -> Result<Duration, String> {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let start = Instant::now();
        let status = Command::new(cargo)
            .args(args)
            .arg("--offline")
            .arg("--manifest-path")
            .arg(self.dir.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", &self.target_dir)
            .env("FPSHADER_CACHE_DIR", cache_dir)
            .status()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        let time = start.elapsed();
        if status.success() {
            Ok(time)
        } else {
            Err(format!(
                "`cargo {}` failed in the external crate {}",
                args.join(" "),
                self.dir.display()
            ))
        }
    }

    /// Marks one of the crate's files as changed.
    pub fn touch(&self, rel: &str) -> Result<(), String> {
        touch(&self.dir.join(rel))
    }
}

/// Marks a file as changed (same content, new mtime) so cargo reruns what depends on it.
pub fn touch(path: &Path) -> Result<(), String> {
    let text = std::fs::read(path).map_err(|e| e.to_string())?;
    // a later mtime than the last build's
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(path, text).map_err(|e| e.to_string())
}

/// Builds and runs the external crate: it must compile shaders through both entry points.
pub fn check() -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("fpshader-external-{}", std::process::id()));
    let ext = External::create(&dir)?;
    let cache = dir.join("cache");
    eprintln!(
        "xtask: building a crate outside the workspace ({})",
        dir.display()
    );
    let result = ext.cargo(&["run", "--quiet"], &cache);
    let _ = std::fs::remove_dir_all(&dir);
    result.map(|_| ())
}
