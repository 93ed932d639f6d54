//! `fpshader bench`: ncnn's `benchncnn` for fpshader. A model with zero weights (or its
//! `.bin`), an input of the shape its `Input` layer declares, `--loops` timed extracts of the
//! last blob after a warm-up; min, median and max in ms. `--all DIR` runs every `.param` there.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use fpshader::layer::RunOptions;
use fpshader::net::{CpuTime, Net};
use fpshader::{Context, DispatchTime, Mat, MemoryStats, ShaderPath};

use crate::concurrent::throughput;
use crate::run::{device, load_net, parse_opt, with_threads};
use crate::{CliError, print};

/// Arguments of `fpshader bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// The model (`.param` or `.param.bin`); not with --all.
    #[arg(required_unless_present = "all")]
    param: Option<PathBuf>,
    /// Its weights (zero weights without, as benchncnn).
    #[arg(long)]
    bin: Option<PathBuf>,
    /// Every `.param` in this folder, one table row each.
    #[arg(long, value_name = "DIR", conflicts_with = "param")]
    all: Option<PathBuf>,
    /// Timed runs after the warm-up.
    #[arg(long, default_value_t = 10)]
    loops: usize,
    /// Run on the CPU.
    #[arg(long)]
    cpu: bool,
    /// CPU threads.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Options, as `fpshader run` takes them (default: everything the device allows).
    #[arg(long, value_name = "fp32|fp16p,fp16s,…")]
    opt: Option<String>,
    /// The shader path.
    #[arg(long, value_name = "naga|passthrough")]
    path: Option<ShaderPath>,
    /// The input as W,H,C, or W,H / W for a 2-D / 1-D one, W,H,D,C for a 4-D one;
    /// `NAME=W,H,C` for one of several inputs (repeatable). Default: each Input layer's 0=w
    /// 1=h (11=d) 2=c.
    #[arg(long, value_name = "[NAME=]W[,H[,D,C]]")]
    shape: Vec<String>,
    /// Where a model's time goes, per layer in order and per layer type: on the GPU each
    /// layer's device time (timestamps), on the CPU each layer's own conversion and forward
    /// time (the fastest of up to 20 runs); without timestamps, the minimum time of extracting
    /// each layer's output and its increase over the layer before.
    #[arg(long)]
    profile: bool,
    /// Also run N threads at once on the one net (each its own extractor, `--loops` extracts
    /// each) and report extracts per second: a server's throughput.
    #[arg(long, value_name = "N")]
    extractors: Option<usize>,
    /// PARAM is an ncnn LLM decoder: time a prefill of --tokens tokens and one decode step
    /// after them, as ncnn's benchncnn_llm.
    #[arg(long, requires = "param")]
    llm: bool,
    /// The prefill's tokens and the decode step's past with --llm.
    #[arg(long, default_value_t = 256)]
    tokens: usize,
}

/// min, median and max of one model's timed runs, in ms.
struct Timing {
    min: f64,
    median: f64,
    max: f64,
}

/// 1–4 positive extents, w first (`W,H,D,C` for 4-D): the dims and `[w, h, d, c]`.
fn dims_of(v: &[usize]) -> Option<(u8, [usize; 4])> {
    (!v.is_empty() && v.len() <= 4 && v.iter().all(|&e| e > 0)).then(|| {
        let at = |i: usize| v.get(i).copied().unwrap_or(1);
        match v.len() {
            4 => (4, [at(0), at(1), at(2), at(3)]),
            n => (n as u8, [at(0), at(1), 1, at(2)]),
        }
    })
}

/// `W[,H[,C]]` (or `W,H,D,C`) as [`dims_of`] takes the extents, else a usage error.
fn parse_extents(text: &str) -> Result<(u8, [usize; 4]), CliError> {
    text.split(',')
        .map(|s| s.trim().parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .ok()
        .and_then(|v| dims_of(&v))
        .ok_or_else(|| {
            CliError::Usage(format!(
                "--shape {text}: expected [NAME=]W[,H[,C]] or W,H,D,C"
            ))
        })
}

/// The values of an input of `[w, h, d, c]`, if the host can hold them (filled once, then
/// copied into a mat): an absurd shape is refused before anything is filled.
fn input_values(name: &str, shape: [usize; 4]) -> Result<usize, CliError> {
    let n = (shape.iter().try_fold(1usize, |n, &e| n.checked_mul(e)))
        .ok_or_else(|| CliError::Usage(format!("input {name}: {shape:?} overflows")))?;
    fpshader::host::check((n as u64).saturating_mul(8))?;
    Ok(n)
}

/// Each `Input` layer's blob, dims and `[w, h, d, c]`: `--shape NAME=…` for that blob, a bare
/// `--shape` for a model's only input, else the layer's own `0=w 1=h (11=d) 2=c`.
fn input_shapes(
    net: &Net,
    param: &Path,
    shapes: &[String],
) -> Result<Vec<(String, u8, [usize; 4])>, CliError> {
    // the Input lines of the text, by their blob: `Input name 0 1 blob 0=w 1=h 2=c`
    let text = std::fs::read(param)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| CliError::Npy {
            path: param.display().to_string(),
            message: e.to_string(),
        })?;
    let declared = |blob: &str| -> Vec<usize> {
        let line = text.lines().find(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            f.first() == Some(&"Input") && f.get(4) == Some(&blob)
        });
        let Some(line) = line else {
            return Vec::new();
        };
        let fields: Vec<&str> = line.split_whitespace().collect();
        let get = |k: &str| {
            fields
                .iter()
                .find_map(|f| f.strip_prefix(k))
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|&e| e > 0)
        };
        // the declared extents up to the first missing one (`11=d` making a 4-D input)
        let keys: &[&str] = if get("11=").is_some() {
            &["0=", "1=", "11=", "2="]
        } else {
            &["0=", "1=", "2="]
        };
        keys.iter().map(|k| get(k)).map_while(|e| e).collect()
    };
    let inputs: Vec<String> = net
        .layers()
        .iter()
        .filter(|l| l.kind == "Input")
        .filter_map(|l| l.tops.first().map(|&t| net.blobs()[t].name.clone()))
        .collect();
    if inputs.is_empty() {
        return Err(CliError::Usage(format!(
            "{}: no Input layer",
            param.display()
        )));
    }
    let mut named: Vec<(&str, &str)> = Vec::new();
    let mut bare: Option<&str> = None;
    for s in shapes {
        match s.split_once('=') {
            Some((name, dims)) => {
                if !inputs.iter().any(|i| i == name) {
                    return Err(CliError::Usage(format!(
                        "--shape {s}: the model has no input `{name}` (inputs: {})",
                        inputs.join(", ")
                    )));
                }
                named.push((name, dims));
            }
            None if inputs.len() > 1 => {
                return Err(CliError::Usage(format!(
                    "--shape {s}: the model has {} inputs ({}); give --shape NAME=W[,H[,C]] for each",
                    inputs.len(),
                    inputs.join(", ")
                )));
            }
            None => bare = Some(s),
        }
    }
    inputs
        .into_iter()
        .map(|name| {
            let given = named
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, d)| *d)
                .or(bare);
            let (dims, shape) = match given {
                Some(text) => parse_extents(text)?,
                None => dims_of(&declared(&name)).ok_or_else(|| {
                    CliError::Usage(format!(
                        "{}: its Input `{name}` declares no 0=w [1=h [2=c]]; give --shape \
                         {name}=W[,H[,C]] ({} layers)",
                        param.display(),
                        net.layers().len()
                    ))
                })?,
            };
            Ok((name, dims, shape))
        })
        .collect()
}

/// Warm-up before timing: at least this many runs and this long (`ncnn_zoo_bench.py` does
/// the same for ncnn).
const WARMUP_RUNS: usize = 3;
const WARMUP_TIME: std::time::Duration = std::time::Duration::from_secs(1);

/// Times one model.
fn bench_one(
    param: &Path,
    args: &BenchArgs,
    ctx: Option<Arc<Context>>,
    opt: RunOptions,
) -> Result<(Timing, Option<MemoryStats>), CliError> {
    // the device memory of this model alone: the pool's buffers of the ones before go
    if let Some(ctx) = &ctx {
        ctx.trim_pool();
        ctx.reset_peak_memory();
    }
    // a shape no host can hold is refused before the model loads
    for text in &args.shape {
        let extents = text.rsplit_once('=').map_or(text.as_str(), |(_, e)| e);
        input_values(text, parse_extents(extents)?.1)?;
    }
    let net = load_net(param, args.bin.as_deref(), ctx.clone(), opt)?;
    let timing = bench_net(&net, param, args)?;
    Ok((timing, ctx.map(|c| c.memory_stats())))
}

/// Warm-up runs, the profile if asked for, then the timed runs.
fn bench_net(net: &Net, param: &Path, args: &BenchArgs) -> Result<Timing, CliError> {
    let shapes = input_shapes(net, param, &args.shape)?;
    let output = net
        .blobs()
        .iter()
        .rev()
        .find(|b| b.producer.is_some() && b.consumers.is_empty())
        .map(|b| b.name.clone())
        .ok_or_else(|| CliError::Usage(format!("{}: no output blob", param.display())))?;
    // shared, not copied, by every run (ncnn's Mat is reference counted: its benchmark's
    // input costs nothing per run either)
    let inputs = shapes
        .iter()
        .map(|(name, dims, shape)| {
            let values = vec![0.5; input_values(name, *shape)?];
            let mat = Mat::from_shape_values(*dims, *shape, &values)?;
            Ok((name.clone(), std::sync::Arc::new(mat)))
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    let feed = |ex: &mut fpshader::net::Extractor<'_>| -> Result<(), CliError> {
        for (name, mat) in &inputs {
            ex.input(name, mat.clone())?;
        }
        Ok(())
    };
    let once = |output: &str| -> Result<f64, CliError> {
        let t = Instant::now();
        let mut ex = net.create_extractor()?;
        feed(&mut ex)?;
        ex.extract(output)?;
        Ok(t.elapsed().as_secs_f64() * 1e3)
    };
    // warm-up: pipelines, the buffer pool, the driver's caches, and the GPU's clocks, which
    // drop while a large model uploads (an H200 went from 1980 to 1140 MHz during vgg16's
    // upload in a multi-model run and took seconds to come back: vgg16 then timed 3x slower)
    let start = Instant::now();
    let mut runs = 0;
    while runs < WARMUP_RUNS || start.elapsed() < WARMUP_TIME && runs < 10_000 {
        once(&output)?;
        runs += 1;
    }
    if args.profile {
        print(&placement(net, &feed, &output)?);
        if net.context().is_none() {
            // a CPU net: each layer's own time, its forwards being synchronous
            let runs = (0..args.loops.clamp(1, 20))
                .map(|_| {
                    let mut ex = net.create_extractor()?;
                    feed(&mut ex)?;
                    ex.extract(&output)?;
                    Ok(ex.record().cpu_times.clone())
                })
                .collect::<Result<Vec<_>, CliError>>()?;
            print(&cpu_profile(net, &runs));
            return bench_timed(&once, &output, args.loops);
        }
        // one whole run: host recording against the wait for the device
        if let Some(ctx) = net.context().cloned() {
            // the fastest of a few runs: a single one right after the placement pass often
            // meets the GPU's clocks still down
            let run = || -> Result<_, CliError> {
                let before = ctx.submission_stats();
                let total = once(&output)?;
                Ok((total, ctx.submission_stats() - before))
            };
            let (mut total, mut d) = run()?;
            for _ in 1..args.loops.clamp(1, 20) {
                let (t, s) = run()?;
                if t < total {
                    (total, d) = (t, s);
                }
            }
            print(&format!(
                "fastest run {total:.3} ms: {} submission(s), {} new buffer(s), {} new bind group(s), \
                 recording {:.3} ms (submitting {:.3} ms), waiting {:.3} ms, uploading {:.3} ms ({} upload(s), {:.1} KiB), reading back {:.3} ms\n",
                d.submissions,
                d.new_buffers,
                d.bind_groups,
                d.recording.as_secs_f64() * 1e3,
                d.submitting.as_secs_f64() * 1e3,
                d.waiting.as_secs_f64() * 1e3,
                d.uploading.as_secs_f64() * 1e3,
                d.uploads,
                d.upload_bytes as f64 / 1024.0,
                d.reading.as_secs_f64() * 1e3
            ));
        }
        if let Some(ctx) = net.context().filter(|c| c.set_timing(true)).cloned() {
            ctx.take_timings();
            once(&output)?;
            ctx.set_timing(false);
            print(&device_profile(net, &ctx.take_timings()));
            return bench_timed(&once, &output, args.loops);
        }
        let mut before = 0.0;
        for layer in net.layers().iter().filter(|l| l.kind != "Input") {
            let Some(&top) = layer.tops.first() else {
                continue;
            };
            let name = &net.blobs()[top].name;
            let mut best = f64::INFINITY;
            for _ in 0..args.loops.max(1) {
                best = best.min(once(name)?);
            }
            let place = if layer.on_gpu() { "gpu" } else { "cpu" };
            print(&format!(
                "{:>24} {:<24} {place} {best:8.3} ms {:+8.3}\n",
                layer.kind,
                layer.name,
                best - before
            ));
            before = best;
        }
    }
    if let Some(n) = args.extractors {
        for threads in [1, 2, 4, 8, 16].into_iter().filter(|t| *t <= n.max(1)) {
            let (rate, each) = throughput(net, &feed, &output, threads, args.loops)?;
            print(&format!(
                "{threads:>3} extractors at once: {rate:9.1} extracts/s ({each:.3} ms each)\n"
            ));
        }
    }
    bench_timed(&once, &output, args.loops)
}

/// `loops` timed runs of `once`.
fn bench_timed(
    once: &dyn Fn(&str) -> Result<f64, CliError>,
    output: &str,
    loops: usize,
) -> Result<Timing, CliError> {
    let mut times = (0..loops.max(1))
        .map(|_| once(output))
        .collect::<Result<Vec<_>, _>>()?;
    times.sort_by(f64::total_cmp);
    Ok(Timing {
        min: times[0],
        median: times[times.len() / 2],
        max: times[times.len() - 1],
    })
}

/// Where one run's layers went: the CPU ones by name, and the host's waits for the device.
fn placement(
    net: &Net,
    feed: &dyn Fn(&mut fpshader::net::Extractor<'_>) -> Result<(), CliError>,
    output: &str,
) -> Result<String, CliError> {
    let mut ex = net.create_extractor()?;
    feed(&mut ex)?;
    ex.extract(output)?;
    let record = ex.record();
    let cpu = record.cpu_layers();
    let gpu = record.gpu_layers().len();
    let banded = record.banded_layers().len();
    let fused = record.fused_layers().len();
    let appended = record.appended_layers().len();
    let mut out = format!(
        "placement: {gpu} layer(s) on the GPU ({banded} in bands of rows, {fused} folded into \
         a dispatch before them, {appended} written past their first input), {} on the CPU; \
         {} wait(s) for the device and {} download(s) before the output\n",
        cpu.len(),
        record.waits,
        record.downloads
    );
    for i in cpu {
        let l = &net.layers()[i];
        let why = if l.on_gpu() {
            "declined its input shapes"
        } else {
            "no GPU forward for its parameters or options"
        };
        out += &format!("{:>24} {:<28} on the CPU: {why}\n", l.kind, l.name);
    }
    Ok(out)
}

/// Each CPU layer's own time, the fastest of `runs` per layer, in order; then per layer type,
/// largest first.
fn cpu_profile(net: &Net, runs: &[Vec<CpuTime>]) -> String {
    let Some(first) = runs.first() else {
        return String::new();
    };
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    // per layer run (same order in every run): the fastest conversion and forward
    let best: Vec<(usize, f64, f64)> = (0..first.len())
        .map(|k| {
            let of = |f: fn(&CpuTime) -> std::time::Duration| {
                runs.iter()
                    .filter_map(|r| r.get(k))
                    .map(|t| ms(f(t)))
                    .fold(f64::INFINITY, f64::min)
            };
            (first[k].layer, of(|t| t.convert), of(|t| t.forward))
        })
        .collect();
    let total: f64 = best.iter().map(|(_, c, f)| c + f).sum();
    let mut out = format!(
        "CPU time per layer, fastest of {} run(s): {total:.3} ms in {} layers (conversion to \
         the layer's layout, then its forward)\n",
        runs.len(),
        best.len()
    );
    let mut per_kind: Vec<(String, f64, usize)> = Vec::new();
    for &(i, convert, forward) in &best {
        let l = &net.layers()[i];
        out += &format!(
            "{:>24} {:<28} {convert:8.3} ms {forward:8.3} ms\n",
            l.kind, l.name
        );
        match per_kind.iter_mut().find(|(k, ..)| *k == l.kind) {
            Some((_, t, n)) => {
                *t += convert + forward;
                *n += 1;
            }
            None => per_kind.push((l.kind.clone(), convert + forward, 1)),
        }
    }
    per_kind.sort_by(|a, b| b.1.total_cmp(&a.1));
    out += "per layer type:\n";
    for (kind, t, n) in per_kind {
        out += &format!(
            "{kind:>24} {n:4} layer(s) {t:9.3} ms {:5.1}%\n",
            100.0 * t / total.max(f64::MIN_POSITIVE)
        );
    }
    out
}

/// The device time of one run per layer, in order, then per layer type, largest first.
fn device_profile(net: &Net, times: &[DispatchTime]) -> String {
    let mut per_layer: Vec<(String, Vec<&DispatchTime>)> = Vec::new();
    for t in times {
        match per_layer.last_mut() {
            Some((label, v)) if *label == t.label => v.push(t),
            _ => per_layer.push((t.label.clone(), vec![t])),
        }
    }
    let kind_of = |name: &str| {
        net.layers()
            .iter()
            .find(|l| l.name == name)
            .map_or("", |l| l.kind.as_str())
    };
    let total: f64 = times.iter().map(|t| t.micros).sum();
    let mut out = format!(
        "device time of one run: {:.3} ms in {} dispatches (timestamps per dispatch)\n",
        total / 1e3,
        times.len()
    );
    let mut per_kind: Vec<(String, f64, usize)> = Vec::new();
    for (label, v) in &per_layer {
        let us: f64 = v.iter().map(|t| t.micros).sum();
        // each dispatch's own time where a layer records several
        let shaders: Vec<String> = v
            .iter()
            .map(|t| match v.len() {
                1 => t.shader.clone(),
                _ => format!("{} {:.1}", t.shader, t.micros),
            })
            .collect();
        let kind = kind_of(label);
        out += &format!(
            "{kind:>24} {label:<28} {us:9.1} us  {}\n",
            shaders.join(" ")
        );
        match per_kind.iter_mut().find(|(k, ..)| k == kind) {
            Some((_, sum, n)) => {
                *sum += us;
                *n += 1;
            }
            None => per_kind.push((kind.to_string(), us, 1)),
        }
    }
    per_kind.sort_by(|a, b| b.1.total_cmp(&a.1));
    out += "per layer type:\n";
    for (kind, us, n) in per_kind {
        out += &format!(
            "{kind:>24} {n:4} layers {us:9.1} us {:5.1}%\n",
            100.0 * us / total.max(1e-9)
        );
    }
    out
}

/// Runs `fpshader bench`.
pub fn bench(args: BenchArgs) -> Result<(), CliError> {
    let mut opt = parse_opt(args.opt.as_deref())?;
    if let Some(n) = args.threads {
        opt.num_threads = n.max(1);
    }
    with_threads(args.threads, || {
        let ctx = device(args.cpu, args.path)?;
        let where_ = ctx
            .as_ref()
            .map_or_else(|| "CPU".to_string(), |c| c.describe());
        let models: Vec<PathBuf> = match (&args.all, &args.param) {
            (Some(dir), _) => {
                let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
                    .map_err(|e| CliError::Npy {
                        path: dir.display().to_string(),
                        message: e.to_string(),
                    })?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|e| e == "param"))
                    .collect();
                v.sort();
                v
            }
            (None, Some(p)) => vec![p.clone()],
            (None, None) => return Err(CliError::Usage("give a model or --all DIR".into())),
        };
        print(&format!(
            "{where_}, loops {}, threads {}\n",
            args.loops, opt.num_threads
        ));
        if let (true, Some(param)) = (args.llm, &args.param) {
            return crate::llm::bench_llm(param, args.tokens, args.loops, ctx, opt);
        }
        let mut failed = Vec::new();
        for model in &models {
            let name = model
                .file_stem()
                .map_or(String::new(), |s| s.to_string_lossy().into_owned());
            // a model that cannot run is reported on its row; the others still run
            let (t, memory) = match bench_one(model, &args, ctx.clone(), opt) {
                Ok(done) => done,
                Err(e) if args.all.is_some() => {
                    let why = match &e {
                        CliError::Fpshader(e) => fpshader::report(e),
                        other => other.to_string(),
                    };
                    print(&format!(
                        "{name:>20}  cannot run: {}\n",
                        why.replace('\n', "; ")
                    ));
                    failed.push(name);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
            let memory = memory.map_or(String::new(), |m| {
                format!(
                    "  gpu MiB = {:7.1} (peak in use {:7.1})",
                    mib(m.allocated),
                    mib(m.peak_live)
                )
            });
            print(&format!(
                "{name:>20}  min = {:8.2}  max = {:8.2}  median = {:8.2}{memory}\n",
                t.min, t.max, t.median
            ));
        }
        if failed.is_empty() {
            Ok(())
        } else {
            Err(CliError::Usage(format!(
                "{} of {} models could not run: {}",
                failed.len(),
                models.len(),
                failed.join(", ")
            )))
        }
    })
}
