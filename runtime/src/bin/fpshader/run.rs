//! `fpshader run`: one model, inputs from `.npy` files, outputs to `.npy` files or stdout.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use fpshader::layer::RunOptions;
use fpshader::net::Net;
use fpshader::{Context, ContextOptions, Mat, ShaderPath};
use fpshader_build::vgf::tosa::{Elem, TensorType};

use crate::{CliError, npy, print};

/// Arguments of `fpshader run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The model's structure: ncnn `.param` text or `.param.bin` (blobs named by index), or a
    /// `.vgf` file (whose SPIR-V reaches the Vulkan driver as it is, as in Arm's runner: run
    /// VGF files you trust).
    param: PathBuf,
    /// Its weights (`.bin`); without it every weight is zero, like benchncnn.
    bin: Option<PathBuf>,
    /// An input blob and the array for it; the name may be left out when the model has one input.
    #[arg(short, long = "input", value_name = "NAME=FILE.npy")]
    inputs: Vec<String>,
    /// A blob to compute (repeatable); default: every blob no layer reads.
    #[arg(long = "output", value_name = "NAME")]
    outputs: Vec<String>,
    /// Where outputs go: the .npy file for one output, a directory of NAME.npy for several;
    /// without it a summary is printed.
    #[arg(short = 'o', value_name = "OUT")]
    out: Option<PathBuf>,
    /// Run every layer on the CPU.
    #[arg(long)]
    cpu: bool,
    /// Precision and layout: `fp32`, or a comma list of fp16p, fp16s, fp16a, bf16s, int8, pack8,
    /// image, nopack, nolmem, nocm (no cooperative matrices), nowino (no Winograd convolutions);
    /// default: everything the device allows, as ncnn.
    #[arg(long, value_name = "fp32|fp16p,fp16s,…")]
    opt: Option<String>,
    /// The shader path on the GPU (default: passthrough on Vulkan, naga elsewhere).
    #[arg(long, value_name = "naga|passthrough")]
    path: Option<ShaderPath>,
    /// CPU threads for CPU layers (default: all cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Print load and run times (a first run, then a second one on warm pipelines).
    #[arg(long)]
    time: bool,
}

/// The `Option` that `--opt` asks for.
pub(crate) fn parse_opt(text: Option<&str>) -> Result<RunOptions, CliError> {
    let Some(text) = text else {
        return Ok(RunOptions::default());
    };
    // what the names switch on, over fp32 with the default packing
    let mut opt = RunOptions {
        use_packing_layout: RunOptions::default().use_packing_layout,
        ..RunOptions::fp32()
    };
    for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        match name {
            "fp32" => {}
            "fp16p" => opt.use_fp16_packed = true,
            "fp16s" => opt.use_fp16_storage = true,
            "fp16a" => opt.use_fp16_arithmetic = true,
            "bf16s" => opt.use_bf16_storage = true,
            "int8" => opt.use_int8_inference = true,
            "pack8" => opt.use_shader_pack8 = true,
            "image" => opt.use_image_storage = true,
            "nopack" => opt.use_packing_layout = false,
            "nolmem" => opt.use_local_memory = false,
            "nocm" => opt.use_cooperative_matrix = false,
            "nowino" => opt.use_winograd_convolution = false,
            other => {
                return Err(CliError::Usage(format!(
                    "--opt `{other}`: expected fp32, fp16p, fp16s, fp16a, bf16s, int8, pack8, \
                     image, nopack, nolmem, nocm or nowino"
                )));
            }
        }
    }
    Ok(opt)
}

/// A loaded model on the device the arguments chose.
/// The device a run asks for: `None` for the CPU.
pub(crate) fn device(
    cpu: bool,
    path: Option<ShaderPath>,
) -> Result<Option<Arc<Context>>, CliError> {
    if cpu {
        return Ok(None);
    }
    match Context::new(ContextOptions {
        path,
        ..Default::default()
    }) {
        Ok(ctx) => Ok(Some(Arc::new(ctx))),
        // a CPU emulation of a GPU is never the default for a model: the CPU path is faster
        Err(fpshader::Error::Device(fpshader::DeviceError::OnlyCpuAdapters { available })) => {
            eprintln!(
                "fpshader: no GPU (only {available}, emulated on the CPU): running on the CPU; \
                 FPSHADER_ADAPTER=NAME picks an adapter anyway"
            );
            Ok(None)
        }
        Err(e) => Err(CliError::Usage(format!(
            "{e} (use --cpu to run without a GPU)"
        ))),
    }
}

/// Loads `param` (text or `.param.bin`) and `bin` (zero weights without one) for `ctx`.
pub(crate) fn load_net(
    param: &std::path::Path,
    bin: Option<&std::path::Path>,
    ctx: Option<Arc<Context>>,
    opt: RunOptions,
) -> Result<Net, CliError> {
    let mut net = Net::new();
    net.opt = opt;
    if let Some(ctx) = ctx {
        net.set_context(ctx);
    }
    if param.to_string_lossy().ends_with(".param.bin") {
        net.load_param_bin(param)?;
    } else {
        net.load_param(param)?;
    }
    match bin {
        Some(bin) => net.load_model(bin)?,
        None => net.load_model_zeros()?,
    }
    Ok(net)
}

fn load(args: &RunArgs, opt: RunOptions) -> Result<Net, CliError> {
    load_net(
        &args.param,
        args.bin.as_deref(),
        device(args.cpu, args.path)?,
        opt,
    )
}

/// `(blob name, array)` for each `--input`.
fn inputs(net: &Net, args: &RunArgs) -> Result<Vec<(String, Mat)>, CliError> {
    let declared: Vec<&str> = net
        .layers()
        .iter()
        .filter(|l| l.kind == "Input")
        .flat_map(|l| l.tops.iter().map(|&t| net.blobs()[t].name.as_str()))
        .collect();
    args.inputs
        .iter()
        .map(|spec| {
            let (name, file) = match spec.split_once('=') {
                Some((name, file)) => (name.to_string(), file),
                None => match declared[..] {
                    [only] => (only.to_string(), spec.as_str()),
                    _ => {
                        return Err(CliError::Usage(format!(
                            "--input {spec}: name the blob (NAME=FILE.npy); the model's inputs \
                             are {declared:?}"
                        )));
                    }
                },
            };
            Ok((name, npy::read(file)?))
        })
        .collect()
}

/// One pass: every input set, every output extracted.
fn extract(net: &Net, inputs: &[(String, Mat)], outputs: &[String]) -> Result<Vec<Mat>, CliError> {
    let mut ex = net.create_extractor()?;
    for (name, m) in inputs {
        ex.input(name, m.clone())?;
    }
    Ok(outputs
        .iter()
        .map(|o| ex.extract(o))
        .collect::<fpshader::Result<_>>()?)
}

fn summary(name: &str, m: &Mat) -> String {
    let v = m.to_values();
    let (min, max) = v
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len().max(1) as f64;
    let head: Vec<String> = v.iter().take(8).map(|x| format!("{x:.6}")).collect();
    format!(
        "{name}: shape {:?} min {min:.6} max {max:.6} mean {mean:.6}\n  [{}{}]\n",
        m.numpy_shape(),
        head.join(", "),
        if v.len() > 8 { ", …" } else { "" }
    )
}

/// Runs `fpshader run`.
pub fn run(args: RunArgs) -> Result<(), CliError> {
    if args.param.extension().is_some_and(|e| e == "vgf") {
        return run_vgf(&args);
    }
    let mut opt = parse_opt(args.opt.as_deref())?;
    if let Some(n) = args.threads {
        opt.num_threads = n.max(1);
    }
    with_threads(args.threads, || run_with(&args, opt))
}

/// Runs `work` on `threads` CPU threads (rayon's default pool without).
pub(crate) fn with_threads<T: Send>(
    threads: Option<usize>,
    work: impl FnOnce() -> Result<T, CliError> + Send,
) -> Result<T, CliError> {
    let Some(n) = threads else {
        return work();
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n.max(1))
        .build()
        .map_err(|e| CliError::Usage(format!("--threads {n}: {e}")))?;
    pool.install(work)
}

fn run_with(args: &RunArgs, opt: RunOptions) -> Result<(), CliError> {
    let t0 = Instant::now();
    let net = load(args, opt)?;
    let loaded = t0.elapsed();
    let inputs = inputs(&net, args)?;
    let outputs: Vec<String> = if args.outputs.is_empty() {
        net.blobs()
            .iter()
            .filter(|b| b.producer.is_some() && b.consumers.is_empty())
            .map(|b| b.name.clone())
            .collect()
    } else {
        args.outputs.clone()
    };
    let t1 = Instant::now();
    let mats = extract(&net, &inputs, &outputs)?;
    let first = t1.elapsed();
    let mut report = String::new();
    if args.time {
        let t2 = Instant::now();
        extract(&net, &inputs, &outputs)?;
        let second = t2.elapsed();
        let device = net
            .context()
            .map_or_else(|| "CPU".to_string(), |c| c.describe());
        report += &format!(
            "{device}: load {:.3} ms, first run {:.3} ms, second run {:.3} ms\n",
            loaded.as_secs_f64() * 1e3,
            first.as_secs_f64() * 1e3,
            second.as_secs_f64() * 1e3
        );
    }
    match &args.out {
        Some(path) if outputs.len() == 1 => npy::write(&path.to_string_lossy(), &mats[0])?,
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| CliError::Npy {
                path: dir.display().to_string(),
                message: e.to_string(),
            })?;
            for (name, m) in outputs.iter().zip(&mats) {
                let file = dir.join(format!("{}.npy", name.replace(['/', '\\'], "_")));
                npy::write(&file.to_string_lossy(), m)?;
            }
        }
        None => {
            for (name, m) in outputs.iter().zip(&mats) {
                report += &summary(name, m);
            }
        }
    }
    print(&report);
    Ok(())
}

/// The format of one channel of `format` (`R32G32B32A32_SFLOAT` → `R32_SFLOAT`): an image's
/// `[…, C]` values are one element per channel, texel after texel.
fn channel_format(format: u32) -> u32 {
    use fpshader_build::vgf::{format_name, format_value};
    let one = format_name(format)
        .and_then(|name| name.strip_prefix("VK_FORMAT_"))
        .and_then(|rest| rest.split_once('_'))
        .and_then(|(components, kind)| {
            let bits: String = (components.chars().skip(1))
                .take_while(char::is_ascii_digit)
                .collect();
            format_value(&format!("VK_FORMAT_R{bits}_{kind}"))
        });
    one.unwrap_or(format)
}

/// The bytes of `values` as elements of `VkFormat` `format`, or why not: TOSA's element
/// types (as the converter writes them), unsigned integers, normalized bytes, and images'
/// formats channel by channel.
fn encode(values: &[f32], format: u32) -> Result<Vec<u8>, String> {
    let format = channel_format(format);
    if let Some(elem) = Elem::from_vk_format(format) {
        let ty = TensorType {
            shape: vec![values.len() as i64],
            elem,
        };
        let values: Vec<f64> = values.iter().map(|&v| f64::from(v)).collect();
        return ty.bytes(&values).ok_or_else(|| "no values".to_string());
    }
    Ok(match fpshader_build::vgf::format_name(format) {
        Some("VK_FORMAT_R8_UINT") => values.iter().map(|&v| v as u8).collect(),
        Some("VK_FORMAT_R8_UNORM") => (values.iter())
            .map(|&v| (v.clamp(0.0, 1.0) * 255.0).round() as u8)
            .collect(),
        Some("VK_FORMAT_R8_SNORM") => (values.iter())
            .map(|&v| (v.clamp(-1.0, 1.0) * 127.0).round() as i8 as u8)
            .collect(),
        Some("VK_FORMAT_R32_UINT") => values
            .iter()
            .flat_map(|&v| (v as u32).to_le_bytes())
            .collect(),
        other => {
            return Err(format!(
                "tensors of {} are not read from .npy",
                other.unwrap_or("an unknown format")
            ));
        }
    })
}

/// The elements of `VkFormat` `format` in `bytes`, as f32 (what the `.npy` files hold).
fn decode(bytes: &[u8], format: u32) -> Result<Vec<f32>, String> {
    let format = channel_format(format);
    if let Some(elem) = Elem::from_vk_format(format) {
        return Ok(elem.decode(bytes).into_iter().map(|v| v as f32).collect());
    }
    Ok(match fpshader_build::vgf::format_name(format) {
        Some("VK_FORMAT_R8_UINT") => bytes.iter().map(|&b| f32::from(b)).collect(),
        Some("VK_FORMAT_R8_UNORM") => bytes.iter().map(|&b| f32::from(b) / 255.0).collect(),
        Some("VK_FORMAT_R8_SNORM") => (bytes.iter())
            .map(|&b| (f32::from(b as i8) / 127.0).max(-1.0))
            .collect(),
        Some("VK_FORMAT_R32_UINT") => bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f32)
            .collect(),
        other => {
            return Err(format!(
                "tensors of {} are not written to .npy",
                other.unwrap_or("an unknown format")
            ));
        }
    })
}

/// `fpshader run MODEL.vgf --input a.npy …`: inputs in the model's order (or NAME=FILE),
/// converted to each input's element format; outputs written as float32.
fn run_vgf(args: &RunArgs) -> Result<(), CliError> {
    if args.cpu {
        return Err(CliError::Usage("a VGF model runs on the GPU only".into()));
    }
    let ctx = Context::new(ContextOptions {
        path: args.path,
        // a VGF model runs on a GPU only, so an emulated one is better than none
        allow_cpu_adapter: true,
        ..Default::default()
    })?;
    let bytes = std::fs::read(&args.param)
        .map_err(|e| CliError::Usage(format!("{}: {e}", args.param.display())))?;
    // SAFETY: the user asked to run this file: its shaders reach the driver as Arm's runner
    // would pass them (the CLI's help says so); the rest of the file is checked
    let model = unsafe { fpshader::vgf::VgfModel::load(&ctx, &bytes, &Default::default())? };
    let names = model.input_names().to_vec();
    if args.inputs.len() != names.len() {
        return Err(CliError::Usage(format!(
            "the model takes {} inputs ({}), {} --input were given",
            names.len(),
            names.join(", "),
            args.inputs.len()
        )));
    }
    let mut data = vec![Vec::new(); names.len()];
    for (i, arg) in args.inputs.iter().enumerate() {
        let (slot, file) = match arg.split_once('=') {
            Some((name, file)) => {
                let slot = names.iter().position(|n| n == name).ok_or_else(|| {
                    CliError::Usage(format!(
                        "the model has no input `{name}` ({})",
                        names.join(", ")
                    ))
                })?;
                (slot, file)
            }
            None => (i, arg.as_str()),
        };
        let (_, values) = npy::read_values(file)?;
        data[slot] = encode(&values, model.input_formats()[slot])
            .map_err(|e| CliError::Usage(format!("input `{}`: {e}", names[slot])))?;
    }
    let views: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
    let outputs = model.run(&ctx, &views)?;
    let shapes = model.output_shapes();
    let formats = model.output_formats();
    for (i, bytes) in outputs.iter().enumerate() {
        let name = &model.output_names()[i];
        let values = decode(bytes, formats[i])
            .map_err(|e| CliError::Usage(format!("output `{name}`: {e}")))?;
        let shape: Vec<u64> = shapes[i].iter().map(|&d| d.max(0) as u64).collect();
        match &args.out {
            Some(path) if outputs.len() == 1 => {
                npy::write_values(&path.to_string_lossy(), &shape, values)?;
            }
            Some(dir) => {
                std::fs::create_dir_all(dir)
                    .map_err(|e| CliError::Usage(format!("{}: {e}", dir.display())))?;
                let file = dir.join(format!("{name}.npy"));
                npy::write_values(&file.to_string_lossy(), &shape, values)?;
            }
            None => print(&format!(
                "{name}: shape {shape:?}, first values {:?}\n",
                &values[..values.len().min(8)]
            )),
        }
    }
    Ok(())
}
