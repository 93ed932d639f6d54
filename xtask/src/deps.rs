//! System packages the project needs: installed by name with apt where possible, then checked
//! file by file, so that a step never fails half an hour later on something a machine lacked.
//!
//! Each requirement names the Debian package and what a later step uses from it (a command on the
//! `PATH` or a file). Packages are installed with `--no-install-recommends`, so every package whose
//! files a step needs is listed here by name: the aarch64 C runtime (`libc6-dev-arm64-cross`) is
//! only a recommendation of `gcc-aarch64-linux-gnu`, and its absence once hid behind machines that
//! happened to have it.

use std::path::Path;
use std::process::Command;

/// What a later step uses from a package.
#[derive(Clone, Copy, Debug)]
pub enum Provides {
    /// A command on the `PATH`.
    Command(&'static str),
    /// A file at one of these paths (`{arch}` is the Debian multiarch triplet, e.g.
    /// `x86_64-linux-gnu`).
    File(&'static [&'static str]),
    /// A file of this name in one of these folders (`{arch}` as above, `{cpu}` the CPU's name,
    /// e.g. `x86_64`).
    FileIn(&'static [&'static str], &'static str),
    /// A module `python3` imports.
    PythonModule(&'static str),
}

/// A Debian package and what of it a later step needs.
#[derive(Clone, Copy, Debug)]
pub struct Requirement {
    /// The Debian package to install.
    pub package: &'static str,
    /// What the step that needs it uses.
    pub provides: Provides,
    /// Which step needs it (for the message).
    pub why: &'static str,
}

const fn req(package: &'static str, provides: Provides, why: &'static str) -> Requirement {
    Requirement {
        package,
        provides,
        why,
    }
}

const LIB_DIRS: &[&str] = &["/usr/lib/{arch}", "/usr/lib64", "/usr/lib", "/lib/{arch}"];

/// Everything `cargo xtask test`, `demo` and `bench` need on any machine.
pub const BASE: &[Requirement] = &[
    // shaderc-sys's C++ (glslang, SPIRV-Tools, shaderc), built once per machine (shaderc.rs)
    req("cmake", Provides::Command("cmake"), "shaderc's C++ build"),
    req(
        "ninja-build",
        Provides::Command("ninja"),
        "shaderc's C++ build",
    ),
    req("g++", Provides::Command("c++"), "shaderc's C++ build"),
    req(
        "python3",
        Provides::Command("python3"),
        "shaderc's C++ build",
    ),
    req("git", Provides::Command("git"), "shaderc's C++ build"),
    // the build benchmark's baseline, and SPIR-V tools in tests
    req("glslc", Provides::Command("glslc"), "the build benchmark"),
    // peak memory in the build-time benchmark
    req(
        "time",
        Provides::File(&["/usr/bin/time"]),
        "the build-time benchmark",
    ),
    // software Vulkan (lavapipe) for the GPU tests, through the Vulkan loader
    req(
        "libvulkan1",
        Provides::FileIn(LIB_DIRS, "libvulkan.so.1"),
        "the GPU tests (Vulkan loader)",
    ),
    req(
        "mesa-vulkan-drivers",
        Provides::FileIn(&["/usr/share/vulkan/icd.d"], "lvp_icd.{cpu}.json"),
        "the GPU tests (lavapipe)",
    ),
    // llvmpipe OpenGL through EGL: wgpu's GL backend, the second real backend of the GPU tests
    req(
        "libegl1",
        Provides::FileIn(LIB_DIRS, "libEGL.so.1"),
        "the GL tests",
    ),
    req(
        "libegl-mesa0",
        Provides::FileIn(LIB_DIRS, "libEGL_mesa.so.0"),
        "the GL tests",
    ),
    req(
        "libgl1-mesa-dri",
        Provides::FileIn(
            &["/usr/lib/{arch}/dri", "/usr/lib64/dri", "/usr/lib/dri"],
            "swrast_dri.so",
        ),
        "the GL tests",
    ),
    // ncnn's wheel and Arm's tools, the oracles, in a virtualenv
    req(
        "python3-venv",
        Provides::PythonModule("ensurepip"),
        "the oracles' virtualenv",
    ),
];

/// The aarch64 tests under qemu (emulated.rs): the cross linker, the aarch64 C runtime it links
/// against and qemu loads the tests with, and the emulator.
pub const AARCH64: &[Requirement] = &[
    req(
        "gcc-aarch64-linux-gnu",
        Provides::Command("aarch64-linux-gnu-gcc"),
        "the aarch64 tests (linker)",
    ),
    req(
        "libc6-dev-arm64-cross",
        Provides::File(&["/usr/aarch64-linux-gnu/lib/crti.o"]),
        "the aarch64 tests (C runtime: crti.o, libdl)",
    ),
    req(
        "libc6-dev-arm64-cross",
        Provides::File(&["/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1"]),
        "the aarch64 tests (qemu's loader)",
    ),
    req(
        "qemu-user",
        Provides::Command("qemu-aarch64"),
        "the aarch64 tests (emulator)",
    ),
];

/// Installs what `reqs` lack (as root with apt-get), then checks every command and file, and fails
/// naming the exact package for anything still missing.
pub fn ensure(reqs: &[Requirement]) -> Result<(), String> {
    let missing = missing_packages(reqs);
    if !missing.is_empty() {
        let list = missing.join(" ");
        if !(which("apt-get") && is_root()) {
            return Err(format!(
                "missing system packages ({}); on Debian or Ubuntu run:\n    sudo apt-get install -y --no-install-recommends {list}",
                describe(reqs, &missing)
            ));
        }
        eprintln!("xtask: installing {list}");
        run("apt-get", &["update", "-qq"])?;
        let mut args = vec!["install", "-y", "-qq", "--no-install-recommends"];
        args.extend(missing.iter().copied());
        run("apt-get", &args)?;
    }
    let still = missing_packages(reqs);
    if still.is_empty() {
        return Ok(());
    }
    Err(format!(
        "still missing after installing: {}; install the package{} {} by hand",
        describe(reqs, &still),
        if still.len() > 1 { "s" } else { "" },
        still.join(" ")
    ))
}

/// The packages of `reqs` whose command or file is not there, each once, in order.
fn missing_packages(reqs: &[Requirement]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for r in reqs {
        if !present(r.provides) && !out.contains(&r.package) {
            out.push(r.package);
        }
    }
    out
}

fn describe(reqs: &[Requirement], packages: &[&str]) -> String {
    packages
        .iter()
        .map(|p| {
            let r = reqs.iter().find(|r| r.package == *p);
            let what = r.map_or(String::new(), |r| match r.provides {
                Provides::Command(c) => format!("`{c}`"),
                Provides::File(paths) => paths.first().copied().unwrap_or_default().to_string(),
                Provides::FileIn(_, name) => name.to_string(),
                Provides::PythonModule(m) => format!("python3's {m}"),
            });
            let why = r.map_or("", |r| r.why);
            format!("{p} ({what}, for {why})")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether what a package provides is on this machine.
fn present(p: Provides) -> bool {
    let expand = |s: &str| {
        s.replace("{arch}", &multiarch())
            .replace("{cpu}", std::env::consts::ARCH)
    };
    match p {
        Provides::Command(c) => which(c),
        Provides::File(paths) => paths.iter().any(|f| Path::new(&expand(f)).is_file()),
        Provides::FileIn(dirs, name) => dirs
            .iter()
            .any(|d| Path::new(&expand(d)).join(expand(name)).is_file()),
        Provides::PythonModule(m) => Command::new("python3")
            .args(["-c", &format!("import {m}")])
            .output()
            .is_ok_and(|o| o.status.success()),
    }
}

/// The Debian multiarch triplet of this machine (`x86_64-linux-gnu`).
fn multiarch() -> String {
    format!("{}-linux-gnu", std::env::consts::ARCH)
}

/// Whether `cmd` is on the `PATH`.
pub(crate) fn which(cmd: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(cmd).is_file()))
}

/// Whether this process runs as root.
pub(crate) fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn run(cmd: &str, args: &[&str]) -> Result<(), String> {
    crate::run(
        Command::new(cmd)
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_names_its_package_and_a_present_one_does_not() {
        let reqs = [
            req(
                "no-such-package",
                Provides::File(&["/nonexistent/fpshader/crti.o"]),
                "a test",
            ),
            req("coreutils", Provides::Command("ls"), "a test"),
        ];
        assert_eq!(missing_packages(&reqs), ["no-such-package"]);
        let text = describe(&reqs, &["no-such-package"]);
        assert!(text.contains("/nonexistent/fpshader/crti.o") && text.contains("a test"));
    }

    #[test]
    fn the_aarch64_c_runtime_is_asked_for_by_name() {
        // gcc-aarch64-linux-gnu only recommends it, and xtask installs without recommends
        assert!(AARCH64.iter().any(|r| r.package == "libc6-dev-arm64-cross"
            && matches!(r.provides, Provides::File(f) if f[0].ends_with("crti.o"))));
    }
}
