//! Compiling the built-in `shaders/` through `fpshaderc`, for the demo and the benchmark.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::{cargo, workspace_root};

/// The options every built-in shader is compiled with: all float classes, images, local memory.
pub const BUILTIN_OPTIONS: &str = "fp16p,fp16s,fp16a,fp16u,image,lmem";

/// The top-level `.comp` files of `shaders/` (helpers live in `shaders/include/`), sorted.
pub fn builtin_shaders() -> Result<Vec<PathBuf>, String> {
    let dir = workspace_root().join("shaders");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "comp"))
        .collect();
    files.sort();
    Ok(files)
}

/// Builds `fpshaderc` and returns its path.
pub fn fpshaderc() -> Result<PathBuf, String> {
    cargo(&[
        "build",
        "--quiet",
        "-p",
        "fpshader-build",
        "--bin",
        "fpshaderc",
    ])?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    Ok(target.join("debug").join("fpshaderc"))
}

/// What compiling one shader in all variants produced.
pub struct Compiled {
    pub variants: usize,
    pub blobs: usize,
    pub bytes: u64,
    pub time: Duration,
}

/// Runs `fpshaderc compile --all-variants` for `shader` into `out`, timed.
pub fn compile_all(fpshaderc: &Path, shader: &Path, out: &Path) -> Result<Compiled, String> {
    let _ = std::fs::remove_dir_all(out);
    let include = workspace_root().join("shaders").join("include");
    let start = Instant::now();
    let output = Command::new(fpshaderc)
        .arg("compile")
        .arg(shader)
        .args(["--all-variants", "--opts", BUILTIN_OPTIONS, "-I"])
        .arg(&include)
        .arg("-o")
        .arg(out)
        .output()
        .map_err(|e| format!("cannot run fpshaderc: {e}"))?;
    let time = start.elapsed();
    if !output.status.success() {
        return Err(format!(
            "fpshaderc failed on {}:\n{}",
            shader.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let manifest_path = out.join("manifest.json");
    let text = std::fs::read_to_string(&manifest_path)
        .map_err(|e| format!("cannot read {}: {e}", manifest_path.display()))?;
    let manifest: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("bad manifest: {e}"))?;
    let variants = manifest["variants"]
        .as_object()
        .ok_or("manifest has no variants")?;
    let mut files: Vec<&str> = variants
        .values()
        .filter_map(|v| v["file"].as_str())
        .collect();
    files.sort_unstable();
    files.dedup();
    let bytes = files
        .iter()
        .map(|f| std::fs::metadata(out.join(f)).map(|m| m.len()).unwrap_or(0))
        .sum();
    Ok(Compiled {
        variants: variants.len(),
        blobs: files.len(),
        bytes,
        time,
    })
}

/// `cargo xtask demo`: every built-in shader in all variants, as a table.
pub fn demo() -> Result<(), String> {
    let fpshaderc = fpshaderc()?;
    let out = workspace_root().join("target").join("xtask-demo");
    println!("options: {BUILTIN_OPTIONS}");
    println!(
        "{:<24} {:>8} {:>12} {:>9} {:>9}",
        "shader", "variants", "unique blobs", "bytes", "time ms"
    );
    let (mut variants, mut blobs, mut bytes, mut time) = (0, 0, 0, Duration::ZERO);
    for shader in builtin_shaders()? {
        let stem = shader
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let c = compile_all(&fpshaderc, &shader, &out.join(&stem))?;
        println!(
            "{:<24} {:>8} {:>12} {:>9} {:>9.1}",
            stem,
            c.variants,
            c.blobs,
            c.bytes,
            c.time.as_secs_f64() * 1e3
        );
        variants += c.variants;
        blobs += c.blobs;
        bytes += c.bytes;
        time += c.time;
    }
    println!(
        "{:<24} {:>8} {:>12} {:>9} {:>9.1}",
        "total",
        variants,
        blobs,
        bytes,
        time.as_secs_f64() * 1e3
    );
    println!();
    println!("relu_pack4 in every buffer variant on the default adapter (examples/relu.rs):");
    cargo(&["run", "--quiet", "--example", "relu", "--", "262144"])
}
