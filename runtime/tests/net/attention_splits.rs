//! Heads of few query rows over many keys on `sdpa_cm2`: their keys split over more
//! workgroups, whose parts `sdpa_combine` weighs into the output, against the CPU, for SDPA and
//! for a MultiHeadAttention whose heads lie side by side in its projected rows.

use super::suite::*;
use super::suite_attention::mha;
use super::*;

/// `param` with its weights over `inputs` on every GPU context in fp16, against the CPU in
/// fp32: `sdpa_cm2` where the context has it, split (with `sdpa_combine`) where `split` says.
fn check_split(param: &str, weights: &[u8], inputs: &[Input], split: bool) {
    let want = run_net(param, weights, inputs, "out", RunOptions::fp32(), None)
        .unwrap()
        .to_values();
    let fp16 = RunOptions {
        use_fp16_packed: true,
        use_fp16_storage: true,
        ..RunOptions::fp32()
    };
    for ctx in gpu_contexts() {
        // elsewhere the heads run whole on another attention shader
        let split = split && ctx.workgroup_attention();
        time_tensor_core_context(&ctx);
        let what = format!("{param}, {}", ctx.describe());
        let got = run_net(param, weights, inputs, "out", fp16, Some(ctx.clone()))
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_close(&got.to_values(), &want, 0.05, &what);
        let shaders: Vec<String> = ctx.take_timings().into_iter().map(|t| t.shader).collect();
        let ran = |name: &str| shaders.iter().any(|s| s == name);
        assert!(
            ran("sdpa_cm2") == ctx.workgroup_attention() && ran("sdpa_combine") == split,
            "{what}: ran {shaders:?}, split expected: {split}"
        );
        ctx.set_timing(false);
    }
}

/// SDPA: 4 parts of 1100 keys (the last part shorter, its last block partial) with grouped
/// heads, 2 parts with a mask and a query count off the block, 4 whole-block parts without a
/// mask (the scale in the exponent), and 2 parts where every key of a row is masked out in one
/// part only, and 2 parts of 128-wide heads (32-key blocks). Many heads of many rows are not
/// split, nor are heads on other attention shaders.
#[test]
fn sdpa_splits_few_rows_over_many_keys() {
    let mut rng = Rng(2615);
    // (q, k, v sizes, mask, whether the keys are split)
    let cases = [
        ([64, 40, 4], [64, 1100, 2], [64, 1100, 2], false, true),
        ([64, 70, 3], [64, 600, 3], [32, 600, 3], true, true),
        ([32, 64, 2], [32, 1024, 2], [64, 1024, 2], false, true),
        ([64, 20, 1], [64, 520, 1], [64, 520, 1], true, true),
        ([128, 30, 2], [128, 700, 2], [96, 700, 2], false, true),
        ([32, 2048, 16], [32, 1024, 16], [32, 1024, 16], false, false),
    ];
    for (i, (q, k, v, masked, split)) in cases.into_iter().enumerate() {
        let mut inputs = vec![
            random_mat(&mut rng, "q", &q, RANDOM),
            random_mat(&mut rng, "k", &k, RANDOM),
            random_mat(&mut rng, "v", &v, RANDOM),
        ];
        let mut bottoms = vec!["q", "k", "v"];
        if masked {
            let mut mask = random_mat(&mut rng, "mask", &[k[1], q[1]], RANDOM);
            if i == 3 {
                // row 0 sees no key of the first part (keys 0..320 of 520)
                mask.values[..320]
                    .iter_mut()
                    .for_each(|m| *m = f32::NEG_INFINITY);
            }
            inputs.push(mask);
            bottoms.push("mask");
        }
        let param = one_layer("SDPA", &bottoms, &format!("5={} 6=0.3", u8::from(masked)));
        check_split(&param, &[], &inputs, split);
    }
}

/// MultiHeadAttention's cross attention of 40 queries over 600 keys in 2 heads of 64: its
/// projections' heads lie side by side in their rows, which the parts and their combination
/// read and write where they lie.
#[test]
fn multiheadattention_splits_few_rows_over_many_keys() {
    let mut rng = Rng(2616);
    let (params, weights) = mha(&mut rng, [128, 96, 80], 128, 2, 0, None, false);
    // inputs of a quarter of the usual range: the projections' scores then stay within a few
    // units, where fp16 storage's rounding does not tip the softmax
    let small = (RANDOM.0 / 4.0, RANDOM.1 / 4.0);
    let inputs = vec![
        random_mat(&mut rng, "q", &[128, 40], small),
        random_mat(&mut rng, "k", &[96, 600], small),
        random_mat(&mut rng, "v", &[80, 600], small),
    ];
    let param = one_layer("MultiHeadAttention", &["q", "k", "v"], &params);
    let bytes: Vec<u8> = weights.iter().flat_map(|v| v.to_le_bytes()).collect();
    check_split(&param, &bytes, &inputs, true);
}
