//! The runtime's CPU tests built for aarch64 and run under qemu on an x86_64 Linux host: the
//! NEON paths (pack4 products, packed depthwise and Winograd blocks, the `multiversion` NEON
//! clones) against ncnn's wheel, which no x86 CI machine takes otherwise. The wheel stays
//! native: the tests start it as a subprocess, which the kernel runs outside the emulator.

use std::process::Command;

use crate::deps;

/// The emulated target.
const TARGET: &str = "aarch64-unknown-linux-gnu";

/// Where that C library lies (qemu's `-L`).
const SYSROOT: &str = "/usr/aarch64-linux-gnu";

/// Set to skip the emulated run (a host without apt or rustup); CI never sets it.
const SKIP: &str = "FPSHADER_SKIP_AARCH64";

/// Whether this host runs the emulated tests (x86_64 Linux, not skipped by [`SKIP`]).
pub fn wanted() -> bool {
    if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        eprintln!("xtask: the aarch64 tests under qemu run on x86_64 Linux hosts only; skipped");
        return false;
    }
    if std::env::var_os(SKIP).is_some() {
        eprintln!("xtask: {SKIP} is set; the aarch64 tests under qemu are skipped");
        return false;
    }
    true
}

/// What the emulated tests need, checked before the first build: the cross linker, the aarch64 C
/// runtime, qemu ([`deps::AARCH64`]) and the target's standard library.
pub fn prepare() -> Result<(), String> {
    deps::ensure(deps::AARCH64)?;
    if !deps::which("rustup") {
        return Err(format!(
            "the aarch64 tests need the target's standard library: install rustup and run \
             `rustup target add {TARGET}`, or set {SKIP}=1"
        ));
    }
    crate::run(Command::new("rustup").args(["target", "add", TARGET]))
}

/// Builds the runtime's unit tests and net tests for aarch64 (`--cfg fpshader_emulated`: no
/// shaderc linked, the tests that spawn the CLI ignored) and runs them under qemu, GPU tests
/// skipped (the native run has them). [`prepare`] must have run.
pub fn test() -> Result<(), String> {
    let key = TARGET.to_uppercase().replace('-', "_");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let args = [
        "test",
        "--profile",
        "emulated",
        "--target",
        TARGET,
        "-p",
        "fpshader",
        "--lib",
        "--test",
        "net",
    ];
    eprintln!("xtask: cargo {} (under qemu-aarch64)", args.join(" "));
    crate::run(
        Command::new(cargo)
            .args(args)
            .current_dir(crate::workspace_root())
            // RUSTFLAGS would override the target's flags below
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env(
                format!("CARGO_TARGET_{key}_LINKER"),
                "aarch64-linux-gnu-gcc",
            )
            .env(
                format!("CARGO_TARGET_{key}_RUSTFLAGS"),
                "--cfg fpshader_emulated",
            )
            .env(
                format!("CARGO_TARGET_{key}_RUNNER"),
                format!("qemu-aarch64 -L {SYSROOT}"),
            )
            .env("FPSHADER_SKIP_GPU", "1"),
    )
}
