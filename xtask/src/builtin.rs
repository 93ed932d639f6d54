//! The runtime's built-in shaders, compiled ahead and checked in (`runtime/builtin/`).
//!
//! The `fpshader` crate ships its layer shaders as SPIR-V with their reflection, so that it builds
//! without shaderc, cmake or a C++ compiler. `cargo xtask shaders` compiles `shaders/` in every
//! variant through `fpshaderc embed` (the build.rs helper's code generation) into that folder;
//! `cargo xtask test` compiles them again into a scratch folder and fails when the checked-in
//! copy differs, so it never drifts from `shaders/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::shaders::{BUILTIN_OPTIONS, fpshaderc};
use crate::workspace_root;

/// The checked-in folder, relative to the workspace root.
const BUILTIN: &str = "runtime/builtin";

/// How the generated code finds the blobs inside the packaged crate.
const BLOB_EXPR: &str = r#"::core::env!("CARGO_MANIFEST_DIR"), "/builtin/spirv""#;

/// Compiles `shaders/` into `runtime/builtin/`, replacing what was there.
pub fn regenerate() -> Result<(), String> {
    let scratch = generate()?;
    let target = workspace_root().join(BUILTIN);
    let _ = std::fs::remove_dir_all(&target);
    copy_tree(&scratch, &target)?;
    let _ = std::fs::remove_dir_all(&scratch);
    let files = tree(&target)?;
    let bytes: u64 = files.values().map(|b| b.len() as u64).sum();
    eprintln!(
        "xtask: {} written ({} files, {:.1} MB)",
        target.display(),
        files.len(),
        bytes as f64 / 1e6
    );
    Ok(())
}

/// Fails unless `runtime/builtin/` is what `shaders/` compiles to now.
pub fn check() -> Result<(), String> {
    let scratch = generate()?;
    let fresh = tree(&scratch)?;
    let _ = std::fs::remove_dir_all(&scratch);
    let target = workspace_root().join(BUILTIN);
    let checked_in = tree(&target)?;
    let mut differ: Vec<String> = Vec::new();
    for (name, bytes) in &fresh {
        match checked_in.get(name) {
            None => differ.push(format!("{name} (missing)")),
            Some(old) if old != bytes => differ.push(format!("{name} (differs)")),
            Some(_) => {}
        }
    }
    differ.extend(
        checked_in
            .keys()
            .filter(|n| !fresh.contains_key(*n))
            .map(|n| format!("{n} (stale)")),
    );
    if differ.is_empty() {
        eprintln!(
            "xtask: {BUILTIN} is up to date with shaders/ ({} files)",
            fresh.len()
        );
        return Ok(());
    }
    differ.truncate(20);
    Err(format!(
        "{BUILTIN} is out of date with shaders/: {}; run `cargo xtask shaders` and commit the result",
        differ.join(", ")
    ))
}

/// Compiles `shaders/` into a scratch folder and returns it.
fn generate() -> Result<PathBuf, String> {
    let tool = fpshaderc()?;
    let root = workspace_root();
    let scratch = std::env::temp_dir().join(format!("fpshader-builtin-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    crate::run(
        Command::new(tool)
            .arg("embed")
            .arg(root.join("shaders"))
            .args(["--opts", BUILTIN_OPTIONS, "-I"])
            .arg(root.join("shaders").join("include"))
            .arg("-o")
            .arg(&scratch)
            .args(["--file", "shaders.rs", "--blobs"])
            .arg(scratch.join("spirv"))
            .args(["--blob-expr", BLOB_EXPR, "--cache"])
            .arg(target.join("fpshader-cache")),
    )?;
    split_modules(&scratch)?;
    Ok(scratch)
}

/// Moves each shader module's static out of the generated `shaders.rs` into a file of its own
/// under `modules/`, included from there: one file of every module's variants and reflection
/// ran to 8,000 lines, past what any file of the project may have.
fn split_modules(scratch: &Path) -> Result<(), String> {
    let path = scratch.join("shaders.rs");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let lines: Vec<&str> = text.lines().collect();
    let header = lines.first().copied().unwrap_or_default();
    let dir = scratch.join("modules");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut main = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        // a module: its doc line, then everything to the `};` closing its static
        let Some(name) = lines[i]
            .strip_prefix("/// The `")
            .and_then(|l| l.split_once('`'))
            .map(|(name, _)| name)
        else {
            main.push(lines[i].to_string());
            i += 1;
            continue;
        };
        let end = (i..lines.len())
            .find(|&j| lines[j] == "};")
            .ok_or_else(|| format!("{}: module `{name}` never ends", path.display()))?;
        let file = dir.join(format!("{name}.rs"));
        let body = format!("{header}\n\n{}\n", lines[i..=end].join("\n"));
        std::fs::write(&file, body).map_err(|e| format!("{}: {e}", file.display()))?;
        main.push(format!(
            "include!(::core::concat!(::core::env!(\"CARGO_MANIFEST_DIR\"), \"/builtin/modules/{name}.rs\"));"
        ));
        i = end + 1;
    }
    std::fs::write(&path, main.join("\n") + "\n").map_err(|e| format!("{}: {e}", path.display()))
}

/// Every file under `dir`, by path relative to it, with its bytes.
fn tree(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                let rel = path.strip_prefix(dir).unwrap_or(&path);
                out.insert(rel.display().to_string(), bytes);
            }
        }
    }
    Ok(out)
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    for (rel, bytes) in tree(from)? {
        let path = to.join(&rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}
