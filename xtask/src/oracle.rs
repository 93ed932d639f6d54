//! ncnn's own Python wheel, the tests' oracle, in a project virtualenv (`target/oracle-venv`).

use std::path::PathBuf;
use std::process::Command;

/// The pinned oracle: ncnn's PyPI wheel and numpy.
const PACKAGES: &[&str] = &["ncnn==1.0.20261020", "numpy<3"];

/// The virtualenv's python, created and filled if needed.
pub fn ensure() -> Result<PathBuf, String> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace_root().join("target"));
    let venv = target.join("oracle-venv");
    let python = venv.join("bin").join("python");
    let ok = |python: &PathBuf| {
        Command::new(python)
            .args(["-c", "import ncnn, numpy"])
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
