//! `cargo xtask bench buildtime`: what shader compilation costs a `cargo build`.
//!
//! - the `shader!` macro on a cache miss and a cache hit (the invoking file touched, same input);
//! - the runtime's build.rs over the built-in shaders, cold (empty cache) and warm (filled cache);
//! - rustc time and peak memory to embed the built-in blobs as `include_bytes!` of aligned byte
//!   arrays (what fpshader generates) versus literal `u32` arrays.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::external::{External, touch};
use crate::{cargo, workspace_root};

pub fn run() -> Result<(), String> {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let scratch = std::env::temp_dir().join(format!("fpshader-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);

    // 1. the macro, in a crate outside the workspace
    let ext = External::create(&scratch.join("external"))?;
    let warm_cache = scratch.join("cache-macro");
    ext.cargo(&["build", "--quiet"], &warm_cache)?;
    let mut miss = Vec::new();
    let mut hit = Vec::new();
    for i in 0..3 {
        let cold_cache = scratch.join(format!("cache-cold-{i}"));
        ext.touch("src/main.rs")?;
        miss.push(ext.cargo(&["build", "--quiet"], &cold_cache)?);
        ext.touch("src/main.rs")?;
        hit.push(ext.cargo(&["build", "--quiet"], &cold_cache)?);
    }
    println!(
        "shader! (5 variants, 5 blobs), `cargo build` after touching the invoking file, best of 3:"
    );
    println!("  cache miss  {:>8.1} ms", ms(best(&miss)));
    println!("  cache hit   {:>8.1} ms", ms(best(&hit)));

    // 2. the runtime's build.rs over shaders/
    let root = workspace_root();
    let touched = root.join("shaders").join("unaryop.comp");
    let build_runtime = |cache: &Path| -> Result<Duration, String> {
        touch(&touched)?;
        let start = Instant::now();
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--quiet", "-p", "fpshader"])
            .current_dir(&root)
            .env("FPSHADER_CACHE_DIR", cache)
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err("cargo build -p fpshader failed".into());
        }
        Ok(start.elapsed())
    };
    let cache = scratch.join("cache-runtime");
    let cold = build_runtime(&cache)?;
    let warm = build_runtime(&cache)?;
    println!(
        "runtime build.rs (every shader of shaders/ in every variant) + rustc of the crate, after touching a shader:"
    );
    println!("  cold cache  {:>8.1} ms", ms(cold));
    println!("  warm cache  {:>8.1} ms", ms(warm));

    // 3. embedding cost
    cargo(&["build", "--quiet", "-p", "fpshader"])?;
    let blobs = runtime_blobs()?;
    let total: u64 = blobs.iter().map(|(_, n)| *n as u64).sum();
    let dir = scratch.join("embed");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut bytes_src =
        String::from("#[repr(C, align(4))]\npub struct Aligned<T: ?Sized>(pub T);\n");
    let mut words_src = String::new();
    for (i, (path, len)) in blobs.iter().enumerate() {
        bytes_src.push_str(&format!(
            "pub static B{i}: Aligned<[u8; {len}]> = Aligned(*include_bytes!({:?}));\n",
            path.display().to_string()
        ));
        let data = std::fs::read(path).map_err(|e| e.to_string())?;
        let words: Vec<String> = data
            .chunks_exact(4)
            .map(|c| format!("{:#x}", u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect();
        words_src.push_str(&format!(
            "pub static W{i}: [u32; {}] = [{}];\n",
            words.len(),
            words.join(", ")
        ));
    }
    let bytes_rs = dir.join("bytes.rs");
    let words_rs = dir.join("words.rs");
    std::fs::write(&bytes_rs, bytes_src).map_err(|e| e.to_string())?;
    std::fs::write(&words_rs, words_src).map_err(|e| e.to_string())?;
    println!(
        "embedding the built-in blobs ({} blobs, {} KiB) with rustc --crate-type lib, best of 3:",
        blobs.len(),
        total / 1024
    );
    let (bt, bm) = rustc_cost(&bytes_rs, &dir)?;
    let (wt, wm) = rustc_cost(&words_rs, &dir)?;
    println!(
        "  include_bytes! aligned  {:>8.1} ms  {:>7} KiB peak",
        ms(bt),
        bm
    );
    println!(
        "  u32 array literals      {:>8.1} ms  {:>7} KiB peak   ({:.1}x time, {:.1}x memory)",
        ms(wt),
        wm,
        ms(wt) / ms(bt),
        wm as f64 / bm.max(1) as f64
    );
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

fn best(times: &[Duration]) -> Duration {
    times.iter().copied().min().unwrap_or_default()
}

/// The `.spv` files the runtime's build script wrote, with their sizes.
fn runtime_blobs() -> Result<Vec<(PathBuf, usize)>, String> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    let build = target.join("debug").join("build");
    let newest = std::fs::read_dir(&build)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("fpshader-"))
                && p.join("out").join("fpshader").is_dir()
        })
        .max_by_key(|p| {
            std::fs::metadata(p.join("out"))
                .and_then(|m| m.modified())
                .ok()
        })
        .ok_or("no runtime build output found")?;
    let mut blobs: Vec<(PathBuf, usize)> = std::fs::read_dir(newest.join("out").join("fpshader"))
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| std::fs::metadata(&p).ok().map(|m| (p, m.len() as usize)))
        .collect();
    blobs.sort();
    Ok(blobs)
}

/// Best-of-3 wall time and peak RSS (KiB, from GNU time) of compiling `file` as a library.
fn rustc_cost(file: &Path, out: &Path) -> Result<(Duration, u64), String> {
    let mut best_time = Duration::MAX;
    let mut peak = 0;
    for _ in 0..3 {
        let report = out.join("time.txt");
        let start = Instant::now();
        let status = Command::new("/usr/bin/time")
            .args(["-f", "%M", "-o"])
            .arg(&report)
            .args([
                "rustc",
                "--edition",
                "2024",
                "--crate-type",
                "lib",
                "--emit",
                "link",
                "-o",
            ])
            .arg(out.join("lib.rlib"))
            .arg(file)
            .status()
            .map_err(|e| format!("cannot run /usr/bin/time rustc (apt-get install time): {e}"))?;
        let time = start.elapsed();
        if !status.success() {
            return Err(format!("rustc failed on {}", file.display()));
        }
        let kib: u64 = std::fs::read_to_string(&report)
            .map_err(|e| e.to_string())?
            .trim()
            .parse()
            .map_err(|e| format!("bad time output: {e}"))?;
        best_time = best_time.min(time);
        peak = kib;
    }
    Ok((best_time, peak))
}
