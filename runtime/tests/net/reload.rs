//! A second `load_model` on a net that has run: every weighted layer's output afterwards is
//! what a net loaded with the second weights alone gives. Layers build layouts of their
//! weights lazily on their first forward (Convolution's Winograd, lane, panel and tap
//! layouts, Deconvolution's GEMM rows; on the device, the 2-D and 3-D Winograd's transformed
//! weights); one kept across a reload computes with the first weights, silently.

use super::suite::{Case, RANDOM, random_mat, tagged_weights};
use super::*;

/// The weighted layers, each with its input and its weight blobs (`(n, bias)`: a tagged blob
/// of `n` values, then a raw one of `bias` values, none for 0); the weights are drawn per load.
fn cases(rng: &mut Rng) -> Vec<(Case, Vec<(usize, usize)>)> {
    let mut layer =
        |kind: &'static str, params: &str, input: &[usize], blobs: &[(usize, usize)]| {
            (
                Case {
                    kind,
                    params: params.to_string(),
                    inputs: vec![random_mat(rng, "data", input, RANDOM)],
                    weights: Vec::new(),
                    tops: 1,
                },
                blobs.to_vec(),
            )
        };
    let mut conv = |kind: &'static str, params: &str, input: &[usize], n: usize, bias: usize| {
        layer(kind, params, input, &[(n, bias)])
    };
    let mut all = vec![
        // 3x3 stride 1: Winograd on the CPU
        conv(
            "Convolution",
            "0=16 1=3 5=1 6=2304",
            &[12, 12, 16],
            2304,
            16,
        ),
        // 3x3 stride 1 on 16² (3-D: on 16² × 3): Winograd on the device too, its transformed
        // weights made at the first forward
        conv(
            "Convolution",
            "0=16 1=3 4=1 5=1 6=2304",
            &[16, 16, 16],
            2304,
            16,
        ),
        conv(
            "Convolution3D",
            "0=16 1=3 4=1 5=1 6=6912",
            &[16, 16, 3, 16],
            6912,
            16,
        ),
        // 1x1: packed panels
        conv("Convolution", "0=16 1=1 5=1 6=256", &[9, 7, 16], 256, 16),
        // 5x5 stride 2: taps
        conv(
            "Convolution",
            "0=8 1=5 3=2 5=1 6=1600",
            &[15, 13, 8],
            1600,
            8,
        ),
        // depthwise: lanes
        conv(
            "ConvolutionDepthWise",
            "0=16 1=3 5=1 6=144 7=16",
            &[11, 10, 16],
            144,
            16,
        ),
        // group 1: the GEMM rows
        conv("Deconvolution", "0=8 1=3 3=2 5=1 6=576", &[7, 6, 8], 576, 8),
        conv(
            "DeconvolutionDepthWise",
            "0=8 1=3 3=2 5=1 6=72 7=8",
            &[7, 6, 8],
            72,
            8,
        ),
        conv(
            "Deconvolution3D",
            "0=4 1=3 3=2 5=1 6=432",
            &[5, 4, 3, 4],
            432,
            4,
        ),
        conv("Convolution3D", "0=4 1=3 5=1 6=432", &[6, 5, 4, 4], 432, 4),
        conv("Convolution1D", "0=8 1=3 5=1 6=192", &[20, 8], 192, 8),
        conv("Deconvolution1D", "0=8 1=3 3=2 5=1 6=192", &[20, 8], 192, 8),
        conv("InnerProduct", "0=10 1=1 2=12800", &[8, 10, 16], 12800, 10),
    ];
    // input to hidden, bias, hidden to hidden, each tagged: 8 units over 5 steps of 16
    all.push(layer(
        "LSTM",
        "0=8 1=512 2=0",
        &[16, 5],
        &[(512, 0), (32, 0), (256, 0)],
    ));
    all.push(layer(
        "GRU",
        "0=8 1=768 2=2",
        &[16, 5],
        &[(768, 0), (64, 0), (384, 0)],
    ));
    all.push(layer(
        "RNN",
        "0=8 1=128 2=0",
        &[16, 5],
        &[(128, 0), (8, 0), (64, 0)],
    ));
    // a constant B of 12 × 16
    all.push(layer("Gemm", "3=1 5=1 8=12 9=16", &[16, 10], &[(192, 0)]));
    all
}

fn bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Each layer on the CPU (fp32 and ncnn's default options) and on every GPU context (fp32
/// and fp16 storage): run with weights A, reload with weights B and run, against a net
/// loaded with B alone.
#[test]
fn a_second_load_model_replaces_every_weight_layout() {
    let mut rng = Rng(1129);
    let fp16 = RunOptions {
        use_fp16_packed: true,
        use_fp16_storage: true,
        ..RunOptions::fp32()
    };
    let mut runs: Vec<(RunOptions, Option<Arc<fpshader::Context>>)> =
        vec![(RunOptions::fp32(), None), (RunOptions::default(), None)];
    for ctx in gpu_contexts()
        .into_iter()
        .filter(|c| c.path() == ShaderPath::Passthrough)
    {
        runs.push((RunOptions::fp32(), Some(ctx.clone())));
        runs.push((fp16, Some(ctx)));
    }
    for (case, blobs) in cases(&mut rng) {
        let param = one_layer(case.kind, &["data"], &case.params);
        let mut draw = || -> Vec<u8> {
            let values: Vec<f32> = blobs
                .iter()
                .flat_map(|(n, bias)| tagged_weights(&mut rng, *n, *bias))
                .collect();
            bytes(&values)
        };
        let (first, second) = (draw(), draw());
        for (opt, ctx) in &runs {
            let what = format!("{}, {opt:?}", case.what());
            let run = |net: &fpshader::net::Net| -> Vec<f32> {
                let mut ex = net.create_extractor().unwrap();
                ex.input("data", case.inputs[0].mat()).unwrap();
                ex.extract("out").unwrap().to_values()
            };
            let want = run(&load_net(&param, &second, *opt, ctx.clone()).unwrap());
            let mut net = load_net(&param, &first, *opt, ctx.clone()).unwrap();
            assert!(run(&net) != want, "{what}: the two weights give one output");
            net.load_model_bytes(&second).unwrap();
            let got = run(&net);
            let worst = got
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(
                got.len() == want.len() && worst == 0.0,
                "{what}: after the reload, {} values against {}, off by up to {worst}",
                got.len(),
                want.len()
            );
        }
    }
}
