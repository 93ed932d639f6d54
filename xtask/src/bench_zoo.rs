//! `cargo xtask bench zoo [LOOPS [THREADS]]`: `fpshader bench --all tests/zoo` against ncnn's
//! wheel (`bench/ncnn_zoo_bench.py`) on the same models, same machine, same run: the GPU
//! (default adapter for fpshader, ncnn's first Vulkan device) and then the CPU with the same
//! threads; one table row per model with the ratio fpshader / ncnn of the minimum latency.

use std::collections::BTreeMap;
use std::process::Command;

/// `name → min ms` from the lines both tools print (`NAME  min = X  max = …`).
fn minima(output: &str) -> BTreeMap<String, f64> {
    output
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next()?;
            (words.next()? == "min" && words.next()? == "=")
                .then(|| words.next()?.parse().ok())
                .flatten()
                .map(|ms| (name.to_string(), ms))
        })
        .collect()
}

fn capture(cmd: &mut Command) -> Result<String, String> {
    eprintln!("xtask: {cmd:?}");
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    eprint!("{text}");
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(text)
}

/// Runs the comparison; `args` are LOOPS and THREADS.
pub fn run(args: &[&str]) -> Result<(), String> {
    let loops = args.first().copied().unwrap_or("10");
    let cores = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .to_string();
    let threads = args.get(1).copied().unwrap_or(&cores);
    crate::cargo(&["build", "--release", "-p", "fpshader", "--bin", "fpshader"])?;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("no workspace root")?
        .to_path_buf();
    let fpshader = root.join("target/release/fpshader");
    let zoo = root.join("tests/zoo");
    let python = std::env::var("FPSHADER_NCNN_PYTHON").map_err(|_| "no ncnn python")?;
    let script = root.join("bench/ncnn_zoo_bench.py");
    let ours_cmd = |loops: &str, cpu: bool| {
        let mut ours = Command::new(&fpshader);
        ours.arg("bench")
            .arg("--all")
            .arg(&zoo)
            .args(["--loops", loops]);
        if cpu {
            ours.args(["--cpu", "--threads", threads]);
        }
        ours
    };
    let theirs_cmd = |loops: &str, class: &str| {
        let mut theirs = Command::new(&python);
        theirs.arg(&script).arg(&zoo).args([loops, threads, class]);
        theirs
    };
    for (class, cpu) in [("gpu", false), ("cpu", true)] {
        if !cpu {
            // a GPU's clocks settle only under load (an H200 timed ncnn up to 2.4x slower in a
            // first round): one untimed round of both first
            eprintln!("xtask: warm-up round");
            capture(&mut ours_cmd("10", false))?;
            capture(&mut theirs_cmd("10", class))?;
        }
        let ours = minima(&capture(&mut ours_cmd(loops, cpu))?);
        let theirs = minima(&capture(&mut theirs_cmd(loops, class))?);
        println!("{class}: model, fpshader min ms, ncnn min ms, ratio (fpshader / ncnn)");
        for (name, ms) in &ours {
            match theirs.get(name) {
                Some(n) => println!("{class} {name:>16} {ms:9.2} {n:9.2} {:6.2}", ms / n),
                None => println!("{class} {name:>16} {ms:9.2}        —"),
            }
        }
    }
    Ok(())
}
