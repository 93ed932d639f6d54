//! ncnn's benchmark models (`tests/zoo/`, from ncnn's `benchmark/models`, BSD-3) with random
//! weights written in ncnn's `.bin` format: fpshader on the CPU and on the GPU (fp32 and fp16
//! on the passthrough path, fp16 on naga's) against ncnn's wheel on the same weights and
//! input. Inputs are smaller than 224×224 to keep CI short where the params allow: the nets
//! that end in a 7×7 pooling get the smallest side that leaves 7×7 there (195 for the resnets;
//! googlenet's ceil poolings need 223, so it runs at 224), the others 64 or 67; vgg16's and
//! alexnet's first fully connected layer is resized to the smaller input's features.
//!
//! The super-resolution models (`tests/sr/`, from their PyPI packages) run the same way at a
//! 44×44 input (the smallest their two downsamplings and crops take is 40).

mod common;
#[path = "zoo/detection.rs"]
mod detection;
#[path = "zoo/int8.rs"]
mod int8;
#[path = "zoo/llm.rs"]
mod llm;
#[path = "zoo/threads.rs"]
mod threads;
#[path = "zoo/weights.rs"]
mod weights;

use common::*;
use fpshader::layer::RunOptions;
use fpshader::{Context, ShaderPath};
use weights::with_random_weights;

/// A seed of its own for each model, so that its weights and input do not depend on which other
/// models run (each model is a test of its own, spread over the cores by the harness).
fn rng_for(name: &str) -> Rng {
    Rng(name.bytes().fold(2026, |h: u64, b| {
        h.wrapping_mul(31).wrapping_add(u64::from(b))
    }))
}

fn zoo_param(name: &str) -> String {
    let path = format!("{}/../tests/zoo/{name}.param", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// How many times the most bytes in use at once a model's GPU run may allocate. blazeface
/// grows its channels a few at a time (24, 28, 32, … at one resolution), so each blob is a
/// little larger than every buffer freed before it and none of them fits it: a staircase a
/// best-fit pool without size classes (ncnn's too) allocates in full.
fn pool_bound(name: &str) -> f64 {
    if name == "blazeface" { 3.0 } else { 1.5 }
}

/// `out` of a model run on `ctx`, every layer on the device in one submission (nothing read
/// back early), or a panic naming `what`.
fn on_the_gpu(
    (param, weights): (&str, &[u8]),
    inputs: &[Input],
    out: &str,
    opt: RunOptions,
    ctx: &std::sync::Arc<Context>,
    what: &str,
) -> Vec<f32> {
    let (got, record) = run_net_recorded(param, weights, inputs, out, opt, Some(ctx.clone()))
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        record.cpu_layers().is_empty() && record.stayed_on_gpu(),
        "{what}: left the GPU: {record:?}"
    );
    got.to_values()
}

/// The blob of a param's first `Input` layer.
fn input_name(param: &str) -> &'static str {
    let line = param.lines().find(|l| l.starts_with("Input")).unwrap();
    let blob = line.split_whitespace().nth(4).unwrap();
    Box::leak(blob.to_string().into_boxed_str())
}

fn top1(v: &[f32]) -> usize {
    v.iter()
        .enumerate()
        .fold(
            (0, f32::NEG_INFINITY),
            |b, (i, x)| if *x > b.1 { (i, *x) } else { b },
        )
        .0
}

/// Whether the reference's top two are close enough (relative) that rounding may swap them.
fn near_tie(v: &[f32]) -> bool {
    let mut s = v.to_vec();
    s.sort_by(|a, b| b.total_cmp(a));
    s.len() > 1 && (s[0] - s[1]) <= 0.02 * s[0].abs()
}

/// A `#[test]` per model in module `$group`, each calling `$check(name, args…)`: the harness
/// spreads the models over the machine's cores, where one test of them all ran on one.
macro_rules! model_tests {
    ($group:ident, $check:ident { $($name:ident $(: $($arg:expr),+)?;)* }) => {
        mod $group {
            $(
                #[test]
                fn $name() {
                    super::$check(stringify!($name) $($(, $arg)+)?);
                }
            )*
        }
    };
}

// ncnn's benchmark models: the input's side, and the first fully connected layer's new input
// size where the side changes it
model_tests!(zoo_matches_ncnn_on_the_cpu_and_the_gpu, zoo_model {
    squeezenet: 67, None;
    mobilenet: 64, None;
    mobilenet_v2: 64, None;
    mobilenet_v3: 64, None;
    shufflenet_v2: 64, None;
    mnasnet: 64, None;
    resnet18: 195, None;
    resnet50: 195, None;
    googlenet: 224, None;
    efficientnet_b0: 64, None;
    regnety_400m: 64, None;
    // 32 → pool5 of 1×1×512
    vgg16: 32, Some(512);
    // 67 → pool5 of 1×1×256
    alexnet: 67, Some(256);
});

// the rest of ncnn's benchmark folder (float models): the file's name and the input's side
model_tests!(bench_folder_matches_ncnn, bench_model {
    blazeface: "blazeface", 128;
    fastestdet: "FastestDet", 96;
    efficientnetv2_b0: "efficientnetv2_b0", 64;
    proxylessnasnet: "proxylessnasnet", 64;
    shufflenet: "shufflenet", 64;
    // its position embedding holds 12×12 patches of 32 and the class token
    vision_transformer: "vision_transformer", 384;
    yolo_fastestv2: "yolo-fastestv2", 96;
    nanodet_m: "nanodet_m", 96;
});

fn bench_model(_test: &str, name: &str, side: usize) {
    zoo_model(name, side, None);
}

// ncnn's int8 benchmark models, run as int8: the file's name, the input's side and the first
// fully connected layer's new input size where the side changes it
model_tests!(int8_models_match_ncnn_int8, int8_model {
    squeezenet_int8: "squeezenet_int8", 67, None;
    mobilenet_int8: "mobilenet_int8", 64, None;
    resnet18_int8: "resnet18_int8", 195, None;
    resnet50_int8: "resnet50_int8", 195, None;
    googlenet_int8: "googlenet_int8", 224, None;
    vgg16_int8: "vgg16_int8", 32, Some(512);
});

fn int8_model(_test: &str, name: &str, side: usize, fc6_inputs: Option<usize>) {
    int8::check(name, side, fc6_inputs, 2e-2);
}

// ncnn's LLM decoders, their first block: the file's stem, the hidden size and half a head
// (benchncnn_llm's table)
model_tests!(llm_decoders_match_ncnn, llm_decoder {
    qwen3_0_6b: "qwen3_0.6b", 1024, 64;
    qwen2_5_0_5b: "qwen2.5_0.5b", 896, 32;
    llama3_2_1b: "llama3.2_1b", 2048, 32;
    tinyllama_1_1b: "tinyllama_1.1b", 2048, 32;
    minicpm4_0_5b: "minicpm4_0.5b", 1024, 32;
    hunyuan_0_5b: "hunyuan_0.5b_instruct", 1024, 64;
    youtu_llm_2b: "youtu_llm_2b", 2048, 64;
});

fn llm_decoder(_test: &str, name: &str, hidden: usize, half: usize) {
    llm::check(name, hidden, half);
}

/// A model's GPU checks on `ctx`: (class, options, tolerance) for fp32 (options `fp32`, within 1e-3)
/// and fp16 (the default options, within `fp16_eps`) on the passthrough path; fp16 only on
/// naga's, the options its users get by default. The net suite runs every layer on the naga
/// path in fp32 too, and each distinct pipeline costs lavapipe a compile on a fresh machine
/// (a model's are most of its test's time there).
fn gpu_classes(
    ctx: &Context,
    fp32: RunOptions,
    fp16_eps: f32,
) -> Vec<(&'static str, RunOptions, f32)> {
    let fp16 = ("fp16", RunOptions::default(), fp16_eps);
    match ctx.path() {
        ShaderPath::Passthrough => vec![("fp32", fp32, 1e-3), fp16],
        ShaderPath::Naga => vec![fp16],
    }
}

/// A zoo model on the CPU (fp32) and every GPU context (fp32 packed, fp16; [`gpu_classes`])
/// against ncnn's wheel.
fn zoo_model(name: &str, side: usize, fc6_inputs: Option<usize>) {
    let mut rng = rng_for(name);
    let contexts = gpu_contexts();
    let (param, weights, out) = with_random_weights(&mut rng, &zoo_param(name), fc6_inputs);
    let x = Input::new(&mut rng, input_name(&param), 3, [side, side, 1, 3]);
    let inputs = std::slice::from_ref(&x);
    let cpu = run_net(&param, &weights, inputs, &out, RunOptions::fp32(), None)
        .unwrap_or_else(|e| panic!("{name} on the CPU: {e}"))
        .to_values();
    let reference = ncnn(&param, &weights, inputs, &out).unwrap_or_else(|| cpu.clone());
    let what = |how: &str| format!("{name} ({side}×{side}), {how}");
    assert_close(&cpu, &reference, 1e-3, &what("CPU fp32"));
    assert_eq!(top1(&cpu), top1(&reference), "{}", what("CPU fp32 top-1"));
    let fp32 = RunOptions {
        use_packing_layout: true,
        ..RunOptions::fp32()
    };
    for ctx in &contexts {
        for (class, opt, eps) in gpu_classes(ctx, fp32, 0.1) {
            let how = format!("GPU {class}, {}", ctx.describe());
            // this model's device memory alone
            ctx.trim_pool();
            ctx.reset_peak_memory();
            // every zoo layer has a GPU forward: one submission, nothing read back early
            let got = on_the_gpu((&param, &weights), inputs, &out, opt, ctx, &what(&how));
            // the blob pool reuses freed buffers: what it allocated stays within 1.5 times
            // the most in use at once (weights and live blobs)
            let memory = ctx.memory_stats();
            eprintln!(
                "{}: {} bytes allocated, peak in use {}",
                what(&how),
                memory.allocated,
                memory.peak_live
            );
            assert!(
                memory.allocated as f64 <= pool_bound(name) * memory.peak_live as f64,
                "{}: {memory:?}",
                what(&how)
            );
            if class == "fp16" && name == "blazeface" {
                // its sixteen residual sums have no normalization and grow to thousands with
                // random weights: its small outputs are differences of large fp16 values, off
                // by their rounding (a few units where the largest is 5728), not by 0.1 of
                // themselves
                let largest = reference.iter().fold(0f32, |m, v| m.max(v.abs()));
                assert_close(&got, &reference, 1e-3 * largest, &what(&how));
            } else {
                assert_close(&got, &reference, eps, &what(&how));
            }
            if class == "fp32" || !near_tie(&reference) {
                assert_eq!(
                    top1(&got),
                    top1(&reference),
                    "{}",
                    what(&format!("{how} top-1"))
                );
            }
        }
    }
}

// ncnn's benchmark detection models: the file's name, the input's side (the models' own: their
// PriorBox steps, Interp scales and Crop offsets follow from it) and the head's confidence
// threshold (param `k=v`) lowered to what random weights' scores reach (SSD's 21 classes share
// a softmax, YOLOv2's objectness halves its class softmax), so that the heads detect something;
// the `_int8` SSDs as int8, on the CPU
model_tests!(detection_models_match_ncnn, detection_model {
    mobilenet_ssd: "mobilenet_ssd", 300, "4=0.04";
    squeezenet_ssd: "squeezenet_ssd", 300, "4=0.04";
    mobilenet_ssd_int8: "mobilenet_ssd_int8", 300, "4=0.04";
    squeezenet_ssd_int8: "squeezenet_ssd_int8", 300, "4=0.04";
    mobilenet_yolo: "mobilenet_yolo", 416, "2=0.01";
    mobilenetv2_yolov3: "mobilenetv2_yolov3", 352, "2=0.3";
    yolov4_tiny: "yolov4-tiny", 416, "2=0.3";
    yolo_fastest: "yolo-fastest-1.1", 320, "2=0.3";
});

/// A detection model of `tests/zoo/` ([`detection::check`]) with random weights, its head's
/// parameter `threshold` (`k=v`) set.
fn detection_model(_test: &str, name: &str, side: usize, threshold: &str) {
    let mut rng = rng_for(name);
    let (key, _) = threshold.split_once('=').unwrap();
    let param: Vec<String> = (zoo_param(name).lines())
        .map(|l| match l.contains("DetectionOutput") {
            true => (l.split_whitespace())
                .filter(|f| !f.starts_with(&format!("{key}=")))
                .chain([threshold])
                .collect::<Vec<_>>()
                .join(" "),
            false => l.to_string(),
        })
        .collect();
    let (param, weights, out) = with_random_weights(&mut rng, &(param.join("\n") + "\n"), None);
    let x = Input::new(&mut rng, "data", 3, [side, side, 1, 3]);
    detection::check(name, (&param, &weights), &x, &out, name.ends_with("_int8"));
}

model_tests!(super_resolution_matches_ncnn_and_stays_on_the_gpu, sr_model {
    waifu2x_cunet_noise0_scale2x: "Input1";
    waifu2x_upconv_7_photo_scale2x: "Input1";
    realcugan_se_up2x_no_denoise: "in0";
});

/// A super-resolution model of `tests/sr/` (its input blob named `input`): fpshader's CPU
/// against ncnn's wheel, and every GPU context in fp32 and fp16 ([`gpu_classes`]) against it
/// too, without ever leaving the GPU (Scale and BinaryOp with a second blob, Crop against a
/// reference blob, Deconvolution).
fn sr_model(name: &str, input: &'static str) {
    let mut rng = rng_for(name);
    let path = format!("{}/../tests/sr/{name}.param", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (param, weights, out) = with_random_weights(&mut rng, &text, None);
    let x = Input::new(&mut rng, input, 3, [44, 44, 1, 3]);
    check_model(
        name,
        (&param, &weights),
        std::slice::from_ref(&x),
        &out,
        None,
    );
}

/// A whole model on the CPU (fp32) against ncnn's wheel (and `torch`'s output where given),
/// then on every GPU context in fp32 and fp16 ([`gpu_classes`]) against the wheel's output:
/// one submission, no layer on the CPU, nothing read back before the output.
fn check_model(
    name: &str,
    (param, weights): (&str, &[u8]),
    inputs: &[Input],
    out: &str,
    torch: Option<&[f32]>,
) {
    let cpu = run_net(param, weights, inputs, out, RunOptions::fp32(), None)
        .unwrap_or_else(|e| panic!("{name} on the CPU: {e}"));
    if let Some(torch) = torch {
        // pnnx's conversion and fpshader's layers together against PyTorch
        let what = format!("{name}: CPU fp32 against PyTorch");
        assert_close(&cpu.to_values(), torch, 1e-3, &what);
    }
    let reference = ncnn_outputs_shaped(("m.param", param.as_bytes()), weights, inputs, &[out]);
    if let Some((values, shapes)) = &reference {
        assert_eq!(cpu.numpy_shape(), shapes[0], "{name}: CPU output shape");
        let what = format!("{name}: CPU fp32 against ncnn");
        assert_close(&cpu.to_values(), &values[0], 1e-3, &what);
    }
    let reference = reference.map_or_else(|| cpu.to_values(), |(mut v, _)| v.remove(0));
    for ctx in &gpu_contexts() {
        for (class, opt, eps) in gpu_classes(ctx, RunOptions::fp32(), 5e-2) {
            let how = format!("{name}: GPU {class}, {}", ctx.describe());
            let (got, record) =
                run_net_recorded(param, weights, inputs, out, opt, Some(ctx.clone()))
                    .unwrap_or_else(|e| panic!("{how}: {e}"));
            assert!(
                record.cpu_layers().is_empty() && record.stayed_on_gpu(),
                "{how}: left the GPU: {record:?}"
            );
            assert_eq!(got.numpy_shape(), cpu.numpy_shape(), "{how}: output shape");
            assert_close(&got.to_values(), &reference, eps, &how);
        }
    }
}

/// A `.npy` file of `tests/pnnx/`: its shape and values.
fn npy(path: &str) -> (Vec<usize>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let file = npyz::NpyFile::new(&bytes[..]).unwrap_or_else(|e| panic!("{path}: {e}"));
    let shape = file.shape().iter().map(|&n| n as usize).collect();
    let values = file
        .into_vec::<f32>()
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    (shape, values)
}

model_tests!(pnnx_matches_pytorch_and_ncnn_and_stays_on_the_gpu, pnnx_network {
    convnext;
    vit;
    efficientvit;
    efficientvit_msra;
    crnn;
    gru_seq;
    audio1d;
    r3d;
    stn;
    deform;
    stft;
    spectrum;
});

/// A network of `tests/pnnx/` (torchvision's ConvNeXt and ViT, timm's EfficientViTs, scaled
/// down, random weights, converted by pnnx: `make_models.py`; a CRNN with bidirectional LSTMs,
/// a GRU model, a 1-D convolutional audio net, r3d_18's structure in 3-D, a spatial
/// transformer, DeformConv2d, stft/istft and a power spectrum: `make_seq_models.py`):
/// fpshader's CPU against PyTorch's output and ncnn's wheel, and every GPU context in fp32 and
/// fp16 ([`gpu_classes`]) against them, on the GPU from input to output (ConvNeXt's head
/// normalizes a 4-D blob, `1×64×1×1` permuted). Inputs of 1 to 4 axes, as their numpy shapes.
fn pnnx_network(name: &str) {
    let dir = format!("{}/../tests/pnnx", env!("CARGO_MANIFEST_DIR"));
    let read = |ext: &str| {
        let path = format!("{dir}/{name}.ncnn.{ext}");
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let (param, weights) = (String::from_utf8(read("param")).unwrap(), read("bin"));
    let (np, values) = npy(&format!("{dir}/{name}.input.npy"));
    let (dims, shape) = match np[..] {
        [w] => (1, [w, 1, 1, 1]),
        [h, w] => (2, [w, h, 1, 1]),
        [c, h, w] => (3, [w, h, 1, c]),
        [c, d, h, w] => (4, [w, h, d, c]),
        _ => panic!("{name}: input of numpy shape {np:?}"),
    };
    let x = Input {
        name: "in0",
        dims,
        shape,
        values,
        int: false,
    };
    let inputs = std::slice::from_ref(&x);
    let (_, torch) = npy(&format!("{dir}/{name}.torch.npy"));
    let what = (&param[..], &weights[..]);
    check_model(name, what, inputs, "out0", Some(&torch));
}
