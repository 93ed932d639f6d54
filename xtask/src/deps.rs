//! System packages the project needs, installed with apt when possible.

use std::process::Command;

/// Debian package → a command it provides (to check on systems without dpkg).
const PACKAGES: &[(&str, Option<&str>)] = &[
    // shaderc-sys builds glslang and SPIRV-Tools from source
    ("cmake", Some("cmake")),
    ("git", Some("git")),
    ("python3", Some("python3")),
    ("ninja-build", Some("ninja")),
    // baseline of the build benchmark, and SPIR-V validation in tests
    ("glslc", Some("glslc")),
    ("spirv-tools", Some("spirv-val")),
    // peak memory in the build-time benchmark
    ("time", None),
    // software Vulkan (lavapipe) for GPU tests
    ("mesa-vulkan-drivers", None),
    ("libvulkan1", None),
    // llvmpipe OpenGL through EGL: wgpu's GL backend, the second real backend of the GPU tests
    ("libegl1", None),
    ("libegl-mesa0", None),
    ("libgl1-mesa-dri", None),
];

/// Installs what is missing (as root with apt-get), or explains exactly what to run.
pub fn ensure() -> Result<(), String> {
    ensure_packages(PACKAGES)
}

/// [`ensure`] for `packages` (Debian package → a command it provides).
pub fn ensure_packages(packages: &[(&str, Option<&str>)]) -> Result<(), String> {
    let missing = missing_packages(packages);
    if missing.is_empty() {
        return Ok(());
    }
    let list = missing.join(" ");
    let has_apt = which("apt-get");
    if has_apt && is_root() {
        eprintln!("xtask: installing {list}");
        run("apt-get", &["update", "-qq"])?;
        let mut args = vec!["install", "-y", "-qq", "--no-install-recommends"];
        args.extend(missing.iter().copied());
        run("apt-get", &args)?;
        let still = missing_packages(packages);
        if still.is_empty() {
            return Ok(());
        }
        return Err(format!("still missing after apt-get: {}", still.join(" ")));
    }
    if has_apt {
        Err(format!(
            "missing system packages; run:\n    sudo apt-get install -y {list}"
        ))
    } else {
        Err(format!(
            "missing tools ({list}); install them with your package manager"
        ))
    }
}

fn missing_packages<'a>(packages: &[(&'a str, Option<&str>)]) -> Vec<&'a str> {
    let dpkg = which("dpkg-query");
    packages
        .iter()
        .filter(|(pkg, cmd)| {
            if dpkg {
                !dpkg_installed(pkg)
            } else {
                cmd.is_some_and(|c| !which(c))
            }
        })
        .map(|(pkg, _)| *pkg)
        .collect()
}

fn dpkg_installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", pkg])
        .output()
        .is_ok_and(|o| {
            o.status.success() && String::from_utf8_lossy(&o.stdout).contains("ok installed")
        })
}

/// Whether `cmd` is on the `PATH`.
pub(crate) fn which(cmd: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(cmd).is_file()))
}

fn is_root() -> bool {
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
