//! Layers through the net API, timed: the figures of `cargo xtask bench layers`.
//!
//! `cargo run --release --example layer_bench -- cpu [THREADS [LOOPS]]`: each layer on the CPU
//! (fp32, packing on, `THREADS` rayon threads), then the same one-layer model in ncnn's wheel
//! (`FPSHADER_NCNN_PYTHON`, same threads, same shapes), min of `LOOPS` extracts each; prints
//! GB/s (bytes read + written) and fpshader/ncnn throughput.
//!
//! `cargo run --release --example layer_bench -- gpu [LOOPS [CLASS,LAYER,...]]`: on the default
//! adapter (only the classes `fp32`/`fp16` and layers named, when any are), chains of
//! layers at large shapes with inputs and outputs on the device (`input_gpu`/`extract_gpu`),
//! GB/s per layer; and the net executor's time per layer against the same pipeline dispatched
//! through a bare `Recorder`. Every line is `key value` pairs, for scripts.

use std::sync::Arc;
use std::time::Instant;

use fpshader::layer::RunOptions;
use fpshader::layer::shared::flat::dispatch_flat;
use fpshader::net::Net;
use fpshader::shaders::Shader;
use fpshader::specialize::{SpecValue, Specialization};
use fpshader::{Context, GpuMat, Mat};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// One benchmark: a model over inputs named `a` (and `b`), its output `out`, and the bytes it
/// moves per run (each input read once, the output written once, weights read once).
struct Case {
    name: &'static str,
    param: String,
    weights: Vec<u8>,
    inputs: Vec<(&'static str, u8, [usize; 4])>,
    bytes: f64,
}

fn count(dims: u8, [w, h, d, c]: [usize; 4]) -> usize {
    match dims {
        1 => w,
        2 => w * h,
        3 => w * h * c,
        _ => w * h * d * c,
    }
}

fn one_layer(kind: &str, bottoms: &[&str], params: &str) -> String {
    let inputs: Vec<String> = bottoms
        .iter()
        .map(|b| format!("Input {b}_in 0 1 {b}"))
        .collect();
    format!(
        "7767517\n{} {}\n{}\n{kind} layer {} 1 {} out {params}\n",
        bottoms.len() + 1,
        bottoms.len() + 1,
        inputs.join("\n"),
        bottoms.len(),
        bottoms.join(" ")
    )
}

fn cpu_cases() -> Vec<Case> {
    let image = [224, 224, 1, 64];
    let n = count(3, image) as f64 * 4.0;
    let mut cases = vec![
        ("relu", "ReLU", vec!["a"], String::new(), 2.0),
        ("sigmoid", "Sigmoid", vec!["a"], String::new(), 2.0),
        (
            "binaryop_add",
            "BinaryOp",
            vec!["a", "b"],
            "0=0".into(),
            3.0,
        ),
        ("eltwise_sum", "Eltwise", vec!["a", "b"], "0=1".into(), 3.0),
    ]
    .into_iter()
    .map(|(name, kind, bottoms, params, moves)| Case {
        name,
        param: one_layer(kind, &bottoms, &params),
        weights: Vec::new(),
        inputs: bottoms
            .iter()
            .map(|b| (if *b == "a" { "a" } else { "b" }, 3, image))
            .collect(),
        bytes: moves * n,
    })
    .collect::<Vec<_>>();
    let sm = [56, 56, 1, 256];
    cases.push(Case {
        name: "softmax_c",
        param: one_layer("Softmax", &["a"], "0=0 1=1"),
        weights: Vec::new(),
        inputs: vec![("a", 3, sm)],
        bytes: 2.0 * count(3, sm) as f64 * 4.0,
    });
    let pool = [112, 112, 1, 64];
    cases.push(Case {
        name: "pooling_max3s2",
        param: one_layer("Pooling", &["a"], "0=0 1=3 2=2"),
        weights: Vec::new(),
        inputs: vec![("a", 3, pool)],
        bytes: 1.25 * count(3, pool) as f64 * 4.0,
    });
    let (ni, no) = (4096, 1000);
    let mut weights = 0u32.to_le_bytes().to_vec();
    weights.extend((0..ni * no).flat_map(|i| ((i % 97) as f32 * 1e-3).to_le_bytes()));
    weights.extend((0..no).flat_map(|i| (i as f32 * 1e-3).to_le_bytes()));
    cases.push(Case {
        name: "innerproduct_4096x1000",
        param: one_layer("InnerProduct", &["a"], &format!("0={no} 1=1 2={}", ni * no)),
        weights,
        inputs: vec![("a", 1, [ni, 1, 1, 1])],
        bytes: ((ni * no + ni + no) * 4) as f64,
    });
    cases
}

fn values(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
        .collect()
}

fn min_ms(loops: usize, mut f: impl FnMut() -> Res<()>) -> Res<f64> {
    // a warm-up of at least half a second: an H200's SM clock sits at 345 MHz through the
    // host's work between runs (uploads, net loading) and needs sustained load to reach its
    // 1980 MHz; timed cold, fp16 layers measured up to 2.5x slower than warm
    let start = Instant::now();
    let mut runs = 0;
    while runs < 2 || start.elapsed().as_secs_f64() < 0.5 && runs < 10_000 {
        f()?;
        runs += 1;
    }
    let mut best = f64::INFINITY;
    for _ in 0..loops {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(best)
}

fn cpu(threads: usize, loops: usize) -> Res<()> {
    let python = std::env::var("FPSHADER_NCNN_PYTHON")
        .map_err(|_| "FPSHADER_NCNN_PYTHON is not set: run through `cargo xtask bench layers`")?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let dir = std::env::temp_dir().join(format!("fpshader-layer-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    println!("threads {threads} loops {loops}");
    for case in cpu_cases() {
        let mut net = Net::new();
        net.opt = RunOptions {
            num_threads: threads,
            ..RunOptions::fp32()
        };
        net.opt.use_packing_layout = true;
        net.load_param_str(case.name, &case.param)?;
        net.load_model_bytes(&case.weights)?;
        let mats: Vec<(&str, Mat)> = case
            .inputs
            .iter()
            .map(|(name, dims, shape)| {
                Mat::from_shape_values(*dims, *shape, &values(count(*dims, *shape)))
                    .map(|m| (*name, m))
            })
            .collect::<Result<_, _>>()?;
        // inputs are copied before the clock starts: ncnn's extractor takes them by reference
        let ours = pool.install(|| -> Result<f64, fpshader::Error> {
            let mut best = f64::INFINITY;
            for _ in 0..=loops {
                let copies: Vec<Mat> = mats.iter().map(|(_, m)| m.clone()).collect();
                let t = Instant::now();
                let mut ex = net.create_extractor()?;
                for ((name, _), m) in mats.iter().zip(copies) {
                    ex.input(name, m)?;
                }
                ex.extract("out")?;
                best = best.min(t.elapsed().as_secs_f64() * 1e3);
            }
            Ok(best)
        })?;
        // the same model and inputs in ncnn
        std::fs::write(dir.join("m.param"), &case.param)?;
        std::fs::write(dir.join("m.bin"), &case.weights)?;
        let mut inputs = Vec::new();
        for (name, m) in &mats {
            let file = dir.join(format!("{name}.raw"));
            let bytes: Vec<u8> = m.to_values().iter().flat_map(|v| v.to_le_bytes()).collect();
            std::fs::write(&file, bytes)?;
            inputs.push(format!(
                r#"{{"name": "{name}", "file": "{}", "shape": {:?}}}"#,
                file.display(),
                m.numpy_shape()
            ));
        }
        let spec = format!(
            r#"{{"param": "{}", "bin": "{}", "inputs": [{}], "threads": {threads}, "loops": {loops}}}"#,
            dir.join("m.param").display(),
            dir.join("m.bin").display(),
            inputs.join(", ")
        );
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/ncnn_layer_bench.py");
        let out = std::process::Command::new(&python)
            .arg(script)
            .arg(&spec)
            .output()?;
        if !out.status.success() {
            return Err(format!("ncnn: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
        let theirs: f64 = String::from_utf8_lossy(&out.stdout).trim().parse()?;
        let gbps = |ms: f64| case.bytes / ms / 1e6;
        println!(
            "layer {} fpshader_ms {ours:.3} fpshader_GBps {:.1} ncnn_ms {theirs:.3} ncnn_GBps {:.1} ratio {:.2}",
            case.name,
            gbps(ours),
            gbps(theirs),
            theirs / ours
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// A net of `layers` copies of `line` (with `{i}`, `{prev}` for the layer index and its input).
fn chain(inputs: &[&str], layers: usize, line: &str) -> String {
    let mut text = String::new();
    for i in inputs {
        text += &format!("Input {i}_in 0 1 {i}\n");
    }
    let mut prev = "a".to_string();
    for i in 0..layers {
        let top = if i + 1 == layers {
            "out".to_string()
        } else {
            format!("t{i}")
        };
        text += &line
            .replace("{i}", &i.to_string())
            .replace("{prev}", &prev)
            .replace("{top}", &top);
        text.push('\n');
        prev = top;
    }
    let blobs = inputs.len() + layers;
    format!("7767517\n{} {blobs}\n{text}", inputs.len() + layers)
}

fn gpu(loops: usize, only: &[&str]) -> Res<()> {
    // the classes and layers named in `only` (all of a kind when it names none of that kind)
    let classes = ["fp32", "fp16"];
    let wanted = |v: &str, kind: bool| {
        let named = only.iter().filter(|o| classes.contains(o) == kind);
        named.clone().count() == 0 || named.clone().any(|o| *o == v)
    };
    let ctx = Arc::new(fpshader_tests::bench_context()?);
    // layers per chain (`FPSHADER_BENCH_LAYERS`, default 20): chains of several lengths tell
    // a run's fixed cost from each layer's
    let layers = std::env::var("FPSHADER_BENCH_LAYERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    // as large as the device binds in one buffer, up to 2^26 values (256 MiB of fp32)
    let bindable = (ctx.limits().max_storage_buffer_binding_size / 4).min(1 << 26) as usize;
    let big = [2048, bindable / (2048 * 16), 1, 16];
    let n = count(3, big) as f64;
    let fc = (((bindable as f64).sqrt() as usize) / 64 * 64).min(16384);
    for (class, opt) in [
        ("fp32", RunOptions::fp32()),
        ("fp16", RunOptions::default()),
    ] {
        if !wanted(class, true) {
            continue;
        }
        let opt = RunOptions {
            use_packing_layout: true,
            ..opt
        };
        let bytes = if class == "fp32" { 4.0 } else { 2.0 };
        for (name, text, moves, weights) in [
            (
                "relu",
                chain(&["a"], layers, "ReLU r{i} 1 1 {prev} {top}"),
                2.0 * n,
                false,
            ),
            (
                "binaryop_add",
                chain(
                    &["a", "b"],
                    layers,
                    "BinaryOp add{i} 2 1 {prev} b {top} 0=0",
                ),
                3.0 * n,
                false,
            ),
            (
                "sigmoid",
                chain(&["a"], layers, "Sigmoid s{i} 1 1 {prev} {top}"),
                2.0 * n,
                false,
            ),
            (
                "gelu",
                chain(&["a"], layers, "GELU g{i} 1 1 {prev} {top}"),
                2.0 * n,
                false,
            ),
            (
                // per channel of 16
                "batchnorm",
                chain(
                    &["a"],
                    layers,
                    "BatchNorm b{i} 1 1 {prev} {top} 0=16 1=0.00001",
                ),
                2.0 * n,
                false,
            ),
            (
                // over each row of 2048, with gamma and beta
                "layernorm",
                chain(
                    &["a"],
                    layers,
                    "LayerNorm n{i} 1 1 {prev} {top} 0=2048 1=0.00001 2=1",
                ),
                2.0 * n,
                false,
            ),
            (
                "rmsnorm",
                chain(
                    &["a"],
                    layers,
                    "RMSNorm n{i} 1 1 {prev} {top} 0=2048 1=0.00001 2=1",
                ),
                2.0 * n,
                false,
            ),
            (
                // 4 groups of 4 channels
                "groupnorm",
                chain(
                    &["a"],
                    layers,
                    "GroupNorm n{i} 1 1 {prev} {top} 0=4 1=16 2=0.00001 3=1",
                ),
                2.0 * n,
                false,
            ),
            (
                "instancenorm",
                chain(
                    &["a"],
                    layers,
                    "InstanceNorm n{i} 1 1 {prev} {top} 0=16 1=0.00001 2=1",
                ),
                2.0 * n,
                false,
            ),
            (
                // rows of 2048 along w: one workgroup per row
                "softmax",
                chain(&["a"], layers, "Softmax s{i} 1 1 {prev} {top} 0=2"),
                2.0 * n,
                false,
            ),
            (
                "innerproduct",
                chain(
                    &["a"],
                    layers,
                    &format!(
                        "InnerProduct fc{{i}} 1 1 {{prev}} {{top}} 0={fc} 1=1 2={}",
                        fc * fc
                    ),
                ),
                (fc * fc) as f64,
                true,
            ),
        ] {
            if !wanted(name, false) {
                continue;
            }
            let mut net = Net::new();
            net.opt = opt;
            net.set_context(ctx.clone());
            net.load_param_str(name, &text)?;
            net.load_model_zeros()?;
            let shape = if weights {
                (1, [fc, 1, 1, 1])
            } else {
                (3, big)
            };
            let host = Mat::from_shape_values(shape.0, shape.1, &values(count(shape.0, shape.1)))?;
            let opts = opt.variant_options(ctx.allowed_options());
            // the input in the layout the chain's layers take, so that no conversion before
            // the first one counts against them (the normalizations run on pack1 rows)
            let pack1 = ["layernorm", "rmsnorm", "groupnorm", "instancenorm"].contains(&name);
            let packed = host.to_packing(if weights {
                4
            } else if pack1 {
                1
            } else {
                if opt.use_shader_pack8 { 8 } else { 4 }
            })?;
            let a = GpuMat::upload(&ctx, &packed, opts)?;
            let run = || -> Res<()> {
                let mut ex = net.create_extractor()?;
                ex.input_gpu("a", a.clone())?;
                if name == "binaryop_add" {
                    ex.input_gpu("b", a.clone())?;
                }
                ex.extract_gpu("out")?;
                Ok(())
            };
            let ms = min_ms(loops, run)? / layers as f64;
            // one more run: where its time went (new buffers or bind groups after the
            // warm-up would be a leak in the executor)
            let before = ctx.submission_stats();
            run()?;
            let d = ctx.submission_stats() - before;
            println!(
                "gpu_layer {name} class {class} bytes {} ms_per_layer {ms:.4} GBps {:.1} \
                 submissions {} new_buffers {} bind_groups {} recording_ms {:.3} waiting_ms {:.3}",
                (moves * bytes) as usize,
                moves * bytes / ms / 1e6,
                d.submissions,
                d.new_buffers,
                d.bind_groups,
                d.recording.as_secs_f64() * 1e3,
                d.waiting.as_secs_f64() * 1e3
            );
            // device time per dispatch (each in a pass of its own while timed): the
            // shaders' share of the run, the rest being gaps between dispatches and the host
            if ctx.set_timing(true) {
                ctx.take_timings();
                run()?;
                ctx.set_timing(false);
                println!(
                    "gpu_device {name} class {class}{}",
                    shader_times(&ctx.take_timings())
                );
            }
            if name == "relu" {
                // the same shader on the same mats, ping-ponged through a bare Recorder: what
                // the net's executor costs at this size
                let bare = bare_chain(&ctx, &a, opts, layers, loops, false)?;
                println!(
                    "gpu_bare {name} class {class} options {} elempack {} ms_per_layer {bare:.4} GBps {:.1}",
                    opts.name(),
                    a.elempack,
                    moves * bytes / bare / 1e6
                );
                // each 16-bit storage variant and packing the device allows, for comparison
                if class == "fp16" {
                    for list in [
                        "fp16p",
                        "fp16p,fp16a",
                        "fp16s",
                        "fp16s,fp16a",
                        "fp16p,fp16s,fp16a",
                    ] {
                        let o = fpshader::OptionSet::parse(list)?;
                        if !o.is_subset_of(ctx.allowed_options()) {
                            continue;
                        }
                        for (pack, flat) in [(4, false), (8, false), (4, true)] {
                            let m = GpuMat::upload(&ctx, &host.to_packing(pack)?, o)?;
                            let t = bare_chain(&ctx, &m, o, layers, loops, flat)?;
                            println!(
                                "gpu_bare {name} class {class} options {list} elempack {pack} flat {flat} ms_per_layer {t:.4} GBps {:.1}",
                                moves * bytes / t / 1e6
                            );
                        }
                    }
                }
            }
        }
    }
    // executor overhead: a chain of small ReLUs through the net vs the same pipeline, same
    // count, through a bare Recorder (both one submission, waited)
    let small = [64, 64, 1, 64];
    let opt = RunOptions {
        use_packing_layout: true,
        ..RunOptions::fp32()
    };
    let opts = opt.variant_options(ctx.allowed_options());
    let mut net = Net::new();
    net.opt = opt;
    net.set_context(ctx.clone());
    net.load_param_str(
        "chain",
        &chain(&["a"], layers, "ReLU r{i} 1 1 {prev} {top}"),
    )?;
    net.load_model_zeros()?;
    let a = GpuMat::upload(
        &ctx,
        &Mat::from_shape_values(3, small, &values(count(3, small)))?.to_packing(4)?,
        opts,
    )?;
    let via_net = min_ms(loops, || {
        let mut ex = net.create_extractor()?;
        ex.input_gpu("a", a.clone())?;
        ex.extract_gpu("out")?;
        Ok(())
    })?;
    let bare = bare_chain(&ctx, &a, opts, layers, loops, false)? * layers as f64;
    println!(
        "executor layers {layers} shape 64x64x64 net_ms {via_net:.4} bare_recorder_ms {bare:.4} ratio {:.2}",
        via_net / bare
    );
    Ok(())
}

/// Milliseconds per ReLU over `a` (its packing's `unaryop` shader), `layers` of them recorded
/// into one bare `Recorder` over preallocated buffers, one submission, waited.
fn bare_chain(
    ctx: &Context,
    a: &fpshader::GpuMat,
    opts: fpshader::OptionSet,
    layers: usize,
    loops: usize,
    flat: bool,
) -> Res<f64> {
    let spec = Specialization {
        values: vec![
            (0, SpecValue::I32(1)),
            (1, SpecValue::F32(0.0)),
            (2, SpecValue::F32(0.0)),
        ],
        local_size: None,
    };
    let shader = match a.elempack {
        _ if flat => Shader::UnaryopFlat,
        1 => Shader::Unaryop,
        4 => Shader::UnaryopPack4,
        _ => Shader::UnaryopPack8,
    };
    let pipeline = ctx.pipeline(shader.module(), opts, &spec)?;
    let bufs = [a.alloc_like(ctx)?, a.alloc_like(ctx)?];
    let ms = min_ms(loops, || {
        let mut rec = ctx.recorder();
        for i in 0..layers {
            let (from, to) = if i == 0 {
                (a, &bufs[0])
            } else {
                (&bufs[(i + 1) % 2], &bufs[i % 2])
            };
            if flat {
                dispatch_flat(&mut rec, &pipeline, &[from, to], &[])?;
            } else {
                rec.dispatch(&pipeline, &[from, to], &a.shape_words(), a.grid())?;
            }
        }
        rec.submit_and_wait()?;
        Ok(())
    })?;
    Ok(ms / layers as f64)
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    match args.first().map(String::as_str) {
        Some("cpu") => cpu(num(1, 2), num(2, 20)),
        Some("gpu") => {
            let only: Vec<&str> = args.get(2).map_or(vec![], |s| s.split(',').collect());
            gpu(num(1, 20), &only)
        }
        _ => Err("usage: layer_bench cpu [THREADS [LOOPS]] | gpu [LOOPS [CLASS,LAYER,...]]".into()),
    }
}

/// ` shader S count N mean_us M total_us T` per shader, in order of first use, and the total.
fn shader_times(times: &[fpshader::DispatchTime]) -> String {
    let mut per: Vec<(&str, usize, f64)> = Vec::new();
    for t in times {
        match per.iter_mut().find(|(s, _, _)| *s == t.shader) {
            Some((_, n, us)) => {
                *n += 1;
                *us += t.micros;
            }
            None => per.push((&t.shader, 1, t.micros)),
        }
    }
    let mut out = String::new();
    for (s, n, us) in &per {
        out += &format!(
            " shader {s} count {n} mean_us {:.1} total_us {us:.1}",
            us / *n as f64
        );
    }
    let total: f64 = times.iter().map(|t| t.micros).sum();
    out + &format!(" all_us {total:.1}")
}
