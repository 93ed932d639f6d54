//! `cargo xtask fresh`: CI on a machine that has only what a new one has.
//!
//! A green CI on a machine proves little about a new one: packages installed by hand stay there.
//! This command builds a Debian 12 root from Debian's packages (`debootstrap --variant=minbase`)
//! holding only the packages a new machine of the project's kind starts with
//! (`xtask/fresh/machine-packages.txt`), kept as a base and reused while that list is unchanged.
//! Each run lays a writable layer over it (overlayfs), mounts this machine's Rust toolchain and
//! Python read-only (the toolchain under a layer of its own, so `rustup target add` writes
//! there and never here), clones the committed `HEAD` into it and runs `bash .ci/run` with a
//! fresh `HOME` and `CARGO_HOME`: every crate downloaded, shaderc built, Mesa's cache empty.
//! Each output line is printed with the time since the start, and the run ends with the time of
//! each xtask step. Linux, as root.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::deps::{self, Provides, Requirement};

/// Debian's mirror and the release a new machine runs.
const MIRROR: &str = "http://deb.debian.org/debian";
const SECURITY: &str = "http://deb.debian.org/debian-security";
const SUITE: &str = "bookworm";

/// The package list, relative to the workspace root.
const LIST: &str = "xtask/fresh/machine-packages.txt";

/// Marks a finished base root; holds the hash of the list it was made from.
const STAMP: &str = ".fpshader-fresh-base";

const TOOLS: &[Requirement] = &[Requirement {
    package: "debootstrap",
    provides: Provides::Command("debootstrap"),
    why: "`cargo xtask fresh`",
}];

/// What the root runs by default.
const CI: &str = "bash .ci/run";

/// Runs the check; `--keep` leaves the run's root mounted and in place for a look inside,
/// `--cmd CMD` runs CMD in the clone instead of CI (to look at the root).
pub fn run(args: &[&str]) -> Result<(), String> {
    let mut keep = false;
    let mut command = CI.to_string();
    let mut rest = args;
    loop {
        match rest {
            [] => break,
            ["--keep", tail @ ..] => {
                keep = true;
                rest = tail;
            }
            ["--cmd", cmd, tail @ ..] => {
                command = cmd.to_string();
                rest = tail;
            }
            _ => return Err("usage: cargo xtask fresh [--keep] [--cmd CMD]".into()),
        }
    }
    if !cfg!(target_os = "linux") || !deps::is_root() {
        return Err(
            "`cargo xtask fresh` needs Linux and root (debootstrap, mounts, chroot)".into(),
        );
    }
    deps::ensure(TOOLS)?;
    let dir = fresh_dir();
    let base = dir.join("base");
    ensure_base(&base)?;
    let run_dir = dir.join("run");
    let mounts = Mounts::lay(&base, &run_dir)?;
    let result = ci(&mounts, &command, &run_dir.join("ci.log"));
    if keep {
        eprintln!(
            "xtask: the root stays mounted at {}; `umount -R` it when done",
            mounts.root.display()
        );
        std::mem::forget(mounts);
    }
    result
}

/// `FPSHADER_FRESH_DIR`, else `fresh/` in the target dir.
fn fresh_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FPSHADER_FRESH_DIR") {
        return PathBuf::from(d);
    }
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace_root().join("target"))
        .join("fresh")
}

/// The base root: minbase Debian 12 plus the new machine's packages, made once per list.
fn ensure_base(base: &Path) -> Result<(), String> {
    let list_path = crate::workspace_root().join(LIST);
    let list =
        std::fs::read_to_string(&list_path).map_err(|e| format!("{}: {e}", list_path.display()))?;
    let stamp = format!("{:016x}", fnv1a(list.as_bytes()));
    if std::fs::read_to_string(base.join(STAMP)).is_ok_and(|s| s.trim() == stamp) {
        eprintln!("xtask: base root {} is up to date", base.display());
        return Ok(());
    }
    let started = Instant::now();
    let _ = std::fs::remove_dir_all(base);
    std::fs::create_dir_all(base).map_err(|e| format!("{}: {e}", base.display()))?;
    eprintln!(
        "xtask: debootstrap --variant=minbase {SUITE} {}",
        base.display()
    );
    crate::run(
        Command::new("debootstrap")
            .args(["--variant=minbase", SUITE])
            .arg(base)
            .arg(MIRROR),
    )?;
    let sources = format!(
        "deb {MIRROR} {SUITE} main\ndeb {MIRROR} {SUITE}-updates main\ndeb {SECURITY} {SUITE}-security main\n"
    );
    write(&base.join("etc/apt/sources.list"), &sources)?;
    let packages: Vec<&str> = list
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    write(&base.join("tmp/machine-packages.txt"), &packages.join("\n"))?;
    // install what Debian 12 has of the list (a few of the machine's packages come from other
    // archives: backports, vendors' repositories), leaving recommends out as the machine's
    // image did not necessarily take them
    let script = "set -e
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-cache pkgnames | sort -u > /tmp/available.txt
sort -u /tmp/machine-packages.txt | comm -12 - /tmp/available.txt > /tmp/install.txt
echo \"installing $(wc -l < /tmp/install.txt) of $(wc -l < /tmp/machine-packages.txt) packages\"
xargs apt-get install -y -qq --no-install-recommends < /tmp/install.txt > /tmp/install.log
apt-get clean
rm -f /tmp/available.txt /tmp/install.txt /tmp/machine-packages.txt /tmp/install.log";
    let mounts = Mounts::system(base)?;
    copy_resolv(base)?;
    let result = chroot_script(base, script);
    drop(mounts);
    result?;
    write(&base.join(STAMP), &stamp)?;
    eprintln!(
        "xtask: base root made in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn chroot_script(root: &Path, script: &str) -> Result<(), String> {
    crate::run(
        Command::new("chroot")
            .arg(root)
            .args(["/usr/bin/env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin"])
            .args(["/bin/sh", "-c", script]),
    )
}

/// The run's mounts, unmounted in reverse order when dropped.
struct Mounts {
    root: PathBuf,
    mounted: Vec<PathBuf>,
}

impl Mounts {
    /// `/proc`, `/sys` and `/dev` inside `root`.
    fn system(root: &Path) -> Result<Mounts, String> {
        let mut m = Mounts {
            root: root.to_path_buf(),
            mounted: Vec::new(),
        };
        m.mount(&["-t", "proc", "proc"], "proc")?;
        m.mount(&["--rbind", "/sys"], "sys")?;
        m.mount(&["--rbind", "/dev"], "dev")?;
        Ok(m)
    }

    /// A writable layer over `base` at `run_dir/root`, this machine's toolchain and Python in it.
    fn lay(base: &Path, run_dir: &Path) -> Result<Mounts, String> {
        // a run left mounted (--keep, or killed) goes first
        let old_root = run_dir.join("root");
        let mounted = std::fs::read_to_string("/proc/mounts")
            .is_ok_and(|m| m.contains(&format!(" {} ", old_root.display())));
        if mounted {
            let _ = Command::new("umount").arg("-R").arg(&old_root).status();
        }
        let _ = std::fs::remove_dir_all(run_dir);
        let dirs = [
            "upper",
            "work",
            "root",
            "rustup-upper",
            "rustup-work",
            "home",
            "tmp",
        ];
        for d in dirs {
            let p = run_dir.join(d);
            std::fs::create_dir_all(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        }
        // a /tmp everyone may write, as Debian makes it
        use std::os::unix::fs::PermissionsExt;
        let tmp = run_dir.join("tmp");
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777))
            .map_err(|e| format!("{}: {e}", tmp.display()))?;
        let root = run_dir.join("root");
        let overlay = |lower: &Path, upper: &str, work: &str| {
            format!(
                "lowerdir={},upperdir={},workdir={}",
                lower.display(),
                run_dir.join(upper).display(),
                run_dir.join(work).display()
            )
        };
        mount(&[
            "-t",
            "overlay",
            "overlay",
            "-o",
            &overlay(base, "upper", "work"),
            &root.display().to_string(),
        ])?;
        let mut m = Mounts::system(&root)?;
        m.mounted.insert(0, root.clone());
        // the empty home (target dir, caches, Mesa's shader cache) and /tmp on this machine's
        // own file system, as on a real machine: through the overlay every write of a build
        // costs more
        for (dir, at) in [("home", "root"), ("tmp", "tmp")] {
            let from = run_dir.join(dir).display().to_string();
            m.mount(&["--bind", &from], at)?;
        }
        copy_resolv(&root)?;
        machine_config(&root)?;
        let toolchain = Toolchain::here()?;
        // rustup's home under a layer of its own: `rustup target add` writes to the layer
        m.mount(
            &[
                "-t",
                "overlay",
                "overlay",
                "-o",
                &overlay(&toolchain.rustup_home, "rustup-upper", "rustup-work"),
            ],
            "opt/rustup",
        )?;
        m.mount(
            &[
                "--bind",
                "-o",
                "ro",
                &toolchain.cargo_bin.display().to_string(),
            ],
            "opt/cargo-bin",
        )?;
        let python = toolchain.python_prefix.display().to_string();
        m.mount(
            &["--bind", "-o", "ro", &python],
            python.trim_start_matches('/'),
        )?;
        if Path::new("/opt/wheels").is_dir() {
            m.mount(&["--bind", "-o", "ro", "/opt/wheels"], "opt/wheels")?;
        }
        Ok(m)
    }

    /// Mounts with `args` (the source last among them) onto `at` inside the root.
    fn mount(&mut self, args: &[&str], at: &str) -> Result<(), String> {
        let target = self.root.join(at);
        std::fs::create_dir_all(&target).map_err(|e| format!("{}: {e}", target.display()))?;
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        all.push(target.display().to_string());
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        mount(&all)?;
        self.mounted.push(target);
        Ok(())
    }
}

impl Drop for Mounts {
    fn drop(&mut self) {
        for target in self.mounted.iter().rev() {
            let ok = Command::new("umount")
                .arg("-R")
                .arg(target)
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                let _ = Command::new("umount").arg("-Rl").arg(target).status();
            }
        }
    }
}

fn mount(args: &[&str]) -> Result<(), String> {
    crate::run(Command::new("mount").args(args))
}

/// This machine's Rust toolchain and Python, which the root borrows read-only.
struct Toolchain {
    rustup_home: PathBuf,
    cargo_bin: PathBuf,
    python_prefix: PathBuf,
}

impl Toolchain {
    fn here() -> Result<Toolchain, String> {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let from_env = |var: &str, default: &str| {
            std::env::var_os(var)
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|h| h.join(default)))
                .ok_or_else(|| format!("neither {var} nor HOME is set"))
        };
        let rustup_home = from_env("RUSTUP_HOME", ".rustup")?;
        let cargo_bin = from_env("CARGO_HOME", ".cargo")?.join("bin");
        if !cargo_bin.join("rustup").is_file() {
            return Err(format!(
                "no rustup in {}: the fresh root borrows a rustup toolchain",
                cargo_bin.display()
            ));
        }
        let out = Command::new("python3")
            .args(["-c", "import sys; print(sys.base_prefix)"])
            .output()
            .map_err(|e| format!("cannot run python3: {e}"))?;
        let python_prefix = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if !python_prefix.join("bin/python3").is_file() {
            return Err(format!(
                "python3's prefix {} has no bin/python3",
                python_prefix.display()
            ));
        }
        Ok(Toolchain {
            rustup_home,
            cargo_bin,
            python_prefix,
        })
    }
}

/// Clones the committed HEAD into the root and runs `bash .ci/run` there, each line timed.
fn ci(mounts: &Mounts, command: &str, log: &Path) -> Result<(), String> {
    let root = &mounts.root;
    let src = root.join("root/fpshader");
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .current_dir(crate::workspace_root())
        .output()
        .is_ok_and(|o| !o.stdout.is_empty());
    if dirty {
        eprintln!("xtask: uncommitted changes are not part of the check (it clones HEAD)");
    }
    crate::run(
        Command::new("git")
            .args(["clone", "--quiet", "--no-hardlinks"])
            .arg(crate::workspace_root())
            .arg(&src),
    )?;
    let python_bin = Toolchain::here()?.python_prefix.join("bin");
    let path = format!(
        "/opt/cargo-bin:{}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        python_bin.display()
    );
    let mut env: Vec<(String, String)> = vec![
        ("PATH".into(), path),
        ("HOME".into(), "/root".into()),
        ("CARGO_HOME".into(), "/root/.cargo".into()),
        ("RUSTUP_HOME".into(), "/opt/rustup".into()),
        ("LANG".into(), "C.UTF-8".into()),
        ("CI".into(), "true".into()),
    ];
    // the machine's own settings for pip, rustup and its certificate store (a new machine has
    // them too: they are the image's, not something a project installs)
    for (k, v) in std::env::vars() {
        let ca = k.ends_with("_CA_BUNDLE") || k.starts_with("SSL_CERT_") || k.ends_with("_CAINFO");
        if k.starts_with("PIP_") || k == "RUSTUP_AUTO_INSTALL" || ca {
            env.push((k, v));
        }
    }
    let mut cmd = Command::new("chroot");
    cmd.arg(root).args(["/usr/bin/env", "-i"]);
    cmd.args(env.iter().map(|(k, v)| format!("{k}={v}")));
    cmd.args([
        "/bin/bash".to_string(),
        "-c".to_string(),
        format!("cd /root/fpshader && ({command}) < /dev/null 2>&1"),
    ]);
    eprintln!(
        "xtask: `{command}` in a fresh Debian 12 root ({}), log in {}",
        root.display(),
        log.display()
    );
    let started = Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run chroot: {e}"))?;
    let mut file = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut steps: Vec<(f64, String)> = Vec::new();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let t = started.elapsed().as_secs_f64();
            let stamped = format!("[{:>4}:{:02}] {line}", t as u64 / 60, t as u64 % 60);
            println!("{stamped}");
            let _ = writeln!(file, "{stamped}");
            if line.starts_with("xtask: ") {
                steps.push((t, line));
            }
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    let total = started.elapsed().as_secs_f64();
    println!("\nxtask fresh: where the time went (s, from each xtask step to the next)");
    for (i, (t, line)) in steps.iter().enumerate() {
        let next = steps.get(i + 1).map_or(total, |s| s.0);
        let mut short: String = line.chars().take(100).collect();
        if short.len() < line.len() {
            short.push('…');
        }
        println!("{:>7.0}  {short}", next - t);
    }
    println!(
        "xtask fresh: `{command}` {} in {:.0} s ({:.1} min)",
        if status.success() { "passed" } else { "FAILED" },
        total,
        total / 60.0
    );
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{command}` failed in the fresh root ({status})"))
    }
}

/// This machine's own configuration that a new machine of its kind has too: its extra
/// certificate authorities (the registries are reached through them) and pip's settings.
fn machine_config(root: &Path) -> Result<(), String> {
    let local = Path::new("/usr/local/share/ca-certificates");
    if let Ok(entries) = std::fs::read_dir(local) {
        let to = root.join("usr/local/share/ca-certificates");
        std::fs::create_dir_all(&to).map_err(|e| format!("{}: {e}", to.display()))?;
        for entry in entries.flatten() {
            let from = entry.path();
            if from.extension().is_some_and(|e| e == "crt") {
                let dest = to.join(entry.file_name());
                std::fs::copy(&from, &dest).map_err(|e| format!("{}: {e}", dest.display()))?;
            }
        }
        chroot_script(root, "update-ca-certificates > /dev/null")?;
    }
    if Path::new("/etc/pip.conf").is_file() {
        let dest = root.join("etc/pip.conf");
        std::fs::copy("/etc/pip.conf", &dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    }
    Ok(())
}

fn copy_resolv(root: &Path) -> Result<(), String> {
    let to = root.join("etc/resolv.conf");
    let _ = std::fs::remove_file(&to);
    std::fs::copy("/etc/resolv.conf", &to)
        .map(|_| ())
        .map_err(|e| format!("{}: {e}", to.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// FNV-1a, enough to notice that the package list changed.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
