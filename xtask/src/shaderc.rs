//! glslang/SPIRV-Tools/shaderc's C++, built once per machine.
//!
//! `shaderc-sys` builds its vendored C++ from source in every target dir and profile that needs
//! it: clippy, the tests, trybuild's own target dir and the external crate each paid about five
//! minutes on a 2-core machine. xtask builds the same vendored sources (found through `cargo
//! metadata`, so the version is the one in `Cargo.lock`) once into a cache folder, and every cargo
//! it runs links that `libshaderc_combined.a` through `SHADERC_LIB_DIR`. A plain `cargo build`
//! without xtask still builds from source, as before.
//!
//! The same build gives `spirv-val` from those SPIRV-Tools sources: Debian 12's (2023.1) predates
//! `SPV_KHR_cooperative_matrix` and rejects the cooperative-matrix shaders' capability, so the
//! tests validate with this one (`FPSHADER_SPIRV_VAL`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// What [`ensure`] provides.
pub struct Built {
    /// The folder holding `libshaderc_combined.a`.
    pub lib_dir: PathBuf,
    /// `spirv-val` of the vendored SPIRV-Tools.
    pub spirv_val: PathBuf,
}

/// shaderc's library (unless `SHADERC_LIB_DIR` names the user's own) and `spirv-val`, built now
/// if they are not there yet.
pub fn ensure() -> Result<Built, String> {
    let (version, source) = vendored_source()?;
    let root = cache_root().join(format!("shaderc-sys-{version}"));
    let lib_dir = root.join("lib");
    let lib = lib_dir.join("libshaderc_combined.a");
    let spirv_val = root.join("bin").join("spirv-val");
    // the user's own build wins
    let user = std::env::var_os("SHADERC_LIB_DIR").map(PathBuf::from);
    let need_lib = user.is_none() && !lib.is_file();
    if need_lib || !spirv_val.is_file() {
        eprintln!(
            "xtask: building shaderc {version} once into {} (several minutes)",
            root.display()
        );
        build(&source, &root, need_lib)?;
    }
    Ok(Built {
        lib_dir: user.unwrap_or(lib_dir),
        spirv_val,
    })
}

/// Builds `spirv-val`, and the library when `lib` is set, into `root`'s `bin` and `lib`.
fn build(source: &Path, root: &Path, lib: bool) -> Result<(), String> {
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
                "-DSPIRV_WERROR=OFF",
            ])
            // -O1 instead of Release's -O3: on a 2-core machine the build takes 486 s instead
            // of 613 (884 against 1130 CPU-seconds), and compiling `shaders/` in all variants
            // 13.4 s instead of 11.7; the build runs once per machine, the shaders a few times
            .args([
                "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG",
                "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG",
            ]),
    )?;
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    // (cmake target, the file it builds, the cache folder it goes to)
    let outputs: Vec<_> = [
        ("spirv-val", "spirv-val", "bin"),
        ("shaderc_combined", "libshaderc_combined.a", "lib"),
    ]
    .into_iter()
    .filter(|(target, _, _)| lib || *target == "spirv-val")
    .collect();
    crate::run(
        Command::new("cmake")
            .arg("--build")
            .arg(&build)
            .arg("--target")
            .args(outputs.iter().map(|(target, _, _)| target))
            .arg("--parallel")
            .arg(jobs.to_string()),
    )?;
    for (_, name, folder) in outputs {
        let dir = root.join(folder);
        let built = find(&build, name)
            .filter(|p| p.is_file())
            .ok_or_else(|| format!("no {name} under {}", build.display()))?;
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        // copy then rename, so an interrupted copy never looks like a finished file
        let partial = dir.join(format!("{name}.partial"));
        std::fs::copy(&built, &partial).map_err(|e| format!("{}: {e}", partial.display()))?;
        let done = dir.join(name);
        std::fs::rename(&partial, &done).map_err(|e| format!("{}: {e}", done.display()))?;
    }
    let _ = std::fs::remove_dir_all(&build);
    Ok(())
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
