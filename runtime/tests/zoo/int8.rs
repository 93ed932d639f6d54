//! ncnn's int8 benchmark models (`*_int8`) with random int8 kernels and scales
//! ([`super::weights`]) run as int8 (`use_int8_inference`): fpshader's CPU against ncnn's
//! wheel, which runs them as int8 by default (bit for bit but for fp32 sums' order); then every
//! GPU context, where the int8 layers run on the device too (their inputs' levels over their
//! scales through the float layers: no int8 arithmetic there yet), against the same output: in
//! fp32 within 2% of the largest logit (a value an ulp off can round to the next level), in
//! fp16 storage within 30%: each blob the GPU stores in fp16 moves a few percent of the next
//! layer's levels (vgg16 at 32×32: 1.7% of conv2_1's), and every int8 layer after adds its
//! own.

use super::common::*;
use super::weights::with_random_weights;
use super::{gpu_classes, input_name, on_the_gpu, rng_for, zoo_param};
use fpshader::layer::RunOptions;

/// One int8 model at `side` (its first fully connected layer resized to `fc6_inputs`).
pub fn check(name: &str, side: usize, fc6_inputs: Option<usize>, eps: f32) {
    let mut rng = rng_for(name);
    let (param, weights, _) = with_random_weights(&mut rng, &zoo_param(name), fc6_inputs);
    let softmax = param.lines().find(|l| l.starts_with("Softmax")).unwrap();
    let out = softmax.split_whitespace().nth(4).unwrap().to_string();
    let x = Input::new(&mut rng, input_name(&param), 3, [side, side, 1, 3]);
    let inputs = std::slice::from_ref(&x);
    let int8 = RunOptions {
        use_int8_inference: true,
        ..RunOptions::fp32()
    };
    let cpu = run_net(&param, &weights, inputs, &out, int8, None)
        .unwrap_or_else(|e| panic!("{name} on the CPU: {e}"))
        .to_values();
    let reference = ncnn(&param, &weights, inputs, &out).unwrap_or_else(|| cpu.clone());
    let what = |how: &str| format!("{name} ({side}×{side}) as int8, {how}");
    let largest = reference.iter().fold(0f32, |m, v| m.max(v.abs()));
    let worst = |got: &[f32]| {
        (got.iter().zip(&reference))
            .map(|(a, b)| (a - b).abs() / largest)
            .fold(0f32, f32::max)
    };
    assert_close(&cpu, &reference, 1e-4 * largest, &what("CPU"));
    // the float model (dequantized kernels) is far from it: the comparison sees int8
    let float = run_net(&param, &weights, inputs, &out, RunOptions::fp32(), None)
        .unwrap_or_else(|e| panic!("{name} as float: {e}"))
        .to_values();
    assert!(
        worst(&float) > 1e-2,
        "{}: float {}",
        what("CPU"),
        worst(&float)
    );
    for ctx in &gpu_contexts() {
        for (class, opt, _) in gpu_classes(ctx, int8, eps) {
            let opt = RunOptions {
                use_int8_inference: true,
                ..opt
            };
            let how = format!("GPU {class}, {}", ctx.describe());
            // the int8 layers on the device too: one submission, nothing on the CPU
            let got = on_the_gpu((&param, &weights), inputs, &out, opt, ctx, &what(&how));
            let eps = if class == "fp32" { eps } else { 0.3 };
            assert_close(&got, &reference, eps * largest, &what(&how));
        }
    }
}
