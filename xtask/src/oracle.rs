//! ncnn's own Python wheel, the tests' oracle, in a project virtualenv (`target/oracle-venv`).

use std::path::PathBuf;
use std::process::Command;

/// The pinned oracles: ncnn's PyPI wheel and numpy, and Arm's ML SDK tools for the VGF tests
/// (model converter, `vgf_dump`, scenario runner, emulation layer; their binaries land in the
/// virtualenv's `bin/` next to python).
const PACKAGES: &[&str] = &[
    "ncnn==1.0.20261020",
    "numpy<3",
    "ai-ml-sdk-model-converter==0.11.0",
    "ai-ml-sdk-vgf-library==0.11.0",
    "ai-ml-sdk-scenario-runner==0.11.0",
    "ai-ml-emulation-layer-for-vulkan==0.11.0",
];

/// The virtualenv's python, created and filled if needed.
pub fn ensure() -> Result<PathBuf, String> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace_root().join("target"));
    let venv = target.join("oracle-venv");
    let python = venv.join("bin").join("python");
    let ok = |python: &PathBuf| {
        Command::new(python)
            .args(["-c", "import ncnn, numpy, model_converter, vgf_lib"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if ok(&python) {
        return Ok(python);
    }
    eprintln!("xtask: installing ncnn's wheel into {}", venv.display());
    crate::run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    crate::run(
        Command::new(&python)
            .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
            .args(PACKAGES),
    )?;
    if ok(&python) {
        Ok(python)
    } else {
        Err(format!(
            "{} cannot import ncnn after installing it",
            python.display()
        ))
    }
}
