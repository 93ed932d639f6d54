//! `cargo xtask bench build`: fpshaderc in all variants vs glslc once per variant, same run.
//!
//! Both sides compile the same expanded text with the same target env and optimization. The
//! baseline is what a build script without fpshader would do: expand each variant (not timed here)
//! and run `glslc` on it; it is timed both one process at a time and with one process per core.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::shaders::{builtin_shaders, compile_all, fpshaderc};
use crate::workspace_root;

pub fn build() -> Result<(), String> {
    let fpshaderc = fpshaderc()?;
    let root = workspace_root().join("target").join("xtask-bench");
    let _ = std::fs::remove_dir_all(&root);
    let include = workspace_root().join("shaders").join("include");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());

    let mut ours = Duration::ZERO;
    let mut jobs: Vec<(PathBuf, PathBuf)> = Vec::new();
    // the subset of jobs that fpshaderc actually compiled (one per unique blob)
    let mut unique_jobs: Vec<(PathBuf, PathBuf)> = Vec::new();
    let (mut variants, mut blobs) = (0, 0);
    for shader in builtin_shaders()? {
        let stem = shader
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let out = root.join("fpshaderc").join(&stem);
        let c = compile_all(&fpshaderc, &shader, &out)?;
        ours += c.time;
        variants += c.variants;
        blobs += c.blobs;
        let (all, unique) = expand_variants(&fpshaderc, &shader, &out, &root.join("glslc"))?;
        jobs.extend(all);
        unique_jobs.extend(unique);
    }

    let glslc_args = |src: &Path, dst: &Path| {
        let mut cmd = Command::new("glslc");
        cmd.args([
            "-fshader-stage=compute",
            "--target-env=vulkan1.1",
            "-O0",
            "-I",
        ])
        .arg(&include)
        .arg(src)
        .arg("-o")
        .arg(dst);
        cmd
    };
    let serial_over = |jobs: &[(PathBuf, PathBuf)]| -> Result<Duration, String> {
        let start = Instant::now();
        for (src, dst) in jobs {
            wait(glslc_args(src, dst).spawn(), src)?;
        }
        Ok(start.elapsed())
    };
    let serial = serial_over(&jobs)?;
    let serial_unique = serial_over(&unique_jobs)?;

    let start = Instant::now();
    for chunk in jobs.chunks(cores) {
        let children: Vec<(Result<Child, std::io::Error>, &PathBuf)> = chunk
            .iter()
            .map(|(src, dst)| (glslc_args(src, dst).spawn(), src))
            .collect();
        for (child, src) in children {
            wait(child, src)?;
        }
    }
    let parallel = start.elapsed();

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("shaders/ in all variants ({variants} variants, {blobs} unique blobs), {cores} cores");
    println!("  fpshaderc --all-variants      {:>9.1} ms", ms(ours));
    println!(
        "  glslc per variant, serial     {:>9.1} ms   ratio {:.2}x",
        ms(serial),
        ms(serial) / ms(ours)
    );
    println!(
        "  glslc per variant, {cores} jobs     {:>9.1} ms   ratio {:.2}x",
        ms(parallel),
        ms(parallel) / ms(ours)
    );
    println!(
        "  glslc per unique blob, serial {:>9.1} ms   ratio {:.2}x  (dedupe credited to glslc)",
        ms(serial_unique),
        ms(serial_unique) / ms(ours)
    );
    Ok(())
}

/// Writes the expanded text of every variant in `out`'s manifest; returns (source, spv) pairs for
/// all variants and for the ones fpshaderc compiled (named in the manifest's file names).
type Jobs = Vec<(PathBuf, PathBuf)>;

fn expand_variants(
    fpshaderc: &Path,
    shader: &Path,
    out: &Path,
    dir: &Path,
) -> Result<(Jobs, Jobs), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let text = std::fs::read_to_string(out.join("manifest.json")).map_err(|e| e.to_string())?;
    let manifest: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let stem = shader
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (mut jobs, mut unique) = (Vec::new(), Vec::new());
    for (name, v) in manifest["variants"]
        .as_object()
        .ok_or("manifest has no variants")?
    {
        let opts: Vec<&str> = v["options"]
            .as_array()
            .map(|a| a.iter().filter_map(|o| o.as_str()).collect())
            .unwrap_or_default();
        let src = dir.join(format!("{stem}.{name}.comp"));
        let status = Command::new(fpshaderc)
            .arg("expand")
            .arg(shader)
            .arg("--opt")
            .arg(opts.join(","))
            .arg("-o")
            .arg(&src)
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("fpshaderc expand failed for {}", src.display()));
        }
        let dst = src.with_extension("spv");
        if v["file"].as_str() == Some(&format!("{stem}.{name}.spv")) {
            unique.push((src.clone(), dst.clone()));
        }
        jobs.push((src, dst));
    }
    Ok((jobs, unique))
}

fn wait(child: Result<Child, std::io::Error>, src: &Path) -> Result<(), String> {
    let status = child
        .and_then(|mut c| c.wait())
        .map_err(|e| format!("cannot run glslc (install it with `cargo xtask deps`): {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("glslc failed on {}", src.display()))
    }
}
