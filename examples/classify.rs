//! Image classification with an ncnn model on any GPU: loads a `.param`/`.bin`, an image, runs
//! on the default adapter and prints the top 5; `--all-backends` runs every backend this machine
//! has (Vulkan, GL, Metal, DX12) and the CPU, and shows that they agree.
//!
//! ```sh
//! cargo run --release --example classify -- squeezenet.param squeezenet.bin cat.jpg
//! cargo run --release --example classify -- m.param m.bin cat.png --size 224 \
//!     --mean 123.675,116.28,103.53 --norm 0.01712,0.01751,0.01743 --rgb --all-backends
//! ```
//!
//! The image is resized to `--size` (default: the model's `Input` width, else 224), channels
//! BGR unless `--rgb` (Caffe's order, as ncnn's zoo expects), then `(pixel - mean) * norm`
//! per channel (defaults: Caffe's ImageNet means, norm 1). `--input`/`--output` name the blobs
//! (defaults: the `Input` layer's blob, the last blob nobody reads); `--labels FILE` names the
//! classes, one per line.

use std::process::ExitCode;
use std::sync::Arc;

use fpshader::layer::RunOptions;
use fpshader::net::Net;
use fpshader::{Context, ContextOptions, Mat, wgpu};

struct Args {
    param: String,
    bin: String,
    image: String,
    size: Option<u32>,
    mean: [f32; 3],
    norm: [f32; 3],
    rgb: bool,
    input: Option<String>,
    output: Option<String>,
    labels: Option<String>,
    all_backends: bool,
}

fn triple(flag: &str, text: &str) -> Result<[f32; 3], String> {
    let v: Vec<f32> = text
        .split(',')
        .map(|s| s.trim().parse::<f32>())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{flag} {text}: {e}"))?;
    v.try_into()
        .map_err(|_| format!("{flag} {text}: expected three numbers"))
}

fn parse() -> Result<Args, String> {
    let mut positional = Vec::new();
    let mut args = Args {
        param: String::new(),
        bin: String::new(),
        image: String::new(),
        size: None,
        mean: [104.0, 117.0, 123.0],
        norm: [1.0; 3],
        rgb: false,
        input: None,
        output: None,
        labels: None,
        all_backends: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |flag: &str| it.next().ok_or_else(|| format!("{flag} needs a value"));
        match a.as_str() {
            "--size" => {
                let v = value("--size")?;
                args.size = Some(v.parse().map_err(|e| format!("--size {v}: {e}"))?);
            }
            "--mean" => args.mean = triple("--mean", &value("--mean")?)?,
            "--norm" => args.norm = triple("--norm", &value("--norm")?)?,
            "--rgb" => args.rgb = true,
            "--input" => args.input = Some(value("--input")?),
            "--output" => args.output = Some(value("--output")?),
            "--labels" => args.labels = Some(value("--labels")?),
            "--all-backends" => args.all_backends = true,
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            _ => positional.push(a),
        }
    }
    let [param, bin, image]: [String; 3] = positional
        .try_into()
        .map_err(|_| "usage: classify MODEL.param MODEL.bin IMAGE [options]".to_string())?;
    (args.param, args.bin, args.image) = (param, bin, image);
    Ok(args)
}

/// The net on `ctx` (the CPU without one).
fn load(args: &Args, ctx: Option<Arc<Context>>) -> Result<Net, String> {
    let mut net = Net::new();
    net.opt = RunOptions::default();
    if let Some(ctx) = ctx {
        net.set_context(ctx);
    }
    net.load_param(&args.param).map_err(|e| e.to_string())?;
    net.load_model(&args.bin).map_err(|e| e.to_string())?;
    Ok(net)
}

/// The `Input` layer's blob and its declared width, and the last blob nobody reads.
fn blobs(net: &Net, args: &Args) -> Result<(String, Option<u32>, String), String> {
    let input_layer = net.layers().iter().find(|l| l.kind == "Input");
    let declared = input_layer
        .and_then(|l| l.tops.first())
        .map(|&t| net.blobs()[t].name.clone());
    let input = args
        .input
        .clone()
        .or(declared)
        .ok_or("the model has no Input layer; give --input")?;
    let width = std::fs::read_to_string(&args.param).ok().and_then(|text| {
        text.lines()
            .find(|l| l.starts_with("Input"))
            .and_then(|l| l.split_whitespace().find_map(|f| f.strip_prefix("0=")))
            .and_then(|v| v.parse().ok())
    });
    let output = args
        .output
        .clone()
        .or_else(|| {
            net.blobs()
                .iter()
                .rev()
                .find(|b| b.producer.is_some() && b.consumers.is_empty())
                .map(|b| b.name.clone())
        })
        .ok_or("the model has no output blob; give --output")?;
    Ok((input, width, output))
}

/// The image as a `size × size × 3` mat: resized, channels in the model's order, normalized.
fn image_mat(args: &Args, size: u32) -> Result<Mat, String> {
    let img = image::open(&args.image)
        .map_err(|e| format!("{}: {e}", args.image))?
        .to_rgb8();
    let img = image::imageops::resize(&img, size, size, image::imageops::FilterType::Triangle);
    let plane = (size * size) as usize;
    let mut values = vec![0.0f32; 3 * plane];
    for (i, px) in img.pixels().enumerate() {
        for c in 0..3 {
            let src = if args.rgb { c } else { 2 - c };
            values[c * plane + i] = (f32::from(px[src]) - args.mean[c]) * args.norm[c];
        }
    }
    Mat::from_values(size as usize, size as usize, 3, &values).map_err(|e| e.to_string())
}

fn classify(net: &Net, input: &str, output: &str, x: &Mat) -> Result<Vec<f32>, String> {
    let mut ex = net.create_extractor().map_err(|e| e.to_string())?;
    ex.input(input, x.clone()).map_err(|e| e.to_string())?;
    let out = ex.extract(output).map_err(|e| e.to_string())?;
    Ok(out.to_values())
}

fn top5(scores: &[f32]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]));
    idx.truncate(5);
    idx
}

fn run() -> Result<(), String> {
    let args = parse()?;
    let labels: Vec<String> = match &args.labels {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| format!("{path}: {e}"))?
            .lines()
            .map(str::to_string)
            .collect(),
        None => Vec::new(),
    };
    let label = |i: usize| {
        labels
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("class {i}"))
    };

    // every backend this machine has, or the default adapter
    let mut devices: Vec<(String, Option<Arc<Context>>)> = Vec::new();
    let backends: Vec<Option<wgpu::Backends>> = if args.all_backends {
        [
            wgpu::Backends::VULKAN,
            wgpu::Backends::GL,
            wgpu::Backends::METAL,
            wgpu::Backends::DX12,
        ]
        .into_iter()
        .map(Some)
        .collect()
    } else {
        vec![None]
    };
    for backends in backends {
        match Context::new(ContextOptions {
            backends,
            // comparing every backend includes the emulated ones (lavapipe, llvmpipe)
            allow_cpu_adapter: args.all_backends,
            ..Default::default()
        }) {
            Ok(ctx) => devices.push((ctx.describe(), Some(Arc::new(ctx)))),
            Err(e) if args.all_backends => println!("{backends:?}: none ({e})"),
            Err(e) => println!("no GPU ({e}); running on the CPU"),
        }
    }
    if args.all_backends || devices.is_empty() {
        devices.push(("CPU".to_string(), None));
    }

    let mut results: Vec<(String, Vec<f32>)> = Vec::new();
    for (name, ctx) in devices {
        let net = load(&args, ctx)?;
        let (input, width, output) = blobs(&net, &args)?;
        let size = args.size.or(width).unwrap_or(224);
        let x = image_mat(&args, size)?;
        let t = std::time::Instant::now();
        let scores = classify(&net, &input, &output, &x)?;
        println!(
            "{name}: {:.1} ms (the first run)",
            t.elapsed().as_secs_f64() * 1e3
        );
        for i in top5(&scores) {
            println!("  {:>10.5}  {}", scores[i], label(i));
        }
        results.push((name, scores));
    }

    if let Some(((first, reference), rest)) = results.split_first().map(|(f, r)| ((&f.0, &f.1), r))
    {
        for (name, scores) in rest {
            let diff = scores
                .iter()
                .zip(reference)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            let same = top5(scores).first() == top5(reference).first();
            println!(
                "{name} vs {first}: max difference {diff:.2e}, top-1 {}",
                if same { "agrees" } else { "DIFFERS" }
            );
            if !same {
                return Err(format!("{name} and {first} disagree on the top-1"));
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("classify: {e}");
            ExitCode::FAILURE
        }
    }
}
