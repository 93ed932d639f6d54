//! ncnn's LLM decoders (`tests/zoo/llm/`, ncnn's `benchmark/models/llm`) as `benchncnn_llm`
//! runs them, cut to their first transformer block (the whole 0.6B model's weights would be
//! 2.4 GB) with random weights: a prefill whose key/value caches no one feeds (empty mats, as
//! in ncnn), then a decode step over the caches the prefill made. The block's output and its
//! caches on the CPU against ncnn's wheel, then on every GPU context ([`gpu_classes`]). The
//! wheel's prefill caches are read as the SDPA's key and value inputs, which they are.

use super::common::*;
use super::weights::with_random_weights;
use super::{gpu_classes, rng_for};
use fpshader::layer::RunOptions;

/// The decoder's lines up to the first block's residual sum (the second `BinaryOp add` after
/// the first SDPA), with the header counted again; that sum's blob.
fn first_block(text: &str) -> (String, String) {
    let lines: Vec<&str> = text.lines().collect();
    let sdpa = lines.iter().position(|l| l.starts_with("SDPA")).unwrap();
    let end = (sdpa..lines.len())
        .filter(|&i| lines[i].starts_with("BinaryOp") && lines[i].ends_with(" 0=0"))
        .nth(1)
        .unwrap();
    let layers = &lines[2..=end];
    let mut blobs: Vec<&str> = Vec::new();
    for l in layers {
        let f: Vec<&str> = l.split_whitespace().collect();
        let (b, t): (usize, usize) = (f[2].parse().unwrap(), f[3].parse().unwrap());
        blobs.extend(&f[4 + b..4 + b + t]);
    }
    let out = lines[end].split_whitespace().nth(6).unwrap().to_string();
    let text = format!(
        "7767517\n{} {}\n{}\n",
        layers.len(),
        blobs.len(),
        layers.join("\n")
    );
    (text, out)
}

/// `benchncnn_llm`'s inputs for `tokens` tokens after `past` cached ones, with random
/// embeddings and rotary angles.
fn step_inputs(
    rng: &mut Rng,
    hidden: usize,
    half: usize,
    tokens: usize,
    past: usize,
) -> Vec<Input> {
    let total = past + tokens;
    let mut embeds = Input::new(rng, "in0", 2, [hidden, tokens, 1, 1]);
    embeds.values.iter_mut().for_each(|v| *v *= 0.5);
    let mut mask = Input::new(rng, "in1", 2, [total, tokens, 1, 1]);
    for (i, row) in mask.values.chunks_mut(total).enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = if j > past + i { f32::NEG_INFINITY } else { 0.0 };
        }
    }
    let mut cos = Input::new(rng, "in2", 2, [half, tokens, 1, 1]);
    let mut sin = Input::new(rng, "in3", 2, [half, tokens, 1, 1]);
    for (c, s) in cos.values.iter_mut().zip(&mut sin.values) {
        let angle = *c * 3.0;
        (*c, *s) = (angle.cos(), angle.sin());
    }
    vec![embeds, mask, cos, sin]
}

/// A cache blob `name` of `(numpy shape, values)` as the next step's input.
fn cache_input(name: &'static str, (shape, values): &(Vec<usize>, Vec<f32>)) -> Input {
    let [c, h, w] = shape[..] else {
        panic!("cache {name} of shape {shape:?}");
    };
    Input {
        name,
        dims: 3,
        shape: [w, h, 1, c],
        values: values.clone(),
        int: false,
    }
}

/// Inputs of `a`'s tokens then `b`'s as one prefill: rows appended, the mask causal again.
fn joined(a: &[Input], b: &[Input]) -> Vec<Input> {
    let tokens = a[0].shape[1] + b[0].shape[1];
    (a.iter().zip(b))
        .map(|(x, y)| {
            let mut m = x.clone();
            if m.name == "in1" {
                m.shape = [tokens, tokens, 1, 1];
                m.values = (0..tokens * tokens)
                    .map(|k| {
                        if k % tokens > k / tokens {
                            f32::NEG_INFINITY
                        } else {
                            0.0
                        }
                    })
                    .collect();
            } else {
                m.shape[1] = tokens;
                m.values.extend_from_slice(&y.values);
            }
            m
        })
        .collect()
}

/// One decoder's first block: a prefill of 8 tokens, then a decode step of one more over the
/// prefill's caches, whose output is the last row of a prefill of all 9 and whose caches are
/// that prefill's keys and values (the wheel's own decode step reads memory it never wrote:
/// its outputs change from run to run).
pub fn check(name: &str, hidden: usize, half: usize) {
    let mut rng = rng_for(name);
    let path = format!(
        "{}/../tests/zoo/llm/{name}_decoder.ncnn.param",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (block, out) = first_block(&text);
    let (param, weights, _) = with_random_weights(&mut rng, &block, None);
    let outputs = [out.as_str(), "out_cache_k0", "out_cache_v0"];
    // the SDPA's current key and value: its cache outputs when there is no past (the wheel's
    // own cache outputs are then the same mats, which its blob pool may hand on and overwrite
    // before they are read), extracted first, before the light mode frees them
    let line = param.lines().find(|l| l.starts_with("SDPA")).unwrap();
    let sdpa: Vec<&str> = line.split_whitespace().collect();
    let refs = [sdpa[5], sdpa[6], out.as_str()];
    let wheel = |inputs: &[Input]| {
        let (mut values, mut shapes) =
            ncnn_outputs_shaped(("m.param", param.as_bytes()), &weights, inputs, &refs)
                .unwrap_or_else(|| panic!("{name}: ncnn's wheel is needed"));
        values.rotate_right(1);
        shapes.rotate_right(1);
        (values, shapes)
    };
    let prefill = step_inputs(&mut rng, hidden, half, 8, 0);
    let token = step_inputs(&mut rng, hidden, half, 1, 8);
    let (first, first_shapes) = wheel(&prefill);
    let (mut whole, whole_shapes) = wheel(&joined(&prefill, &token));
    whole[0].drain(..8 * hidden);
    let mut decode = token;
    decode.push(cache_input(
        "cache_k0",
        &(first_shapes[1].clone(), first[1].clone()),
    ));
    decode.push(cache_input(
        "cache_v0",
        &(first_shapes[2].clone(), first[2].clone()),
    ));
    let cases = [
        ("prefill", prefill, first, first_shapes[1..].to_vec()),
        ("decode", decode, whole, whole_shapes[1..].to_vec()),
    ];
    for (step, inputs, want, cache_shapes) in cases {
        let what = |how: &str| format!("{name}'s first block, {step}, {how}");
        let run = |opt: RunOptions, ctx| {
            let net = load_net(&param, &weights, opt, ctx).unwrap_or_else(|e| panic!("{e}"));
            let mut ex = net.create_extractor().unwrap();
            for i in &inputs {
                ex.input(i.name, i.mat()).unwrap();
            }
            (outputs.iter())
                .map(|o| {
                    let m = ex
                        .extract(o)
                        .unwrap_or_else(|e| panic!("{o}: {}", e.report()));
                    (m.numpy_shape(), m.to_values())
                })
                .collect::<Vec<_>>()
        };
        let cpu = run(RunOptions::fp32(), None);
        assert_eq!(cpu[1].0, cache_shapes[0], "{}", what("key cache shape"));
        for (got, want) in cpu.iter().zip(&want) {
            assert_close(&got.1, want, 1e-3, &what("CPU"));
        }
        for ctx in &gpu_contexts() {
            for (class, opt, eps) in gpu_classes(ctx, RunOptions::fp32(), 5e-2) {
                let got = run(opt, Some(ctx.clone()));
                let how = format!("GPU {class}, {}", ctx.describe());
                for (got, want) in got.iter().zip(&want) {
                    assert_close(&got.1, want, eps, &what(&how));
                }
            }
        }
    }
}
