//! One `Net` shared by many threads, as a server shares it: every extract of every thread gives
//! exactly what one thread alone gives for the same input, on the CPU and on one GPU context
//! (whose buffer pool the threads' extractors share).

use std::sync::Arc;

use super::common::*;
use super::{npy, rng_for, with_random_weights, zoo_param};
use fpshader::layer::RunOptions;
use fpshader::net::Net;

// what a server needs of a net, checked when this compiles
const _: () = {
    const fn shared<T: Send + Sync>() {}
    shared::<Net>();
    shared::<fpshader::Context>();
};

const THREADS: usize = 8;
const EXTRACTS: usize = 6;
/// Inputs of their own, fewer than threads: threads extract the same input at once too.
const INPUTS: usize = 4;

/// `THREADS` threads × `EXTRACTS` extracts of `out` on one net, input `(t + k) % INPUTS` for
/// thread `t`'s extract `k`, each against the one-thread output of its input.
fn check_threads(what: &str, net: &Arc<Net>, input: &str, inputs: &[Input], out: &str) {
    let extract = |x: &Input| -> Vec<f32> {
        let mut ex = net.create_extractor().unwrap();
        ex.input(input, x.mat()).unwrap();
        ex.extract(out)
            .unwrap_or_else(|e| panic!("{what}: {}", e.report()))
            .to_values()
    };
    let alone: Vec<Vec<f32>> = inputs.iter().map(extract).collect();
    let wrong = std::thread::scope(|s| {
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let (alone, extract) = (&alone, &extract);
                s.spawn(move || {
                    (0..EXTRACTS)
                        .filter(|k| {
                            let i = (t + k) % inputs.len();
                            extract(&inputs[i]) != alone[i]
                        })
                        .count()
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .sum::<usize>()
    });
    assert_eq!(
        wrong,
        0,
        "{what}: {wrong} of {} extracts on {THREADS} threads differ from one thread's",
        THREADS * EXTRACTS
    );
}

/// The net on the CPU and on each GPU context (fp16 storage and arithmetic where the device
/// has them: the options users get).
fn nets(param: &str, weights: &[u8]) -> Vec<(String, Arc<Net>)> {
    let mut nets = vec![(
        "CPU".to_string(),
        Arc::new(load_net(param, weights, RunOptions::default(), None).unwrap()),
    )];
    for ctx in gpu_contexts() {
        let net = load_net(param, weights, RunOptions::default(), Some(ctx.clone())).unwrap();
        nets.push((format!("GPU {}", ctx.describe()), Arc::new(net)));
    }
    nets
}

#[test]
fn a_zoo_model_on_many_threads_matches_one_thread() {
    let mut rng = rng_for("threads");
    let (param, weights, out) = with_random_weights(&mut rng, &zoo_param("squeezenet"), None);
    let inputs: Vec<Input> = (0..INPUTS)
        .map(|_| Input::new(&mut rng, "data", 3, [67, 67, 1, 3]))
        .collect();
    for (how, net) in nets(&param, &weights) {
        check_threads(&format!("squeezenet, {how}"), &net, "data", &inputs, &out);
    }
}

#[test]
fn a_pnnx_transformer_on_many_threads_matches_one_thread() {
    let dir = format!("{}/../tests/pnnx", env!("CARGO_MANIFEST_DIR"));
    for name in ["vit", "convnext"] {
        let param = std::fs::read_to_string(format!("{dir}/{name}.ncnn.param")).unwrap();
        let weights = std::fs::read(format!("{dir}/{name}.ncnn.bin")).unwrap();
        let (shape, values) = npy(&format!("{dir}/{name}.input.npy"));
        let [c, h, w] = shape[..] else {
            panic!("{name}: input of numpy shape {shape:?}");
        };
        // the stored input scaled per thread's input: same shape, other values
        let inputs: Vec<Input> = (0..INPUTS)
            .map(|i| Input {
                name: "in0",
                dims: 3,
                shape: [w, h, 1, c],
                values: values.iter().map(|v| v * (1.0 + 0.25 * i as f32)).collect(),
                int: false,
            })
            .collect();
        for (how, net) in nets(&param, &weights) {
            check_threads(&format!("{name}, {how}"), &net, "in0", &inputs, "out0");
        }
    }
}
