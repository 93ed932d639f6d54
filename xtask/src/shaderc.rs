//! glslang/SPIRV-Tools/shaderc's C++, built once per machine.
//!
//! `shaderc-sys` builds its vendored C++ from source in every target dir and profile that needs
//! it: clippy, the tests, trybuild's own target dir and the external crate each paid about five
//! minutes on a 2-core machine. xtask builds the same vendored sources (found through `cargo
//! metadata`, so the version is the one in `Cargo.lock`) once into a cache folder, and every cargo
//! it runs links that `libshaderc_combined.a` through `SHADERC_LIB_DIR`. A plain `cargo build`
//! without xtask still builds from source, as before.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The folder holding `libshaderc_combined.a`, built now if it is not there yet.
pub fn ensure() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("SHADERC_LIB_DIR") {
        // the user's own build wins
        return Ok(PathBuf::from(dir));
    }
    let (version, source) = vendored_source()?;
    let root = cache_root().join(format!("shaderc-sys-{version}"));
    let lib_dir = root.join("lib");
    let lib = lib_dir.join("libshaderc_combined.a");
    if lib.is_file() {
        return Ok(lib_dir);
    }
    eprintln!(
        "xtask: building shaderc {version} once into {} (several minutes)",
        root.display()
    );
    let build = root.join("build");
    let _ = std::fs::remove_dir_all(&build);
    std::fs::create_dir_all(&build).map_err(|e| format!("{}: {e}", build.display()))?;
    let generator = if crate::deps::which("ninja") {
        "Ninja"
    } else {
        "Unix Makefiles"
    };
    // the options shaderc-sys's own build script passes to cmake
    crate::run(
        Command::new("cmake")
            .arg("-S")
            .arg(source.join("build"))
            .arg("-B")
            .arg(&build)
            .args(["-G", generator])
            .args([
                "-DCMAKE_BUILD_TYPE=Release",
                "-DCMAKE_POSITION_INDEPENDENT_CODE=ON",
                "-DCMAKE_INSTALL_LIBDIR=lib",
                "-DENABLE_SPVREMAPPER=OFF",
                "-DENABLE_GLSLANG_BINARIES=OFF",
                "-DSHADERC_SKIP_TESTS=ON",
                "-DSHADERC_SKIP_EXAMPLES=ON",
                "-DSPIRV_SKIP_EXECUTABLES=ON",
                "-DSPIRV_WERROR=OFF",
            ]),
    )?;
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    crate::run(
        Command::new("cmake")
            .arg("--build")
            .arg(&build)
            .args(["--target", "shaderc_combined", "--parallel"])
            .arg(jobs.to_string()),
    )?;
    let built = find(&build, "libshaderc_combined.a")
        .ok_or_else(|| format!("no libshaderc_combined.a under {}", build.display()))?;
    std::fs::create_dir_all(&lib_dir).map_err(|e| format!("{}: {e}", lib_dir.display()))?;
    // copy then rename, so an interrupted copy never looks like a finished library
    let partial = lib_dir.join("libshaderc_combined.a.partial");
    std::fs::copy(&built, &partial).map_err(|e| format!("{}: {e}", partial.display()))?;
    std::fs::rename(&partial, &lib).map_err(|e| format!("{}: {e}", lib.display()))?;
    let _ = std::fs::remove_dir_all(&build);
    Ok(lib_dir)
}

/// `FPSHADER_SHADERC_CACHE`, else `$HOME/.cache/fpshader`, else the workspace's `target/`.
fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("FPSHADER_SHADERC_CACHE") {
        return PathBuf::from(dir);
    }
    match std::env::var_os("HOME") {
        Some(home) => PathBuf::from(home).join(".cache").join("fpshader"),
        None => crate::workspace_root()
            .join("target")
            .join("fpshader-shaderc"),
    }
}

/// The locked `shaderc-sys` version and its unpacked source (downloaded by `cargo metadata`).
fn vendored_source() -> Result<(String, PathBuf), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(&cargo)
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(crate::workspace_root())
        .output()
        .map_err(|e| format!("cannot run {cargo} metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
    let packages = meta["packages"].as_array().cloned().unwrap_or_default();
    let pkg = packages
        .iter()
        .find(|p| p["name"] == "shaderc-sys")
        .ok_or("shaderc-sys is not in the dependency graph")?;
    let version = pkg["version"].as_str().unwrap_or_default().to_string();
    let manifest = pkg["manifest_path"]
        .as_str()
        .ok_or("cargo metadata gave shaderc-sys no manifest path")?;
    let source = Path::new(manifest)
        .parent()
        .ok_or("shaderc-sys's manifest has no folder")?
        .to_path_buf();
    Ok((version, source))
}

fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find(&path, name) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
    }
    None
}
