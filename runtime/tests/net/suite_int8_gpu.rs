//! ncnn's int8 convolutions and inner products on the device against fpshader's CPU int8
//! outputs (which match ncnn's wheel): dense layers of whole blocks of 4 channels run as int8 GEMMs, with the
//! device's int8 matrices (NVIDIA) or dot products (lavapipe too: Vulkan 1.3) where it has
//! them, with the exact
//! shader where a context is told not to use them, and on naga's path; the rest (pack1,
//! grouped, depthwise) fake-quantize in their direct shaders, or (a padded RGB input) around
//! the float GEMM. The products are exact in int32 either way, so in fp32
//! the outputs are ncnn's within its int8 tolerances (0.001 dequantized, one level
//! requantized). A requantizing layer's GPU output is its levels over the output scale (what a
//! GPU net's int8 layers pass each other), scaled back here.

use super::suite::*;
use super::suite_int8::{check_suite_int8_inference, conv_int8_case};
use super::*;
use fpshader::{Context, ContextOptions};

/// The int8 cases: (channels, outputs) pairs over a spread of windows, dequantized (term 1)
/// and requantized (101).
fn cases(rng: &mut Rng, term: i32) -> Vec<Case> {
    let windows = [
        (1, 1, 1, 0),
        (3, 1, 1, 0),
        (3, 1, 1, 1),
        (3, 1, 2, 1),
        (3, 2, 1, -233),
        (5, 1, 2, 2),
        (2, 1, 2, -234),
    ];
    // an RGB input (padded to a block), outputs not in blocks of 4 (unpacked after)
    let pairs = [
        (4, 4),
        (16, 32),
        (8, 12),
        (3, 8),
        (36, 68),
        (16, 10),
        (8, 7),
    ];
    let mut cases = Vec::new();
    for (i, &(k, d, s, p)) in windows.iter().enumerate() {
        let (c, outch) = pairs[i % pairs.len()];
        cases.push(conv_int8_case(
            rng,
            (11, 9, c, outch, k, d, s, p, 1, 0, term),
        ));
    }
    // depthwise and grouped layers fake-quantize in their direct shaders
    cases.push(conv_int8_case(rng, (9, 7, 8, 8, 3, 1, 1, 1, 1, 8, term)));
    cases.push(conv_int8_case(rng, (10, 6, 8, 8, 3, 1, 2, 1, 1, 2, term)));
    cases.push(conv_int8_case(rng, (9, 7, 12, 12, 5, 1, 1, 2, 1, 12, term)));
    cases
}

/// The contexts: passthrough with the device's choice, passthrough without int8 dot
/// products, naga's path.
pub(crate) fn contexts() -> Vec<Arc<Context>> {
    if std::env::var_os("FPSHADER_SKIP_GPU").is_some() {
        return Vec::new();
    }
    [
        (ShaderPath::Passthrough, None),
        (ShaderPath::Passthrough, Some(false)),
        (ShaderPath::Naga, None),
    ]
    .into_iter()
    .map(|(path, dot)| {
        let ctx = Context::new(ContextOptions {
            backends: Some(wgpu::Backends::VULKAN),
            path: Some(path),
            allow_cpu_adapter: true,
            int8_arithmetic: dot,
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("no Vulkan device ({e}); set FPSHADER_SKIP_GPU=1"));
        Arc::new(ctx)
    })
    .collect()
}

#[test]
fn int8_convolutions_on_the_device_match_the_cpu() {
    let mut rng = Rng(851);
    for (term, epsilon) in [(1, 1e-3), (101, 1.0)] {
        let cases = cases(&mut rng, term);
        // the dense layers run as int8 GEMMs, on int8 matrices or dot products where the
        // context has them
        check_on_devices(&cases, term, epsilon, |ctx| {
            if ctx.int8_cooperative_matrix() {
                "convolution_gemm_int8_cm"
            } else if ctx.integer_dot_product() {
                "convolution_gemm_int8"
            } else {
                "convolution_gemm_int8_exact"
            }
        });
    }
}

/// test_innerproduct.cpp's int8 cases on the device: single rows of a multiple of 4 inputs
/// run as int8 GEMVs (the device's dot products where it has them), the rest fake-quantize
/// before the float kernel; the 2-D inputs of several rows, apart, as one GEMV per row.
#[test]
fn int8_innerproducts_on_the_device_match_the_cpu() {
    let cases = super::suite_int8::innerproduct_int8_cases(&mut Rng(833));
    let (rows, ncnn): (Vec<Case>, Vec<Case>) =
        cases.into_iter().partition(|c| c.inputs[0].dims == 2);
    for cases in [ncnn, rows] {
        check_on_devices(&cases, 1, 1e-3, |ctx| match ctx.integer_dot_product() {
            true => "innerproduct_int8",
            false => "innerproduct_int8_exact",
        });
    }
}

/// The cases on [`contexts`] in fp32 and fp16 storage against fpshader's CPU int8 outputs
/// (checked against ncnn's wheel first), and `shader(ctx)` among each context's dispatches.
fn check_on_devices(
    cases: &[Case],
    term: i32,
    epsilon: f32,
    shader: impl Fn(&Context) -> &'static str,
) {
    let cpu = check_suite_int8_inference(cases.to_vec(), epsilon);
    let b = batch(&cases.iter().collect::<Vec<_>>());
    for ctx in contexts() {
        ctx.set_timing(true);
        let packed = RunOptions {
            use_packing_layout: true,
            use_int8_inference: true,
            ..RunOptions::fp32()
        };
        let fp16 = RunOptions {
            use_fp16_packed: true,
            use_fp16_storage: true,
            ..packed
        };
        // fp16 storage moves an input a level where it rounds across a half: a few levels
        // of the sums, as the zoo's int8 models allow
        for (name, opt, eps) in [("fp32 packed", packed, epsilon), ("fp16", fp16, 0.3)] {
            let (_, got, _) = run_batch(&b, opt, Some(ctx.clone()));
            for ((j, got), want) in got.into_iter().enumerate().zip(&cpu) {
                let case = &cases[b.owners[j]];
                let what = format!("{} {name}, {}", case.what(), ctx.describe());
                let (shape, mut got) = got.unwrap_or_else(|e| panic!("{what}: {}", e.report()));
                assert_eq!(shape, want.0, "{what}: output shape");
                if term > 100 {
                    // the output scale is the last weight
                    let scale = case.weights[case.weights.len() - 1];
                    got.iter_mut().for_each(|v| *v *= scale);
                }
                let largest = want.1.iter().fold(1f32, |m, v| m.max(v.abs()));
                let eps = if name == "fp16" { eps * largest } else { eps };
                assert_close(&got, &want.1, eps, &what);
            }
        }
        let shader = shader(&ctx);
        let timings = ctx.take_timings();
        if !timings.is_empty() {
            assert!(
                timings.iter().any(|t| t.shader == shader),
                "{}: no {shader} dispatch",
                ctx.describe()
            );
        }
    }
}
