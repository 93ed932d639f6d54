//! Mutation fuzzing that reaches the layers, on the stable toolchain: ncnn `.param` files (ncnn's
//! benchmark models, the super-resolution and pnnx models of `tests/`) mutated token by token
//! and line by line, loaded with zero weights (or their `.bin`, cut or bit-flipped) and run
//! once on the CPU; TOSA MLIR text through the parser; GLSL through the extension's
//! preprocessor. Every case must end in a result or a typed error: a panic, or a case that
//! takes longer than [`CASE_LIMIT`], fails the test with the input that did it. Cases are
//! seeded: `FPSHADER_FUZZ_CASES` sets how many (CI runs the default), `FPSHADER_FUZZ_SEED`
//! where they start. Findings are kept in `tests/fuzz/` and run first.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use common::Rng;
use fpshader::Mat;
use fpshader::layer::RunOptions;
use fpshader::net::Net;

/// The most one case may take (debug build, one core): far above any real case's time.
const CASE_LIMIT: Duration = Duration::from_secs(60);

/// A mutated allocation is refused past this, not attempted: the fuzzer's host budget.
const HOST_BUDGET: u64 = 512 << 20;

/// Mutated models that loaded and ran at least one layer: what says the fuzzer reaches the
/// layers, not only the parser.
static REACHED: AtomicUsize = AtomicUsize::new(0);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The files of `dir` ending in `ext`, sorted.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.to_string_lossy().ends_with(ext));
    v.sort();
    v
}

/// Values a mutated number takes: edges of every range a parameter has.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "3",
    "7",
    "-233",
    "65536",
    "2147483647",
    "-2147483648",
    "1e30",
    "-1e30",
    "nan",
    "inf",
    "0.5",
    "-0.0",
    "99999999999",
    "1,2",
    "",
];

/// One to three mutations of a `.param` text: a number replaced, a line dropped, doubled or
/// moved, two tokens swapped, a byte changed, the text cut.
fn mutate_param(rng: &mut Rng, text: &str, kinds: &[String]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..1 + rng.below(3) {
        if lines.is_empty() {
            break;
        }
        let at = rng.below(lines.len());
        match rng.below(8) {
            0 | 1 => {
                // a number (a key's value, a count, an array element)
                let mut tokens: Vec<String> =
                    lines[at].split_whitespace().map(str::to_string).collect();
                let numeric: Vec<usize> = (0..tokens.len())
                    .filter(|&i| tokens[i].chars().any(|c| c.is_ascii_digit()))
                    .collect();
                if let Some(&i) = numeric.get(rng.below(numeric.len())) {
                    let value = NUMBERS[rng.below(NUMBERS.len())];
                    tokens[i] = match tokens[i].split_once('=') {
                        Some((key, _)) => format!("{key}={value}"),
                        None => value.to_string(),
                    };
                }
                lines[at] = tokens.join(" ");
            }
            2 => {
                lines.remove(at);
            }
            3 => {
                let line = lines[at].clone();
                lines.insert(rng.below(lines.len() + 1), line);
            }
            4 => {
                // another layer type on this line
                let kind = &kinds[rng.below(kinds.len())];
                let rest: Vec<&str> = lines[at].split_whitespace().skip(1).collect();
                lines[at] = format!("{kind} {}", rest.join(" "));
            }
            5 => {
                let mut tokens: Vec<String> =
                    lines[at].split_whitespace().map(str::to_string).collect();
                if tokens.len() > 2 {
                    let (a, b) = (rng.below(tokens.len()), rng.below(tokens.len()));
                    tokens.swap(a, b);
                }
                lines[at] = tokens.join(" ");
            }
            6 => {
                let mut bytes = lines[at].clone().into_bytes();
                if !bytes.is_empty() {
                    let i = rng.below(bytes.len());
                    bytes[i] = b" =,-0123456789abcz\"\n"[rng.below(20)];
                }
                lines[at] = String::from_utf8_lossy(&bytes).into_owned();
            }
            _ => lines.truncate(at.max(1)),
        }
    }
    // most of the time the header's layer count follows the lines, so that the mutation
    // reaches the layers instead of the count check
    if rng.below(8) != 0 && lines.len() > 2 {
        let layers = lines[2..].iter().filter(|l| !l.trim().is_empty()).count();
        let blobs = lines[1]
            .split_whitespace()
            .nth(1)
            .unwrap_or("0")
            .to_string();
        lines[1] = format!("{layers} {blobs}");
    }
    lines.join("\n") + "\n"
}

/// The inputs of a loaded net: each `Input` layer's declared shape (small where it declares
/// none or a large one).
fn inputs_of(net: &Net) -> Vec<(String, Mat)> {
    net.layers()
        .iter()
        .filter(|l| l.kind == "Input")
        .filter_map(|l| {
            let top = net.blobs().get(*l.tops.first()?)?;
            let shape = [17, 13, 1, 3];
            let m = Mat::from_shape_values(3, shape, &vec![0.25; 17 * 13 * 3]).ok()?;
            Some((top.name.clone(), m))
        })
        .collect()
}

/// Loads `param` (with `bin`, else zero weights) and extracts every output once on the CPU.
fn run_model(param: &str, bin: Option<&[u8]>) {
    let mut net = Net::new();
    net.opt = RunOptions {
        num_threads: 1,
        ..RunOptions::fp32()
    };
    if net.load_param_str("fuzz.param", param).is_err() {
        return;
    }
    let loaded = match bin {
        Some(bytes) => net.load_model_bytes(bytes),
        None => net.load_model_zeros(),
    };
    if loaded.is_err() {
        return;
    }
    let outputs: Vec<String> = (net.blobs().iter())
        .filter(|b| b.producer.is_some() && b.consumers.is_empty())
        .map(|b| b.name.clone())
        .collect();
    REACHED.fetch_add(1, Ordering::Relaxed);
    for out in outputs {
        let Ok(mut ex) = net.create_extractor() else {
            return;
        };
        for (name, m) in inputs_of(&net) {
            let _ = ex.input(&name, m);
        }
        let _ = ex.extract(&out);
    }
}

/// Runs `case` on a thread of its own: its panic or a run past [`CASE_LIMIT`] is a finding,
/// reported with `what` (which says how to reproduce it).
fn guard(what: &str, case: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            case();
            let _ = done.send(());
        })
        .unwrap();
    match finished.recv_timeout(CASE_LIMIT) {
        Ok(()) => {
            thread.join().unwrap();
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            panic!("fuzz finding (panic): {what}")
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("fuzz finding (over {CASE_LIMIT:?}): {what}")
        }
    }
}

fn cases() -> u64 {
    std::env::var("FPSHADER_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1500)
}

fn seed() -> u64 {
    std::env::var("FPSHADER_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2026)
}

/// Where a finding is written for `tests/fuzz/` (the test's scratch folder).
fn keep(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join("fpshader-fuzz");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(name);
    let _ = std::fs::write(&path, text);
    path.display().to_string()
}

#[test]
fn mutated_models_load_and_run_without_panicking() {
    fpshader::host::set_budget(Some(HOST_BUDGET));
    let root = repo();
    let mut corpus: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
    for dir in ["tests/zoo", "tests/sr", "tests/pnnx", "runtime/tests/fuzz"] {
        for p in files(&root.join(dir), ".param") {
            let bin = PathBuf::from(p.to_string_lossy().replace(".param", ".bin"));
            corpus.push((p, bin.exists().then_some(bin)));
        }
    }
    assert!(corpus.len() >= 20, "corpus: {corpus:?}");
    let kinds: Vec<String> = (fpshader::layer::BUILTIN.iter())
        .map(|k| k.to_string())
        .collect();
    // the regression cases as they are, then the mutations
    for (p, _) in corpus
        .iter()
        .filter(|(p, _)| p.starts_with(root.join("runtime/tests/fuzz")))
    {
        let text = std::fs::read_to_string(p).unwrap();
        guard(&p.display().to_string(), move || run_model(&text, None));
    }
    let mut rng = Rng(seed() | 1);
    for case in 0..cases() {
        let (param, bin) = &corpus[rng.below(corpus.len())];
        let text = std::fs::read_to_string(param).unwrap();
        let mutated = mutate_param(&mut rng, &text, &kinds);
        let weights = bin.as_ref().map(|b| {
            let mut bytes = std::fs::read(b).unwrap();
            match rng.below(3) {
                0 => bytes.truncate(rng.below(bytes.len() + 1)),
                1 if !bytes.is_empty() => {
                    let i = rng.below(bytes.len());
                    bytes[i] ^= 1 << rng.below(8);
                }
                _ => {}
            }
            bytes
        });
        let what = format!(
            "case {case} (seed {}): {} mutated, kept at {}",
            seed(),
            param.display(),
            keep(&format!("seed{}-case{case}.param", seed()), &mutated)
        );
        guard(&what, move || run_model(&mutated, weights.as_deref()));
    }
    let reached = REACHED.load(Ordering::Relaxed) as u64;
    eprintln!("{reached} of {} mutated models loaded and ran", cases());
    // about one in six reaches the layers (the others are refused while loading, as they
    // should be): far fewer would mean the mutations stopped exercising the forwards
    assert!(
        reached * 8 >= cases(),
        "only {reached} mutated models reached the layers"
    );
}

#[test]
fn mutated_tosa_and_glsl_are_errors_not_panics() {
    let root = repo();
    let mut rng = Rng(seed() ^ 0x7054);
    let texts: Vec<(String, String)> = (files(&root.join("runtime/tests/fuzz"), ".mlir").iter())
        .chain(files(&root.join("shaders"), ".comp").iter())
        .chain(files(&root.join("shaders/include"), ".comp").iter())
        .map(|p| (p.display().to_string(), std::fs::read_to_string(p).unwrap()))
        .collect();
    for (name, text) in texts.iter().filter(|(n, _)| n.ends_with(".mlir")) {
        fpshader_build::vgf::tosa::mlir::parse(name, text)
            .unwrap_or_else(|e| panic!("{name}: the corpus must parse: {e}"));
    }
    for case in 0..cases() {
        let (name, text) = &texts[rng.below(texts.len())];
        let mut bytes = text.clone().into_bytes();
        for _ in 0..1 + rng.below(4) {
            if bytes.is_empty() {
                break;
            }
            let i = rng.below(bytes.len());
            match rng.below(4) {
                0 => bytes[i] = b"(){}<>[]%@#:=,x0-9\"\n "[rng.below(21)],
                1 => {
                    bytes.remove(i);
                }
                2 => bytes.truncate(i),
                _ => {
                    let j = rng.below(bytes.len());
                    let piece: Vec<u8> = bytes[i.min(j)..i.max(j).min(i.min(j) + 40)].to_vec();
                    bytes.splice(i..i, piece);
                }
            }
        }
        let mutated = String::from_utf8_lossy(&bytes).into_owned();
        let what = format!(
            "case {case} of {name}, kept at {}",
            keep(&format!("seed{}-text{case}", seed()), &mutated)
        );
        if name.ends_with(".mlir") {
            guard(&what, move || {
                let _ = fpshader_build::vgf::tosa::mlir::parse("fuzz.mlir", &mutated);
            });
        } else {
            guard(&what, move || {
                if let Ok(source) = fpshader_build::Source::from_str("fuzz.comp", mutated) {
                    for set in [
                        fpshader::OptionSet::FP32,
                        fpshader::OptionSet::from_opts(&fpshader::Opt::ALL),
                    ] {
                        let _ = source.expand(set);
                    }
                }
            });
        }
    }
}

/// `.npy` inputs, their header and data mutated, through `fpshader run` (the CLI reads them):
/// an error message and a non-zero exit, never a panic, an abort or a hang.
#[test]
fn mutated_npy_inputs_are_errors_not_panics() {
    let root = repo();
    let pnnx = root.join("tests/pnnx");
    let original = std::fs::read(pnnx.join("vit.input.npy")).unwrap();
    let dir = std::env::temp_dir().join(format!("fpshader-fuzz-npy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng(seed() ^ 0x4e50);
    // the header is where a mutation says most: most of them land in its first 128 bytes
    for case in 0..cases().div_ceil(30) {
        let mut bytes = original.clone();
        for _ in 0..1 + rng.below(3) {
            if bytes.is_empty() {
                break;
            }
            let reach = if rng.below(4) == 0 { bytes.len() } else { 128 };
            let i = rng.below(reach.min(bytes.len()));
            match rng.below(3) {
                0 => bytes[i] = b"0123456789(),' :<>fiu8{}"[rng.below(24)],
                1 => bytes.truncate(i),
                _ => bytes[i] ^= 1 << rng.below(8),
            }
        }
        let file = dir.join(format!("case{case}.npy"));
        std::fs::write(&file, &bytes).unwrap();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fpshader"))
            .arg("run")
            .arg(pnnx.join("vit.ncnn.param"))
            .arg(pnnx.join("vit.ncnn.bin"))
            .arg("--cpu")
            .arg("-i")
            .arg(format!("in0={}", file.display()))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > CASE_LIMIT {
                let _ = child.kill();
                panic!("fuzz finding (over {CASE_LIMIT:?}): {}", file.display());
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        // 101: a Rust panic; a signal (no code): an abort
        assert!(
            status.code().is_some_and(|c| c != 101) && !stderr.contains("panicked"),
            "fuzz finding ({status}): {} {stderr}",
            file.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
