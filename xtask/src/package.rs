//! The crates as a user gets them: `cargo package` of `fpshader-build`, `fpshader-macro` and
//! `fpshader` with verification, then a crate outside the workspace that depends on the
//! *packaged* `fpshader` (its registry dependency patched onto `cargo package`'s unpacked
//! output) and runs one of ncnn's benchmark models on the GPU (lavapipe in CI) and on the CPU.
//! The consumer is built with the C++ compiler and cmake made to fail and must not have
//! `shaderc-sys` in its graph: the runtime needs no C++ toolchain.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::workspace_root;

/// The dev profile without debug information, for the verification builds and the consumer.
const NO_DEBUG: (&str, &str) = ("CARGO_PROFILE_DEV_DEBUG", "false");

/// The published crates, in dependency order.
const CRATES: &[&str] = &["fpshader-build", "fpshader-macro", "fpshader"];

/// The consumer's program: squeezenet (ncnn's benchmark param) with random weights written in
/// ncnn's `.bin` layout, on a GPU adapter (an emulated one allowed) and on the CPU, compared.
const MAIN: &str = r#"use std::sync::Arc;

use fpshader::layer::RunOptions;
use fpshader::net::Net;
use fpshader::{Context, ContextOptions, Mat};

/// Random weights for the param's Convolution layers, in ncnn's `.bin` layout (a zero tag, then
/// fp32 weights, then the bias).
fn weights(param: &str) -> Vec<u8> {
    let mut seed = 2026u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        ((seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    };
    let mut out = Vec::new();
    for line in param.lines().skip(2) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.first() != Some(&"Convolution") {
            continue;
        }
        let value = |k: &str| {
            fields
                .iter()
                .find_map(|f| f.strip_prefix(k))
                .and_then(|v| v.parse::<usize>().ok())
                .expect("a Convolution line with 0= and 6=")
        };
        let (outputs, size) = (value("0="), value("6="));
        let bound = (4.5 / (size / outputs) as f32).sqrt();
        out.extend(0u32.to_le_bytes());
        out.extend((0..size).flat_map(|_| (next() * bound).to_le_bytes()));
        if fields.contains(&"5=1") {
            out.extend((0..outputs).flat_map(|_| (next() * 0.1).to_le_bytes()));
        }
    }
    out
}

fn run(param: &str, bin: &[u8], ctx: Option<Arc<Context>>) -> Result<Vec<f32>, fpshader::Error> {
    let mut net = Net::new();
    net.opt = RunOptions::fp32();
    if let Some(ctx) = ctx {
        net.set_context(ctx);
    }
    net.load_param_str("squeezenet.param", param)?;
    net.load_model_bytes(bin)?;
    let (w, h) = (67, 67);
    let values: Vec<f32> = (0..w * h * 3).map(|i| ((i * 7919) % 255) as f32 / 255.0).collect();
    let mut ex = net.create_extractor()?;
    ex.input("data", Mat::from_values(w, h, 3, &values)?)?;
    Ok(ex.extract("output")?.to_values())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let param = std::fs::read_to_string("squeezenet.param")?;
    let bin = weights(&param);
    let ctx = Context::new(ContextOptions {
        allow_cpu_adapter: true,
        ..Default::default()
    })?;
    let name = ctx.describe();
    let gpu = run(&param, &bin, Some(Arc::new(ctx)))?;
    let cpu = run(&param, &bin, None)?;
    let diff = gpu.iter().zip(&cpu).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    let top = |v: &[f32]| (0..v.len()).max_by(|&a, &b| v[a].total_cmp(&v[b]));
    println!(
        "consumer: squeezenet on {name}: {} classes, max |gpu - cpu| {diff:.2e}, top-1 {:?} / {:?}",
        gpu.len(),
        top(&gpu),
        top(&cpu)
    );
    if gpu.len() != 1000 || cpu.len() != 1000 || diff > 1e-4 || top(&gpu) != top(&cpu) {
        return Err("the packaged fpshader's GPU result differs from its CPU result".into());
    }
    Ok(())
}
"#;

/// Packages and verifies the crates, then builds and runs the consumer; `cold` builds it in an
/// empty target dir and reports the time.
pub fn check(cold: bool) -> Result<(), String> {
    let root = workspace_root();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    forget_unpacked_sources(&target)?;
    let mut args = vec!["package", "--allow-dirty"];
    for c in CRATES {
        args.extend(["-p", c]);
    }
    let started = Instant::now();
    // without debug information, as the workspace builds its dependencies: the verification
    // builds then share those the test build made with the same features
    // SAFETY: xtask is single-threaded, and nothing reads the environment concurrently
    unsafe { std::env::set_var(NO_DEBUG.0, NO_DEBUG.1) };
    let packaged_ok = crate::cargo(&args);
    // SAFETY: as above
    unsafe { std::env::remove_var(NO_DEBUG.0) };
    packaged_ok?;
    eprintln!(
        "xtask: {} packaged and verified in {:.0} s",
        CRATES.join(", "),
        started.elapsed().as_secs_f64()
    );
    let packaged = |name: &str| target.join("package").join(format!("{name}-{}", version()));
    for c in CRATES {
        let dir = packaged(c);
        if !dir.join("Cargo.toml").is_file() {
            return Err(format!("cargo package left no {}", dir.display()));
        }
    }
    let dir = std::env::temp_dir().join(format!("fpshader-consumer-{}", std::process::id()));
    let result = consumer(&dir, &packaged, &target, cold);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// `cargo package` verifies each crate against the others through a local registry of the
/// packaged crates, which cargo unpacks under `$CARGO_HOME/registry/src/` once and never again
/// for the same name and version, and whose builds in the shared `target` it takes as fresh
/// for the same version: an earlier run's sources and builds would stand in for this run's (a
/// file moved since then is missing, and the verification fails on the stale build, or passes
/// on it). Both go first: the unpacked sources, and the fingerprints of builds from them.
fn forget_unpacked_sources(target: &Path) -> Result<(), String> {
    forget_registry_builds(target)?;
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok_or("neither CARGO_HOME nor HOME is set")?;
    let Ok(registries) = std::fs::read_dir(home.join("registry").join("src")) else {
        return Ok(());
    };
    for registry in registries.flatten() {
        for c in CRATES {
            let dir = registry.path().join(format!("{c}-{}", version()));
            if dir.is_dir() {
                std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
        }
    }
    Ok(())
}

/// Removes the fingerprints of `target`'s builds of the published crates from registry
/// sources (their dep-info names files under `registry/src/`), so that cargo builds them again.
fn forget_registry_builds(target: &Path) -> Result<(), String> {
    let Ok(profiles) = std::fs::read_dir(target) else {
        return Ok(());
    };
    for profile in profiles.flatten() {
        let Ok(deps) = std::fs::read_dir(profile.path().join("deps")) else {
            continue;
        };
        for dep in deps.flatten() {
            let name = dep.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".d") else {
                continue;
            };
            let Some((krate, hash)) = stem.rsplit_once('-') else {
                continue;
            };
            let krate = krate.replace('_', "-");
            let ours = CRATES.contains(&krate.as_str());
            let from_registry = ours
                && std::fs::read_to_string(dep.path()).is_ok_and(|d| d.contains("/registry/src/"));
            if from_registry {
                let fingerprint =
                    (profile.path().join(".fingerprint")).join(format!("{krate}-{hash}"));
                if fingerprint.is_dir() {
                    std::fs::remove_dir_all(&fingerprint)
                        .map_err(|e| format!("{}: {e}", fingerprint.display()))?;
                }
            }
        }
    }
    Ok(())
}

fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

fn consumer(
    dir: &Path,
    packaged: &dyn Fn(&str) -> PathBuf,
    target: &Path,
    cold: bool,
) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("src")).map_err(|e| e.to_string())?;
    let manifest = format!(
        r#"[package]
name = "fpshader-consumer-check"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
fpshader = "{version}"

# the packaged crates stand in for the registry's
[patch.crates-io]
fpshader = {{ path = "{runtime}" }}
fpshader-build = {{ path = "{build}" }}
fpshader-macro = {{ path = "{macro_}" }}

[workspace]
"#,
        version = version(),
        runtime = packaged("fpshader").display(),
        build = packaged("fpshader-build").display(),
        macro_ = packaged("fpshader-macro").display(),
    );
    let write = |rel: &str, bytes: &[u8]| {
        let p = dir.join(rel);
        std::fs::write(&p, bytes).map_err(|e| format!("{}: {e}", p.display()))
    };
    write("Cargo.toml", manifest.as_bytes())?;
    write("src/main.rs", MAIN.as_bytes())?;
    let root = workspace_root();
    let param =
        std::fs::read(root.join("tests/zoo/squeezenet.param")).map_err(|e| e.to_string())?;
    write("squeezenet.param", &param)?;
    // the workspace's lock pins the same versions, so the build needs no registry access
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).map_err(|e| e.to_string())?;
    // the verification builds' target dir: the consumer then builds only fpshader itself
    let target_dir = if cold {
        dir.join("target")
    } else {
        target.to_path_buf()
    };
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let run = |args: &[&str]| -> Result<std::process::Output, String> {
        Command::new(&cargo)
            .args(args)
            .arg("--offline")
            .current_dir(dir)
            .env("CARGO_TARGET_DIR", &target_dir)
            // the runtime must build without C++: any attempt to compile it fails
            .env("CXX", "/bin/false")
            .env("CMAKE", "/bin/false")
            .env_remove("SHADERC_LIB_DIR")
            .env_remove("RUSTFLAGS")
            .env(NO_DEBUG.0, NO_DEBUG.1)
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))
    };
    let tree = run(&["tree", "--prefix", "none", "-e", "normal,build"])?;
    let graph = String::from_utf8_lossy(&tree.stdout);
    if !tree.status.success() {
        return Err(format!(
            "cargo tree failed in the consumer: {}",
            String::from_utf8_lossy(&tree.stderr)
        ));
    }
    if let Some(line) = graph
        .lines()
        .find(|l| l.starts_with("shaderc") || l.starts_with("cmake"))
    {
        return Err(format!(
            "the packaged fpshader pulls in {line}: it must build without C++"
        ));
    }
    eprintln!(
        "xtask: building a crate that depends on the packaged fpshader ({})",
        dir.display()
    );
    let started = Instant::now();
    // the dev profile, as the verification builds: they share the dependencies' builds
    let build = run(&["build", "--quiet"])?;
    let took = started.elapsed().as_secs_f64();
    if !build.status.success() {
        return Err(format!(
            "the consumer of the packaged crates did not build:\n{}",
            String::from_utf8_lossy(&build.stderr)
        ));
    }
    eprintln!(
        "xtask: the consumer built in {took:.0} s ({})",
        if cold {
            "cold: empty target dir"
        } else {
            "shared target dir"
        }
    );
    let exe = target_dir.join("debug").join("fpshader-consumer-check");
    crate::run(Command::new(exe).current_dir(dir))
}
