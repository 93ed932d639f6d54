//! Nets and layers: every built-in layer against ncnn's own wheel (CPU, fp32) on one-layer
//! models with random parameters and weights; the seed's support-flag semantics through probe
//! layers; GPU execution with CPU fallback on a real device; malformed models.
//!
//! The oracle is ncnn's PyPI wheel in the virtualenv `cargo xtask` makes (its python in
//! `FPSHADER_NCNN_PYTHON`); without it these tests fail unless `FPSHADER_SKIP_NCNN=1`.
//! GPU tests need a device (lavapipe in CI) unless `FPSHADER_SKIP_GPU=1`.

mod absorb;
mod appends;
mod attention_splits;
mod bands;
mod cli;
mod cli_tools;
#[path = "../common/mod.rs"]
mod common;
mod contract;
mod convolution;
mod cpu_layers;
mod errors;
mod fusion;
mod gemm_engines;
mod gpu_layers;
mod gpu_runs;
mod int8_storage;
mod limits;
mod models;
mod ncnn_types;
mod reload;
mod residual;
mod suite;
mod suite_activation;
mod suite_attention;
mod suite_conv;
mod suite_conv_1d;
mod suite_conv_3d;
mod suite_conv_inputs;
mod suite_deformable;
mod suite_detection;
mod suite_elementwise;
mod suite_int8;
mod suite_int8_gpu;
mod suite_layout;
mod suite_matrix;
mod suite_norm;
mod suite_ops;
mod suite_packed;
mod suite_pooling_nd;
mod suite_proposals;
mod suite_recurrent;
mod suite_reduce;
mod suite_sampling;
mod suite_shape;
mod suite_signal;

use std::sync::{Arc, Mutex};

use common::*;

use fpshader::layer::{Implements, Layer, ParamDict, RunOptions, Support};
use fpshader::net::Net;
use fpshader::{ElemType, Error, Mat, ModelError, ShaderPath};

/// Turns on `ctx`'s dispatch timing (to see which shaders ran) for a test of the tensor-core
/// paths; with `FPSHADER_REQUIRE_COOPMAT` (set on machines that have cooperative matrices) a
/// passthrough context without them fails the test.
fn time_tensor_core_context(ctx: &fpshader::Context) {
    let require = std::env::var_os("FPSHADER_REQUIRE_COOPMAT").is_some();

    assert!(
        !require || ctx.cooperative_matrix() || ctx.path() == ShaderPath::Naga,
        "FPSHADER_REQUIRE_COOPMAT is set but {} has no cooperative matrices",
        ctx.describe()
    );
    assert!(
        ctx.set_timing(true),
        "{} has no timestamp queries",
        ctx.describe()
    );
}

/// `param` (with its weights) on every GPU context in three tuples against `want` (the CPU's
/// output): fp16 storage (on tensor cores where `fits` and the context has cooperative
/// matrices, within `eps16`), fp16 with cooperative matrices off (`eps16`) and `fp32` itself
/// (1e-3), the fp16 ones made from `fp32` (its packing); each run must have
/// taken `{family}_cm2` where the context has workgroup matrices and `workgroup` says the
/// product is large enough for them, `{family}_cm` where it has subgroup ones (or the
/// product is not) and `{family}` elsewhere. Where a context has
/// workgroup matrices, the same device opened without them is checked too (the KHR tiles).
fn check_tensor_core_choice(
    (param, weights): (&str, &[u8]),
    inputs: &[Input],
    want: &[f32],
    (family, fits, workgroup): (&str, bool, bool),
    (fp32, eps16): (RunOptions, f32),
) {
    let fp16 = RunOptions {
        use_fp16_packed: true,
        use_fp16_storage: true,
        ..fp32
    };
    let no_cm = RunOptions {
        use_cooperative_matrix: false,
        ..fp16
    };
    let mut contexts = gpu_contexts();
    // set where the device has VK_NV_cooperative_matrix2 (NVIDIA)
    assert!(
        std::env::var_os("FPSHADER_REQUIRE_MATRIX2").is_none()
            || contexts.iter().any(|c| c.workgroup_matrices()),
        "FPSHADER_REQUIRE_MATRIX2 is set but no context has workgroup matrices"
    );
    if let Some(ctx) = contexts.iter().find(|c| c.workgroup_matrices()) {
        let without = fpshader::Context::new(fpshader::ContextOptions {
            adapter_name: Some(ctx.adapter_info.name.clone()),
            path: Some(ShaderPath::Passthrough),
            workgroup_matrices: Some(false),
            ..Default::default()
        })
        .unwrap();
        assert!(!without.workgroup_matrices() && without.cooperative_matrix());
        contexts.push(Arc::new(without));
    }
    for ctx in contexts {
        time_tensor_core_context(&ctx);
        // the attention's shader needs the extension's row reductions as well
        let matrix2 = match family {
            "sdpa" => ctx.workgroup_attention(),
            _ => ctx.workgroup_matrices(),
        };
        let cm = match workgroup && matrix2 {
            true => format!("{family}_cm2"),
            false => format!("{family}_cm"),
        };
        for (opt, tensor_cores, eps) in [
            (fp16, fits && ctx.cooperative_matrix(), eps16),
            (no_cm, false, eps16),
            (fp32, false, 1e-3),
        ] {
            let what = format!("{param}, {opt:?}, {}", ctx.describe());
            let got = run_net(param, weights, inputs, "out", opt, Some(ctx.clone()))
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_close(&got.to_values(), want, eps, &what);
            let shaders: Vec<String> = ctx.take_timings().into_iter().map(|t| t.shader).collect();
            let want_shader = if tensor_cores { cm.as_str() } else { family };
            // the family's other engines (its helpers, a split GEMM's sum, may run too)
            let engines = [
                family.to_string(),
                format!("{family}_cm"),
                format!("{family}_cm2"),
            ];
            assert!(
                shaders.iter().any(|s| s == want_shader)
                    && !shaders
                        .iter()
                        .any(|s| engines.contains(s) && s != want_shader),
                "{what}: ran {shaders:?}, expected {want_shader}"
            );
        }
        ctx.set_timing(false);
    }
}

/// A one-layer model over input `data` (plus `extra` inputs) producing `out`.
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

/// The layer in fpshader (CPU, fp32 and ncnn's default options) against ncnn.
fn check_layer(what: &str, param: &str, weights: &[u8], inputs: &[Input]) {
    check_output(what, param, weights, inputs, "out");
}

/// Blob `output` in fpshader (CPU, fp32 and ncnn's default options) against ncnn.
fn check_output(what: &str, param: &str, weights: &[u8], inputs: &[Input], output: &str) {
    let got = run_net(param, weights, inputs, output, RunOptions::fp32(), None)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let Some(want) = ncnn(param, weights, inputs, output) else {
        return;
    };
    assert_close(&got.to_values(), &want, 1e-3, what);
    // packed layouts where the layers take them, fp32: ncnn's tolerance
    let fp32_packed = RunOptions {
        use_packing_layout: true,
        ..RunOptions::fp32()
    };
    let packed = run_net(param, weights, inputs, output, fp32_packed, None)
        .unwrap_or_else(|e| panic!("{what} (fp32 packed): {e}"));
    assert_close(
        &packed.to_values(),
        &want,
        1e-3,
        &format!("{what}, fp32 packed"),
    );
    // packing and 16-bit storage as the layer's flags allow: ncnn's looser tolerance
    let packed = run_net(param, weights, inputs, output, RunOptions::default(), None)
        .unwrap_or_else(|e| panic!("{what} (default options): {e}"));
    assert_close(
        &packed.to_values(),
        &want,
        0.1,
        &format!("{what}, default options"),
    );
}

/// `kind` on one random input `data` per `(dims, shape, params)`, against ncnn.
fn check_cases(rng: &mut Rng, kind: &str, cases: &[(u8, [usize; 4], impl AsRef<str>)]) {
    for (dims, shape, params) in cases {
        let params = params.as_ref();
        let x = Input::new(rng, "data", *dims, *shape);
        check_layer(
            &format!("{kind} {dims}-D {params}"),
            &one_layer(kind, &["data"], params),
            &[],
            &[x],
        );
    }
}

/// The option tuples a layer check runs on `ctx`: all of [`all_gpu_option_tuples`] on the
/// passthrough path; on the naga path the three that between them execute every construct
/// naga translates (fp32 scalars, fp16 storage with fp16 arithmetic in pack8 vectors, fp16
/// storage images). Naga translates the other tuples' variants from the same code: that it
/// takes every variant of every shader is `specialize.rs`'s check, and each lavapipe pipeline
/// of a fresh machine costs a compile.
fn gpu_option_tuples(ctx: &fpshader::Context) -> Vec<(&'static str, RunOptions, f32)> {
    const ON_NAGA: [&str; 3] = ["fp32 pack1", "fp16 pack8", "fp16 image pack8"];
    all_gpu_option_tuples()
        .into_iter()
        .filter(|(name, _, _)| ctx.path() == ShaderPath::Passthrough || ON_NAGA.contains(name))
        .collect()
}

/// ncnn's layer-test option tuples on the GPU: packing, fp16 packed/storage/arithmetic,
/// pack8 and image storage; with the tolerance each earns (ncnn's: 0.001 fp32, 0.1 with
/// fp16 storage, 1.0 relative-or-absolute with fp16 arithmetic).
fn all_gpu_option_tuples() -> Vec<(&'static str, RunOptions, f32)> {
    let base = RunOptions::fp32();
    let fp16s = RunOptions {
        use_packing_layout: true,
        use_fp16_packed: true,
        use_fp16_storage: true,
        ..base
    };
    let fp16a = RunOptions {
        use_fp16_arithmetic: true,
        ..fp16s
    };
    vec![
        ("fp32 pack1", base, 1e-3),
        (
            "fp32 packed",
            RunOptions {
                use_packing_layout: true,
                ..base
            },
            1e-3,
        ),
        ("fp16 packed+storage", fp16s, 0.1),
        ("fp16 storage+arithmetic", fp16a, 1.0),
        (
            "fp16 pack8",
            RunOptions {
                use_shader_pack8: true,
                ..fp16a
            },
            1.0,
        ),
        (
            "fp32 image",
            RunOptions {
                use_packing_layout: true,
                use_image_storage: true,
                ..base
            },
            1e-3,
        ),
        (
            "fp16 image pack8",
            RunOptions {
                use_image_storage: true,
                use_shader_pack8: true,
                ..fp16s
            },
            0.1,
        ),
    ]
}

/// The model on every GPU path and option tuple against the CPU in fp32; `gpu_kinds` are the
/// layer types that must be placed on the device (with image storage too, unless `buffers_only`).
fn check_gpu(what: &str, param: &str, weights: &[u8], inputs: &[Input], gpu_kinds: &[&str]) {
    check_gpu_with(what, param, weights, inputs, gpu_kinds, false);
}

fn check_gpu_with(
    what: &str,
    param: &str,
    weights: &[u8],
    inputs: &[Input],
    gpu_kinds: &[&str],
    buffers_only: bool,
) {
    check_gpu_outputs(
        what,
        param,
        weights,
        inputs,
        gpu_kinds,
        buffers_only,
        &["out"],
    );
}

/// [`check_gpu_with`] on each blob of `outputs`, extracted in turn from one extractor.
fn check_gpu_outputs(
    what: &str,
    param: &str,
    weights: &[u8],
    inputs: &[Input],
    gpu_kinds: &[&str],
    buffers_only: bool,
    outputs: &[&str],
) {
    let want: Vec<Vec<f32>> = outputs
        .iter()
        .map(|o| {
            run_net(param, weights, inputs, o, RunOptions::fp32(), None)
                .unwrap_or_else(|e| panic!("{what} {o} on the CPU: {e}"))
                .to_values()
        })
        .collect();
    for ctx in gpu_contexts() {
        for (name, opt, eps) in gpu_option_tuples(&ctx) {
            let label = format!("{what}, {name}, {}", ctx.describe());
            let net = load_net(param, weights, opt, Some(ctx.clone())).unwrap();
            for kind in gpu_kinds
                .iter()
                .filter(|_| !(buffers_only && opt.use_image_storage))
            {
                assert!(
                    net.layers().iter().any(|l| l.kind == *kind && l.on_gpu()),
                    "{label}: {kind} did not run on the GPU"
                );
            }
            let mut ex = net.create_extractor().unwrap();
            for i in inputs {
                ex.input(i.name, i.mat()).unwrap();
            }
            for (o, want) in outputs.iter().zip(&want) {
                let got = ex.extract(o).unwrap_or_else(|e| panic!("{label} {o}: {e}"));
                assert_close(&got.to_values(), want, eps, &format!("{label} {o}"));
            }
        }
    }
}

/// A net with branches (Split), an in-place layer whose input another branch also reads,
/// MemoryData and a broadcasting BinaryOp.
const BRANCHY: &str = "7767517
8 10
Input data 0 1 data
Split split 1 2 data d0 d1
ReLU relu 1 1 d0 r 0=0.1
Sigmoid sig 1 1 d1 s
BinaryOp add 2 1 r s sum 0=0
MemoryData mem 0 1 m 0=4
Pooling gap 1 1 sum g 0=1 4=1
Eltwise mul 2 1 g m out 0=0
";
