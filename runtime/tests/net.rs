//! Nets and layers: every built-in layer against ncnn's own wheel (CPU, fp32) on one-layer
//! models with random parameters and weights; the seed's support-flag semantics through probe
//! layers; GPU execution with CPU fallback on a real device; malformed models.
//!
//! The oracle is ncnn's PyPI wheel in the virtualenv `cargo xtask` makes (its python in
//! `FPSHADER_NCNN_PYTHON`); without it these tests fail unless `FPSHADER_SKIP_NCNN=1`.
//! GPU tests need a device (lavapipe in CI) unless `FPSHADER_SKIP_GPU=1`.

mod common;

use std::sync::{Arc, Mutex};

use common::*;

use fpshader::layer::{Implements, Layer, ParamDict, RunOptions, Support};
use fpshader::net::Net;
use fpshader::{ElemType, Error, Mat, ShaderPath};

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

#[test]
fn elementwise_layers_match_ncnn() {
    let mut rng = Rng(7);
    let x = || Input::new(&mut Rng(11), "data", 3, [5, 4, 1, 8]);
    for (kind, params) in [
        ("ReLU", String::new()),
        ("ReLU", format!("0={}", rng.next())),
        ("Sigmoid", String::new()),
        ("TanH", String::new()),
        ("Clip", "0=-0.3 1=0.4".to_string()),
        ("Swish", String::new()),
        ("HardSwish", "0=0.25 1=0.4".to_string()),
        ("HardSigmoid", String::new()),
        ("GELU", String::new()),
        ("GELU", "0=1".to_string()),
        ("Dropout", "0=0.5".to_string()),
        ("Noop", String::new()),
    ] {
        let param = one_layer(kind, &["data"], &params);
        check_layer(&format!("{kind} {params}"), &param, &[], &[x()]);
    }
}

#[test]
fn binaryop_matches_ncnn_with_broadcast_scalars_and_reversed_ops() {
    let mut rng = Rng(3);
    for op in 0..12 {
        // pow and atan2 of negatives: keep the bases positive
        let a = Input::new(&mut rng, "a", 3, [4, 3, 1, 5]);
        let mut a = a;
        if matches!(op, 6 | 9) {
            a.values.iter_mut().for_each(|v| *v = v.abs() + 0.1);
        }
        for b in [
            Input::new(&mut rng, "b", 3, [4, 3, 1, 5]),
            Input::new(&mut rng, "b", 3, [1, 1, 1, 5]),
            Input::new(&mut rng, "b", 1, [5, 1, 1, 1]),
            Input::new(&mut rng, "b", 1, [4, 1, 1, 1]),
            // 2-D against 3-D: ncnn pairs b's h with a's c and b's w with a's h
            Input::new(&mut rng, "b", 2, [3, 5, 1, 1]),
            Input::new(&mut rng, "b", 2, [1, 5, 1, 1]),
        ] {
            let mut b = b;
            if matches!(op, 6 | 9) {
                b.values.iter_mut().for_each(|v| *v = v.abs() + 0.1);
            }
            let param = one_layer("BinaryOp", &["a", "b"], &format!("0={op}"));
            let what = format!("BinaryOp {op} with b {:?} ({}-D)", b.shape, b.dims);
            check_layer(
                &what,
                &param,
                &[],
                &[
                    Input {
                        name: "a",
                        dims: a.dims,
                        shape: a.shape,
                        values: a.values.clone(),
                    },
                    b,
                ],
            );
        }
        let param = one_layer("BinaryOp", &["a"], &format!("0={op} 1=1 2=0.7"));
        check_layer(&format!("BinaryOp {op} scalar"), &param, &[], &[a]);
    }
}

#[test]
fn eltwise_softmax_concat_match_ncnn() {
    let mut rng = Rng(5);
    let shape = [6, 5, 1, 4];
    for params in ["0=0", "0=1", "0=1 -23301=3,0.5,-1.0,2.0", "0=2"] {
        let ins: Vec<Input> = ["a", "b", "c"]
            .iter()
            .map(|n| Input::new(&mut rng, n, 3, shape))
            .collect();
        check_layer(
            &format!("Eltwise {params}"),
            &one_layer("Eltwise", &["a", "b", "c"], params),
            &[],
            &ins,
        );
    }
    for axis in [0, 1, 2, -1] {
        let x = Input::new(&mut rng, "data", 3, shape);
        check_layer(
            &format!("Softmax axis {axis}"),
            &one_layer("Softmax", &["data"], &format!("0={axis} 1=1")),
            &[],
            &[x],
        );
        let ins = vec![
            Input::new(&mut rng, "a", 3, shape),
            Input::new(&mut rng, "b", 3, shape),
        ];
        if axis >= 0 {
            check_layer(
                &format!("Concat axis {axis}"),
                &one_layer("Concat", &["a", "b"], &format!("0={axis}")),
                &[],
                &ins,
            );
        }
    }
}

#[test]
fn weighted_layers_match_ncnn() {
    let mut rng = Rng(9);
    let c = 6;
    let x = Input::new(&mut rng, "data", 3, [5, 4, 1, c]);
    let (slope, mean, bias) = (rng.vec(c), rng.vec(c), rng.vec(c));
    let var: Vec<f32> = rng.vec(c).iter().map(|v| v.abs() + 0.1).collect();
    let weights = bin(&[
        (&slope, false),
        (&mean, false),
        (&var, false),
        (&bias, false),
    ]);
    let param = one_layer("BatchNorm", &["data"], &format!("0={c} 1=0.001"));
    check_layer("BatchNorm", &param, &weights, std::slice::from_ref(&x));

    let (scale, sbias) = (rng.vec(c), rng.vec(c));
    let param = one_layer("Scale", &["data"], &format!("0={c} 1=1"));
    check_layer(
        "Scale",
        &param,
        &bin(&[(&scale, false), (&sbias, false)]),
        &[Input::new(&mut rng, "data", 3, [5, 4, 1, c])],
    );

    for activation in 0..=6 {
        let (num_input, num_output) = (5 * 4 * c, 7);
        let w = rng.vec(num_input * num_output);
        let b = rng.vec(num_output);
        let params = format!(
            "0={num_output} 1=1 2={} 9={activation} -23310=2,0.1,0.6",
            w.len()
        );
        let param = one_layer("InnerProduct", &["data"], &params);
        check_layer(
            &format!("InnerProduct activation {activation}"),
            &param,
            &bin(&[(&w, true), (&b, false)]),
            &[Input::new(&mut rng, "data", 3, [5, 4, 1, c])],
        );
    }
}

#[test]
fn pooling_matches_ncnn_in_every_pad_mode() {
    let mut rng = Rng(13);
    for ty in [0, 1] {
        for params in [
            "1=2 2=2",
            "1=3 2=2 3=1",
            "1=3 2=2 5=1",
            "1=3 2=2 5=2",
            "1=3 2=2 5=3",
            "1=3 2=2 3=1 6=1",
            "1=3 11=2 2=1 12=2 3=1 13=0 14=0 15=1 5=1",
            "4=1",
            "7=1 8=3 18=2",
        ] {
            let x = Input::new(&mut rng, "data", 3, [7, 6, 1, 3]);
            let param = one_layer("Pooling", &["data"], &format!("0={ty} {params}"));
            check_layer(&format!("Pooling 0={ty} {params}"), &param, &[], &[x]);
        }
    }
}

#[test]
fn shape_layers_match_ncnn() {
    let mut rng = Rng(17);
    for (kind, params) in [
        ("Flatten", ""),
        ("Reshape", "0=12 1=10"),
        ("Reshape", "0=-1 1=5 2=2"),
        ("Reshape", "0=120"),
    ] {
        let x = Input::new(&mut rng, "data", 3, [5, 4, 1, 6]);
        check_layer(
            &format!("{kind} {params}"),
            &one_layer(kind, &["data"], params),
            &[],
            &[x],
        );
    }
}

#[test]
fn slice_matches_ncnn_by_sizes_and_indices_on_every_axis() {
    let mut rng = Rng(19);
    for (dims, shape, params) in [
        (3, [7, 6, 1, 9], "-23300=3,2,-233,-233 1=0"),
        (3, [7, 6, 1, 9], "-23302=2,1,4 1=1"),
        (3, [7, 6, 1, 9], "-23300=3,3,-233,2 1=-1"),
        (4, [3, 4, 6, 2], "-23300=3,1,-233,-233 1=1"),
        (2, [8, 5, 1, 1], "-23300=3,-233,-233,-233 1=1"),
        (1, [10, 1, 1, 1], "-23302=2,3,-2"),
    ] {
        let x = Input::new(&mut rng, "data", dims, shape);
        let param = format!(
            "7767517\n2 4\nInput data_in 0 1 data\nSlice slice 1 3 data out0 out1 out2 {params}\n"
        );
        for out in ["out0", "out1", "out2"] {
            check_output(
                &format!("Slice {params} {out}"),
                &param,
                &[],
                std::slice::from_ref(&x),
                out,
            );
        }
    }
}

#[test]
fn crop_matches_ncnn_by_offsets_numpy_slices_and_reference() {
    let mut rng = Rng(29);
    let cases = [
        (3, [7, 6, 1, 5], "0=1 1=2 2=1 3=4 4=3 5=2"),
        (3, [7, 6, 1, 5], "0=1 1=1 6=2 7=1 3=-233 4=-233 5=-233"),
        (
            3,
            [7, 6, 1, 5],
            "-23309=2,1,-3 -23310=2,-233,5 -23311=2,0,2",
        ),
        (3, [7, 6, 1, 5], "-23309=3,1,2,0 -23310=3,-1,5,-2"),
        (4, [5, 4, 6, 3], "-23309=1,2 -23310=1,5 -23311=1,1"),
        (2, [7, 6, 1, 1], "0=2 1=1 3=3 4=4"),
        (1, [9, 1, 1, 1], "0=2 3=5"),
    ];
    check_cases(&mut rng, "Crop", &cases);
    let ins = vec![
        Input::new(&mut rng, "a", 3, [7, 6, 1, 5]),
        Input::new(&mut rng, "b", 3, [4, 3, 1, 2]),
    ];
    check_layer(
        "Crop to a reference",
        &one_layer("Crop", &["a", "b"], "0=1 1=2 2=1"),
        &[],
        &ins,
    );
}

#[test]
fn permute_and_shufflechannel_match_ncnn_in_every_order() {
    let mut rng = Rng(31);
    let orders: Vec<(u8, [usize; 4], String)> = [
        (2, [5, 3, 1, 1], 2),
        (3, [5, 4, 1, 3], 6),
        (4, [5, 4, 3, 2], 24),
    ]
    .into_iter()
    .flat_map(|(dims, shape, n)| (0..n).map(move |o| (dims, shape, format!("0={o}"))))
    .collect();
    check_cases(&mut rng, "Permute", &orders);
    let groups = ["0=2", "0=3", "0=2 1=1", "0=3 1=1"].map(|p| (3, [5, 4, 1, 6], p));
    check_cases(&mut rng, "ShuffleChannel", &groups);
}

#[test]
fn padding_matches_ncnn_in_every_mode() {
    let mut rng = Rng(37);
    let cases = [
        (3, [5, 4, 1, 3], "0=1 1=2 2=3 3=1 4=0 5=0.5"),
        (3, [5, 4, 1, 3], "0=1 1=2 2=3 3=1 4=1"),
        (3, [5, 4, 1, 3], "0=1 1=2 2=3 3=1 4=2"),
        (3, [5, 4, 1, 3], "0=1 2=1 7=1 8=2 5=-1"),
        (2, [5, 4, 1, 1], "0=2 1=1 2=1 3=2 4=2"),
        (1, [6, 1, 1, 1], "2=2 3=3 4=1"),
    ];
    check_cases(&mut rng, "Padding", &cases);
    let pad = rng.vec(3);
    check_layer(
        "Padding with per-channel values",
        &one_layer("Padding", &["data"], "0=1 1=1 2=2 3=1 6=3"),
        &bin(&[(&pad, false)]),
        &[Input::new(&mut rng, "data", 3, [5, 4, 1, 3])],
    );
}

#[test]
fn packing_and_cast_match_ncnn() {
    let mut rng = Rng(41);
    for params in ["0=4", "0=8", "0=4 2=1 3=1"] {
        let x = Input::new(&mut rng, "data", 3, [5, 4, 1, 8]);
        let param = format!(
            "7767517\n3 3\nInput data_in 0 1 data\nPacking pack 1 1 data p {params}\nPacking unpack 1 1 p out 0=1\n"
        );
        check_layer(&format!("Packing {params}"), &param, &[], &[x]);
    }
    // fp32 → fp16 → fp32 rounds every value to fp16, in both
    let x = Input::new(&mut rng, "data", 3, [5, 4, 1, 6]);
    let param = "7767517\n3 3\nInput data_in 0 1 data\nCast half 1 1 data h 0=1 1=2\nCast full 1 1 h out 0=2 1=1\n";
    check_layer("Cast fp32 → fp16 → fp32", param, &[], &[x]);
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

/// `text` as ncnn2mem writes it to `.param.bin`: type indices, blob indices by first
/// appearance, raw words; with the index of each blob name.
fn to_param_bin(text: &str) -> (Vec<u8>, std::collections::HashMap<String, usize>) {
    use fpshader::net::param::LAYER_TYPE_INDEX;
    let mut lines = text.lines().skip(2).filter(|l| !l.trim().is_empty());
    let mut blobs = std::collections::HashMap::new();
    let mut body = Vec::new();
    let word = |out: &mut Vec<u8>, w: i32| out.extend(w.to_le_bytes());
    let value = |t: &str| -> i32 {
        if t.contains(['.', 'e']) {
            t.parse::<f32>().unwrap().to_bits() as i32
        } else {
            t.parse().unwrap()
        }
    };
    let mut layer_count = 0;
    for line in lines.by_ref() {
        layer_count += 1;
        let t: Vec<&str> = line.split_whitespace().collect();
        let kind = LAYER_TYPE_INDEX.iter().position(|k| *k == t[0]).unwrap();
        let (nb, nt): (usize, usize) = (t[2].parse().unwrap(), t[3].parse().unwrap());
        word(&mut body, kind as i32);
        word(&mut body, nb as i32);
        word(&mut body, nt as i32);
        for name in &t[4..4 + nb + nt] {
            let n = blobs.len();
            let id = *blobs.entry(name.to_string()).or_insert(n);
            word(&mut body, id as i32);
        }
        for kv in &t[4 + nb + nt..] {
            let (k, v) = kv.split_once('=').unwrap();
            let k: i32 = k.parse().unwrap();
            word(&mut body, k);
            if k <= -23300 {
                let items: Vec<&str> = v.split(',').collect();
                for item in items {
                    word(&mut body, value(item));
                }
            } else {
                word(&mut body, value(v));
            }
        }
        word(&mut body, -233);
    }
    let mut out = Vec::new();
    word(&mut out, 7767517);
    word(&mut out, layer_count);
    word(&mut out, blobs.len() as i32);
    out.extend(body);
    (out, blobs)
}

#[test]
fn param_bin_runs_like_the_text_param_in_ncnn_and_fpshader() {
    let mut rng = Rng(43);
    let param = BRANCHY.replace("0=4\n", "0=8\n");
    let mem = rng.vec(8);
    let weights = bin(&[(&mem, false)]);
    let x = Input::new(&mut rng, "data", 3, [6, 5, 1, 8]);
    let (param_bin, index) = to_param_bin(&param);
    let named = |name: &'static str| Input { name, ..x.clone() };
    let want = run_net(
        &param,
        &weights,
        &[named("data")],
        "out",
        RunOptions::fp32(),
        None,
    )
    .unwrap();
    let data = index["data"].to_string().leak();
    let out = index["out"].to_string();
    let mut net = Net::new();
    net.opt = RunOptions::fp32();
    net.load_param_bin_bytes("branchy.param.bin", &param_bin)
        .unwrap();
    net.load_model_bytes(&weights).unwrap();
    let mut ex = net.create_extractor().unwrap();
    ex.input(data, named("data").mat()).unwrap();
    let got = ex.extract(&out).unwrap();
    assert_eq!(got.to_values(), want.to_values());
    if let Some(oracle) = ncnn_with(("m.param.bin", &param_bin), &weights, &[named(data)], &out) {
        assert_close(&got.to_values(), &oracle, 1e-3, "branchy .param.bin");
    }
    // every truncation is a typed error naming a byte offset
    for cut in 0..param_bin.len() {
        let e = net
            .load_param_bin_bytes("cut.param.bin", &param_bin[..cut])
            .unwrap_err();
        assert!(e.to_string().contains("byte"), "cut {cut}: {e}");
    }
}

#[test]
fn multi_layer_net_with_branches_matches_ncnn() {
    let mut rng = Rng(21);
    let x = Input::new(&mut rng, "data", 3, [6, 5, 1, 4]);
    let mem = rng.vec(4);
    let weights = bin(&[(&mem, false)]);
    for lightmode in [true, false] {
        let opt = RunOptions {
            lightmode,
            ..RunOptions::fp32()
        };
        let got = run_net(
            BRANCHY,
            &weights,
            std::slice::from_ref(&x),
            "out",
            opt,
            None,
        )
        .unwrap();
        if let Some(want) = ncnn(BRANCHY, &weights, std::slice::from_ref(&x), "out") {
            assert_close(
                &got.to_values(),
                &want,
                1e-3,
                &format!("branchy net, light mode {lightmode}"),
            );
        }
    }
}

/// ncnn's layer-test option tuples on the GPU: packing, fp16 packed/storage/arithmetic,
/// pack8 and image storage; with the tolerance each earns (ncnn's: 0.001 fp32, 0.1 with
/// fp16 storage, 1.0 relative-or-absolute with fp16 arithmetic).
fn gpu_option_tuples() -> Vec<(&'static str, RunOptions, f32)> {
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
        for (name, opt, eps) in gpu_option_tuples() {
            let label = format!("{what}, {name}, {}", ctx.describe());
            let mut net = Net::new();
            net.opt = opt;
            net.set_context(ctx.clone());
            net.load_param_str("gpu", param).unwrap();
            net.load_model_bytes(weights).unwrap();
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

/// Pooling on the GPU (buffer nets; image nets pool on the CPU): max and average, kernels,
/// strides, explicit pads with and without counting them, every pad mode, global and adaptive,
/// channel counts for pack1, pack4 and pack8.
#[test]
fn pooling_runs_on_the_gpu_in_every_mode() {
    let mut rng = Rng(59);
    for params in [
        "0=0 1=2 2=2",
        "0=1 1=3 2=2 3=1",
        "0=1 1=3 2=1 3=1 6=1",
        "0=0 1=3 11=2 2=2 12=1 3=1 13=0 14=2 15=1",
        "0=1 1=3 2=2 5=0",
        "0=1 1=3 2=2 5=1 3=1",
        "0=0 1=3 2=2 5=2",
        "0=1 1=3 2=2 5=3",
        "0=1 1=2 2=2 5=2",
        "0=0 4=1",
        "0=1 4=1",
        "0=0 7=1 8=3 18=2",
        "0=1 7=1 8=4",
    ] {
        for c in [3, 8, 16] {
            let x = Input::new(&mut rng, "data", 3, [9, 7, 1, c]);
            let param = one_layer("Pooling", &["data"], params);
            check_gpu_with(
                &format!("Pooling {params} c={c}"),
                &param,
                &[],
                &[x],
                &["Pooling"],
                true,
            );
        }
    }
}

/// Eltwise on the GPU (buffer nets): product, sum with and without coefficients, max, over
/// two and three inputs, channel counts for pack1, pack4 and pack8.
#[test]
fn eltwise_runs_on_the_gpu() {
    let mut rng = Rng(61);
    for (n, params) in [
        (2, "0=0"),
        (2, "0=1"),
        (3, "0=1 -23301=3,0.5,-2,1.5"),
        (2, "0=1 -23301=2,-1,0.25"),
        (3, "0=2"),
        (3, "0=0"),
    ] {
        for c in [3, 8, 16] {
            let names = ["a", "b", "c"];
            let ins: Vec<Input> = names[..n]
                .iter()
                .map(|&name| Input::new(&mut rng, name, 3, [7, 5, 1, c]))
                .collect();
            let mut param = format!("7767517\n{} {}\n", n + 1, n + 1);
            for name in &names[..n] {
                param += &format!("Input {name}_in 0 1 {name}\n");
            }
            param += &format!("Eltwise e {n} 1 {} out {params}\n", names[..n].join(" "));
            check_gpu_with(
                &format!("Eltwise {params} n={n} c={c}"),
                &param,
                &[],
                &ins,
                &["Eltwise"],
                true,
            );
        }
    }
}

/// Concat on the GPU (buffer nets): 1-, 2- and 3-D blobs along every axis (negative ones too),
/// inputs that pack alike (pack4, pack8) and inputs that do not (back to pack1).
#[test]
fn concat_runs_on_the_gpu_on_every_axis() {
    let mut rng = Rng(63);
    // (dims, axis, the two inputs' shapes)
    let cases: [(u8, i32, [[usize; 4]; 2]); 10] = [
        (1, 0, [[8, 1, 1, 1], [12, 1, 1, 1]]),
        (1, 0, [[5, 1, 1, 1], [8, 1, 1, 1]]),
        (2, 0, [[6, 8, 1, 1], [6, 16, 1, 1]]),
        (2, 1, [[5, 8, 1, 1], [7, 8, 1, 1]]),
        (2, -1, [[5, 3, 1, 1], [2, 3, 1, 1]]),
        (3, 0, [[5, 4, 1, 8], [5, 4, 1, 16]]),
        (3, 0, [[5, 4, 1, 3], [5, 4, 1, 8]]),
        (3, 1, [[5, 4, 1, 8], [5, 6, 1, 8]]),
        (3, 2, [[5, 4, 1, 16], [3, 4, 1, 16]]),
        (3, -3, [[5, 4, 1, 16], [5, 4, 1, 16]]),
    ];
    for (dims, axis, [sa, sb]) in cases {
        let ins = [
            Input::new(&mut rng, "a", dims, sa),
            Input::new(&mut rng, "b", dims, sb),
        ];
        let param = format!(
            "7767517\n3 3\nInput a_in 0 1 a\nInput b_in 0 1 b\nConcat cat 2 1 a b out 0={axis}\n"
        );
        check_gpu_with(
            &format!("Concat {dims}-D axis {axis} {sa:?} {sb:?}"),
            &param,
            &[],
            &ins,
            &["Concat"],
            true,
        );
    }
}

/// Softmax on the GPU (buffer nets): every axis of 1-, 2- and 3-D blobs, the packed one
/// included, rows shorter and longer than the shader keeps in registers, channels for pack1,
/// pack4, pack8.
#[test]
fn softmax_runs_on_the_gpu_along_every_axis() {
    let mut rng = Rng(67);
    let mut cases: Vec<(u8, [usize; 4], i32)> = vec![
        (1, [200, 1, 1, 1], 0),
        (1, [7, 1, 1, 1], -1),
        // a classifier's line, one workgroup on it; longer than it keeps in registers
        (1, [1000, 1, 1, 1], 0),
        (1, [9000, 1, 1, 1], 0),
        (3, [1, 1, 1, 24], 0),
        (2, [150, 8, 1, 1], 0),
        (2, [150, 8, 1, 1], 1),
        // longer than the rows the shader keeps in registers
        (2, [2100, 3, 1, 1], 1),
        (2, [5, 3, 1, 1], -1),
    ];
    for c in [3, 8, 16] {
        for axis in [0, 1, 2, -1] {
            cases.push((3, [70, 5, 1, c], axis));
        }
    }
    for (dims, shape, axis) in cases {
        // values far apart, so that exp overflows unless the line's true maximum comes off
        let mut x = Input::new(&mut rng, "data", dims, shape);
        x.values.iter_mut().for_each(|v| *v *= 60.0);
        check_gpu_with(
            &format!("Softmax {dims}-D {shape:?} axis {axis}"),
            &one_layer("Softmax", &["data"], &format!("0={axis} 1=1")),
            &[],
            &[x],
            &["Softmax"],
            true,
        );
    }
}

/// BatchNorm and Scale on the GPU (buffer nets), in place over the channel axis of 1-, 2- and
/// 3-D blobs; channels for pack1, pack4 and pack8; Scale with and without bias.
#[test]
fn batchnorm_and_scale_run_on_the_gpu() {
    let mut rng = Rng(71);
    for (dims, c) in [(3, 3), (3, 8), (3, 16), (2, 8), (1, 12)] {
        let shape = match dims {
            1 => [c, 1, 1, 1],
            2 => [9, c, 1, 1],
            _ => [9, 5, 1, c],
        };
        let (slope, mean, bias) = (rng.vec(c), rng.vec(c), rng.vec(c));
        let var: Vec<f32> = rng.vec(c).iter().map(|v| v.abs() + 0.1).collect();
        let weights = bin(&[
            (&slope, false),
            (&mean, false),
            (&var, false),
            (&bias, false),
        ]);
        check_gpu_with(
            &format!("BatchNorm {dims}-D c={c}"),
            &one_layer("BatchNorm", &["data"], &format!("0={c} 1=0.001")),
            &weights,
            &[Input::new(&mut rng, "data", dims, shape)],
            &["BatchNorm"],
            true,
        );
        for bias_term in [0, 1] {
            let (scale, sbias) = (rng.vec(c), rng.vec(c));
            let parts: Vec<(&[f32], bool)> = if bias_term == 1 {
                vec![(&scale, false), (&sbias, false)]
            } else {
                vec![(&scale, false)]
            };
            check_gpu_with(
                &format!("Scale {dims}-D c={c} bias {bias_term}"),
                &one_layer("Scale", &["data"], &format!("0={c} 1={bias_term}")),
                &bin(&parts),
                &[Input::new(&mut rng, "data", dims, shape)],
                &["Scale"],
                true,
            );
        }
    }
}

/// The copy layers on the GPU (buffer nets), in the cases their ncnn tests use: Flatten and
/// Reshape (sharing the buffer where both layouts have no gaps, gathering where they do),
/// Slice, Crop, Permute in every order, ShuffleChannel and Padding in every mode.
#[test]
fn copy_layers_run_on_the_gpu() {
    let mut rng = Rng(73);
    let one = |kind: &str, dims: u8, shape: [usize; 4], params: &str, rng: &mut Rng| {
        let x = Input::new(rng, "data", dims, shape);
        check_gpu_with(
            &format!("{kind} {dims}-D {shape:?} {params}"),
            &one_layer(kind, &["data"], params),
            &[],
            &[x],
            &[kind],
            true,
        );
    };
    for (kind, dims, shape, params) in [
        ("Flatten", 3, [5, 4, 1, 6], ""),
        ("Flatten", 3, [4, 4, 1, 6], ""),
        ("Flatten", 2, [5, 3, 1, 1], ""),
        ("Reshape", 3, [5, 4, 1, 6], "0=12 1=10"),
        ("Reshape", 3, [5, 4, 1, 6], "0=-1 1=5 2=2"),
        ("Reshape", 3, [4, 4, 1, 6], "0=8 1=2 2=6"),
        ("Reshape", 3, [5, 4, 1, 6], "0=120"),
        ("Reshape", 1, [24, 1, 1, 1], "0=3 1=2 2=4"),
        ("Reshape", 2, [6, 4, 1, 1], "0=4 1=6"),
    ] {
        one(kind, dims, shape, params, &mut rng);
    }
    for (dims, shape, params) in [
        (3, [7, 6, 1, 5], "0=1 1=2 2=1 3=4 4=3 5=2"),
        (3, [7, 6, 1, 5], "0=1 1=1 6=2 7=1 3=-233 4=-233 5=-233"),
        (
            3,
            [7, 6, 1, 5],
            "-23309=2,1,-3 -23310=2,-233,5 -23311=2,0,2",
        ),
        (3, [7, 6, 1, 5], "-23309=3,1,2,0 -23310=3,-1,5,-2"),
        (2, [7, 6, 1, 1], "0=2 1=1 3=3 4=4"),
        (1, [9, 1, 1, 1], "0=2 3=5"),
    ] {
        one("Crop", dims, shape, params, &mut rng);
    }
    for (dims, shape, n) in [(2, [5, 3, 1, 1], 2), (3, [5, 4, 1, 3], 6)] {
        for o in 0..n {
            one("Permute", dims, shape, &format!("0={o}"), &mut rng);
        }
    }
    for params in ["0=2", "0=3", "0=2 1=1", "0=4 1=1"] {
        one("ShuffleChannel", 3, [5, 4, 1, 12], params, &mut rng);
    }
    for (dims, shape, params) in [
        (3, [5, 4, 1, 3], "0=1 1=2 2=3 3=1 4=0 5=0.5"),
        (3, [5, 4, 1, 3], "0=1 1=2 2=3 3=1 4=1"),
        (3, [5, 4, 1, 3], "0=1 1=2 2=3 3=1 4=2"),
        (3, [5, 4, 1, 8], "0=1 2=1 7=1 8=2 5=-1"),
        (2, [5, 4, 1, 1], "0=2 1=1 2=1 3=2 4=2"),
        (1, [6, 1, 1, 1], "2=2 3=3 4=1"),
    ] {
        one("Padding", dims, shape, params, &mut rng);
    }
    for (dims, shape, params) in [
        (3, [7, 6, 1, 9], "-23300=3,2,-233,-233 1=0"),
        (3, [7, 6, 1, 9], "-23302=2,1,4 1=1"),
        (3, [7, 6, 1, 9], "-23300=3,3,-233,2 1=-1"),
        (2, [8, 5, 1, 1], "-23300=3,-233,-233,-233 1=1"),
        (1, [10, 1, 1, 1], "-23302=2,3,-2"),
    ] {
        let x = Input::new(&mut rng, "data", dims, shape);
        let param = format!(
            "7767517\n2 4\nInput data_in 0 1 data\nSlice slice 1 3 data out0 out1 out2 {params}\n"
        );
        check_gpu_outputs(
            &format!("Slice {dims}-D {params}"),
            &param,
            &[],
            &[x],
            &["Slice"],
            true,
            &["out0", "out1", "out2"],
        );
    }
    let ins = [
        Input::new(&mut rng, "a", 3, [7, 6, 1, 5]),
        Input::new(&mut rng, "b", 3, [4, 3, 1, 2]),
    ];
    check_gpu_with(
        "Crop to a reference",
        &one_layer("Crop", &["a", "b"], "0=1 1=2 2=1"),
        &[],
        &ins,
        &["Crop"],
        true,
    );
}

/// Cast (rounding to fp16 and bf16) and Packing on the GPU between GPU layers, in every
/// option tuple (image nets too: Cast is elementwise; Packing is buffers only).
#[test]
fn cast_and_packing_run_on_the_gpu() {
    let mut rng = Rng(79);
    for (to, code) in [("fp16", 2), ("bf16", 4)] {
        let x = Input::new(&mut rng, "data", 3, [7, 5, 1, 8]);
        let param = format!(
            "7767517\n4 4\nInput data_in 0 1 data\nReLU r 1 1 data a\nCast narrow 1 1 a h 0=1 1={code}\nCast widen 1 1 h out 0={code} 1=1\n"
        );
        check_gpu(
            &format!("Cast fp32 → {to} → fp32"),
            &param,
            &[],
            &[x],
            &["Cast"],
        );
    }
    for (from, to) in [(1, 4), (4, 8), (8, 1), (4, 1)] {
        let x = Input::new(&mut rng, "data", 3, [7, 5, 1, 16]);
        let param = format!(
            "7767517\n4 4\nInput data_in 0 1 data\nPacking p 1 1 data a 0={from}\nPacking q 1 1 a b 0={to}\nSigmoid s 1 1 b out\n"
        );
        check_gpu_with(
            &format!("Packing {from} → {to}"),
            &param,
            &[],
            &[x],
            &["Packing"],
            true,
        );
    }
}

/// MemoryData on the GPU hands out its uploaded blob; an in-place GPU layer after it (Softmax)
/// must copy it first, or the second run would see the first run's output as its data.
#[test]
fn memorydata_stays_unchanged_under_in_place_gpu_layers() {
    let mut rng = Rng(83);
    let values = rng.vec(7 * 5 * 8);
    let param = "7767517\n3 3\nMemoryData mem 0 1 m 0=7 1=5 2=8\nSoftmax soft 1 1 m s 0=0\nReLU r 1 1 s out\n";
    let weights = bin(&[(&values, false)]);
    let want = run_net(param, &weights, &[], "out", RunOptions::fp32(), None)
        .unwrap()
        .to_values();
    // pack1 fp32: no repacking between them that would copy the blob anyway
    for (ctx, opt) in gpu_contexts()
        .into_iter()
        .flat_map(|c| [(c.clone(), RunOptions::fp32()), (c, RunOptions::default())])
    {
        let mut net = Net::new();
        net.opt = opt;
        net.set_context(ctx.clone());
        net.load_param_str("mem", param).unwrap();
        net.load_model_bytes(&weights).unwrap();
        for kind in ["MemoryData", "Softmax"] {
            assert!(
                net.layers().iter().any(|l| l.kind == kind && l.on_gpu()),
                "{kind} did not run on the GPU"
            );
        }
        for run in 0..2 {
            let got = net.create_extractor().unwrap().extract("out").unwrap();
            assert_close(
                &got.to_values(),
                &want,
                0.1,
                &format!("run {run} on {}", ctx.describe()),
            );
        }
    }
}

#[test]
fn every_activation_runs_on_the_gpu_in_every_option_tuple() {
    let mut rng = Rng(53);
    for (kind, params) in [
        ("ReLU", ""),
        ("ReLU", "0=0.2"),
        ("Sigmoid", ""),
        ("TanH", ""),
        ("Clip", "0=-0.3 1=0.4"),
        ("Swish", ""),
        ("HardSwish", "0=0.25 1=0.4"),
        ("HardSigmoid", ""),
        ("GELU", ""),
        ("GELU", "0=1"),
        ("Dropout", "0=0.5"),
        ("Noop", ""),
    ] {
        for c in [16, 3] {
            let x = Input::new(&mut rng, "data", 3, [7, 5, 1, c]);
            let param = one_layer(kind, &["data"], params);
            check_gpu(
                &format!("{kind} {params} c={c}"),
                &param,
                &[],
                &[x],
                &[kind],
            );
        }
    }
}

#[test]
fn binaryop_runs_on_the_gpu_for_every_op_and_broadcast() {
    let mut rng = Rng(59);
    let positive = |mut i: Input| {
        i.values.iter_mut().for_each(|v| *v = v.abs() + 0.1);
        i
    };
    for op in 0..=11 {
        for c in [16, 3] {
            let ins = vec![
                positive(Input::new(&mut rng, "a", 3, [7, 5, 1, c])),
                positive(Input::new(&mut rng, "b", 3, [7, 5, 1, c])),
            ];
            let param = one_layer("BinaryOp", &["a", "b"], &format!("0={op}"));
            check_gpu(
                &format!("BinaryOp {op} c={c}"),
                &param,
                &[],
                &ins,
                &["BinaryOp"],
            );
            let a = positive(Input::new(&mut rng, "a", 3, [7, 5, 1, c]));
            let param = one_layer("BinaryOp", &["a"], &format!("0={op} 1=1 2=0.7"));
            check_gpu(
                &format!("BinaryOp {op} scalar c={c}"),
                &param,
                &[],
                &[a],
                &["BinaryOp"],
            );
        }
    }
    // broadcasts: per channel (either side), along w, along h, 2-D, and one the GPU declines
    for (a, b) in [
        ((3, [7, 5, 1, 16]), (1, [16, 1, 1, 1])),
        ((1, [16, 1, 1, 1]), (3, [7, 5, 1, 16])),
        ((3, [7, 5, 1, 16]), (3, [1, 5, 1, 16])),
        ((3, [7, 1, 1, 8]), (3, [7, 5, 1, 8])),
        ((2, [7, 12, 1, 1]), (2, [7, 12, 1, 1])),
        ((2, [7, 12, 1, 1]), (1, [12, 1, 1, 1])),
        ((3, [7, 5, 1, 16]), (3, [7, 5, 1, 1])),
    ] {
        let ins = vec![
            Input::new(&mut rng, "a", a.0, a.1),
            Input::new(&mut rng, "b", b.0, b.1),
        ];
        let param = one_layer("BinaryOp", &["a", "b"], "0=2");
        check_gpu(
            &format!("BinaryOp {a:?} * {b:?}"),
            &param,
            &[],
            &ins,
            &["BinaryOp"],
        );
    }
}

#[test]
fn innerproduct_runs_on_the_gpu_for_flat_inputs_with_every_activation() {
    let mut rng = Rng(61);
    for activation in 0..=6 {
        // inputs that are not a multiple of 4 (squeeze-excitation's) take the 1×1 convolution
        for (num_input, num_output, bias) in [(64, 10, 1), (32, 7, 0), (6, 144, 1), (10, 5, 0)] {
            let w = rng.vec(num_input * num_output);
            let b = rng.vec(num_output);
            let params = format!(
                "0={num_output} 1={bias} 2={} 9={activation} -23310=2,0.1,0.6",
                w.len()
            );
            let weights = if bias == 1 {
                bin(&[(&w, true), (&b, false)])
            } else {
                bin(&[(&w, true)])
            };
            // 1-D, and 3-D of 1×1 per channel (after a non-global pooling to 1×1)
            let x = if num_input % 20 == 4 || num_input == 6 {
                Input::new(&mut rng, "data", 1, [num_input, 1, 1, 1])
            } else {
                Input::new(&mut rng, "data", 3, [1, 1, 1, num_input])
            };
            check_gpu_with(
                &format!("InnerProduct {params}"),
                &one_layer("InnerProduct", &["data"], &params),
                &weights,
                &[x],
                &["InnerProduct"],
                true,
            );
        }
    }
    // 3-D inputs (vgg's and alexnet's first fully connected layers) are flattened on the GPU,
    // channel blocks of 4 and 8 and a ragged channel count
    for c in [8, 16, 5] {
        let w = rng.vec(4 * 3 * c * 5);
        let param = one_layer(
            "InnerProduct",
            &["data"],
            &format!("0=5 1=1 2={} 9=1", w.len()),
        );
        let x = Input::new(&mut rng, "data", 3, [4, 3, 1, c]);
        let b = rng.vec(5);
        check_gpu_with(
            "InnerProduct of a 3-D blob",
            &param,
            &bin(&[(&w, true), (&b, false)]),
            &[x],
            &["InnerProduct"],
            true,
        );
    }
}

/// Spent GPU blobs go back to the context's pool and are handed out again: repeated extracts
/// on a chain of GPU layers (each reusing the last run's buffers) stay right.
#[test]
fn pooled_buffers_are_reused_without_corrupting_later_runs() {
    let mut rng = Rng(67);
    let param = "7767517\n6 7\nInput a_in 0 1 a\nInput b_in 0 1 b\nReLU r 1 1 a r 0=0.1\n\
                 BinaryOp add 2 1 r b s 0=0\nSigmoid sig 1 1 s t\nBinaryOp mul 2 1 t b out 0=2\n";
    let ins = [
        Input::new(&mut rng, "a", 3, [9, 7, 1, 8]),
        Input::new(&mut rng, "b", 3, [9, 7, 1, 8]),
    ];
    let want = run_net(param, &[], &ins, "out", RunOptions::fp32(), None).unwrap();
    for ctx in gpu_contexts() {
        let mut net = Net::new();
        net.opt = RunOptions::fp32();
        net.set_context(ctx.clone());
        net.load_param_str("pool", param).unwrap();
        net.load_model_bytes(&[]).unwrap();
        for run in 0..4 {
            let mut ex = net.create_extractor().unwrap();
            for i in &ins {
                ex.input(i.name, i.mat()).unwrap();
            }
            let got = ex.extract("out").unwrap();
            assert_close(
                &got.to_values(),
                &want.to_values(),
                1e-3,
                &format!("run {run}, {}", ctx.describe()),
            );
        }
    }
}

/// Buffers go back to the context's pool when the last mat holding them drops, the user's
/// outputs included: from the second run on, a GPU net allocates nothing, and the pool holds
/// the same bytes after every run.
#[test]
fn a_second_run_allocates_nothing_and_dropped_outputs_return_to_the_pool() {
    let mut rng = Rng(71);
    let param = "7767517\n6 7\nInput a_in 0 1 a\nInput b_in 0 1 b\nReLU r 1 1 a r 0=0.1\n\
                 BinaryOp add 2 1 r b s 0=0\nSigmoid sig 1 1 s t\nBinaryOp mul 2 1 t b out 0=2\n";
    let ins = [
        Input::new(&mut rng, "a", 3, [16, 8, 1, 8]),
        Input::new(&mut rng, "b", 3, [16, 8, 1, 8]),
    ];
    for ctx in gpu_contexts() {
        let mut net = Net::new();
        net.opt = RunOptions::fp32();
        net.set_context(ctx.clone());
        net.load_param_str("pool", param).unwrap();
        net.load_model_bytes(&[]).unwrap();
        let opts = net.opt.variant_options(ctx.allowed_options());
        let inputs: Vec<_> = ins
            .iter()
            .map(|i| ctx.upload_mat(&i.mat(), opts).unwrap())
            .collect();
        let mut pooled = Vec::new();
        for run in 0..3 {
            let stats = ctx.submission_stats();
            let mut ex = net.create_extractor().unwrap();
            for (i, m) in ins.iter().zip(&inputs) {
                ex.input_gpu(i.name, m.clone()).unwrap();
            }
            let out = ex.extract_gpu("out").unwrap();
            drop(ex);
            let before = ctx.pooled_bytes();
            drop(out);
            assert!(
                ctx.pooled_bytes() > before,
                "a dropped output goes back to the pool ({})",
                ctx.describe()
            );
            pooled.push(ctx.pooled_bytes());
            // the same buffers for the same blobs every run: their bind groups are cached
            let d = ctx.submission_stats() - stats;
            if run > 0 {
                assert_eq!((d.new_buffers, d.bind_groups), (0, 0), "{}", ctx.describe());
            }
        }
        assert!(pooled[0] > 0, "{}", ctx.describe());
        assert_eq!(pooled[1], pooled[0], "{}", ctx.describe());
        assert_eq!(pooled[2], pooled[0], "{}", ctx.describe());
    }
}

/// GPU layers (ReLU, Sigmoid, BinaryOp, MemoryData, Pooling, Eltwise) around CPU layers
/// (Split, Scale by a blob): each run of GPU layers in one submission, downloads where a CPU layer
/// follows; fp32 and fp16.
#[test]
fn gpu_layers_with_cpu_fallback_match_ncnn() {
    let mut rng = Rng(23);
    let x = Input::new(&mut rng, "data", 3, [6, 5, 1, 8]);
    let mem = rng.vec(8);
    // Scale by a second blob (no GPU path) between GPU layers Pooling and Eltwise
    let param = BRANCHY
        .replace("0=4\n", "0=8\n")
        .replace("8 10\n", "10 13\n")
        .replace(
            "Eltwise mul 2 1 g m out",
            "Split msp 1 2 m m1 m2\nScale sc 2 1 g m1 g2 0=-233\nEltwise mul 2 1 g2 m2 out",
        );
    let weights = bin(&[(&mem, false)]);
    let input = || x.clone();
    let want = ncnn(&param, &weights, &[input()], "out");
    let cpu = run_net(
        &param,
        &weights,
        &[input()],
        "out",
        RunOptions::fp32(),
        None,
    )
    .unwrap();
    for ctx in gpu_contexts() {
        for (opt, eps) in [(RunOptions::fp32(), 1e-3), (RunOptions::default(), 0.1)] {
            let mut net = Net::new();
            net.opt = opt;
            net.set_context(ctx.clone());
            net.load_param_str("branchy", &param).unwrap();
            net.load_model_bytes(&weights).unwrap();
            let on_gpu: Vec<&str> = net
                .layers()
                .iter()
                .filter(|l| l.on_gpu())
                .map(|l| l.kind.as_str())
                .collect();
            assert_eq!(
                on_gpu,
                [
                    "ReLU",
                    "Sigmoid",
                    "BinaryOp",
                    "MemoryData",
                    "Pooling",
                    "Eltwise"
                ],
                "{}",
                ctx.describe()
            );
            let mut ex = net.create_extractor().unwrap();
            // keep intermediates, so `s` can be extracted after the run
            ex.set_light_mode(false);
            ex.input("data", input().mat()).unwrap();
            let got = ex.extract("out").unwrap().to_values();
            let what = format!("{} {opt:?}", ctx.describe());
            assert_close(&got, &cpu.to_values(), eps, &what);
            if let Some(want) = &want {
                assert_close(&got, want, eps, &what);
            }
            // an intermediate GPU blob, extracted after the run
            let s = ex.extract("s").unwrap();
            assert_eq!(s.shape(), [6, 5, 1, 8]);
        }
    }
}

/// Records what a layer received, to check the engine keeps each flag's promise.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Seen {
    elempack: usize,
    elemtype: Option<ElemType>,
}

struct Probe {
    support: Support,
    implements: Implements,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Layer for Probe {
    fn support(&self) -> Support {
        self.support
    }
    fn implements(&self) -> Implements {
        self.implements
    }
    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> fpshader::Result<Mat> {
        self.seen.lock().unwrap().push(Seen {
            elempack: bottom.elempack,
            elemtype: Some(bottom.elemtype()),
        });
        Ok(bottom.clone())
    }
    fn forward_inplace(&self, blob: &mut Mat, _opt: &RunOptions) -> fpshader::Result<()> {
        self.seen.lock().unwrap().push(Seen {
            elempack: blob.elempack,
            elemtype: Some(blob.elemtype()),
        });
        // a mutation no other reader of the input may see
        *blob = blob.zeros_like();
        Ok(())
    }
}

fn probe_net(
    support: Support,
    implements: Implements,
    param: &str,
) -> (Net, Arc<Mutex<Vec<Seen>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut net = Net::new();
    let s = seen.clone();
    net.register_layer("Probe", move || {
        Box::new(Probe {
            support,
            implements,
            seen: s.clone(),
        })
    });
    net.load_param_str("probe", param).unwrap();
    (net, seen)
}

const PROBE: &str = "7767517\n2 2\nInput data 0 1 data\nProbe p 1 1 data out\n";

fn one_blob(inplace: bool) -> (Support, Implements) {
    (
        Support {
            one_blob_only: true,
            inplace,
            ..Support::default()
        },
        Implements {
            forward: !inplace,
            forward_inplace: inplace,
            ..Implements::default()
        },
    )
}

#[test]
fn without_support_packing_a_layer_gets_elempack_1() {
    let (support, implements) = one_blob(false);
    let (mut net, seen) = probe_net(support, implements, PROBE);
    net.load_model_zeros().unwrap();
    let mut ex = net.create_extractor().unwrap();
    ex.input("data", Mat::new_3d(2, 2, 2, 4).unwrap()).unwrap();
    ex.extract("out").unwrap();
    assert_eq!(seen.lock().unwrap()[0].elempack, 1);
}

#[test]
fn with_support_packing_a_layer_gets_the_widest_packing_the_channels_allow() {
    let (mut support, implements) = one_blob(false);
    support.packing = true;
    let eight = fpshader::net::convert::cpu_has_256bit_simd();
    for (channels, want) in [(16, if eight { 8 } else { 4 }), (12, 4), (6, 1)] {
        let (mut net, seen) = probe_net(support, implements, PROBE);
        net.opt = RunOptions::fp32();
        net.opt.use_packing_layout = true;
        net.load_model_zeros().unwrap();
        let mut ex = net.create_extractor().unwrap();
        ex.input("data", Mat::new_3d(3, 2, channels, 1).unwrap())
            .unwrap();
        ex.extract("out").unwrap();
        assert_eq!(
            seen.lock().unwrap()[0].elempack,
            want,
            "{channels} channels"
        );
    }
    // any_packing: the input's packing as it is
    support.any_packing = true;
    let (mut net, seen) = probe_net(support, implements, PROBE);
    net.load_model_zeros().unwrap();
    let mut ex = net.create_extractor().unwrap();
    ex.input("data", Mat::new_3d(3, 2, 4, 4).unwrap()).unwrap();
    ex.extract("out").unwrap();
    assert_eq!(seen.lock().unwrap()[0].elempack, 4);
}

#[test]
fn storage_flags_choose_bf16_over_fp16_and_never_give_16_bit_to_others() {
    let (support, implements) = one_blob(false);
    let fp16_input = Mat::new_3d(2, 2, 1, 1).unwrap().cast(ElemType::F16);
    for (flags, bf16, want) in [
        ((false, false), true, ElemType::F32),
        ((true, true), true, ElemType::Bf16),
        ((true, true), false, ElemType::F16),
        ((false, true), true, ElemType::F16),
    ] {
        let s = Support {
            bf16_storage: flags.0,
            fp16_storage: flags.1,
            ..support
        };
        let (mut net, seen) = probe_net(s, implements, PROBE);
        net.opt.use_bf16_storage = bf16;
        net.load_model_zeros().unwrap();
        let mut ex = net.create_extractor().unwrap();
        ex.input("data", fp16_input.clone()).unwrap();
        ex.extract("out").unwrap();
        assert_eq!(
            seen.lock().unwrap()[0].elemtype,
            Some(want),
            "{flags:?} bf16 {bf16}"
        );
    }
}

/// In-place GPU layers write a blob nothing else holds without copying it: a ReLU's output
/// through three Softmax layers asks for one buffer (the ReLU's), where a copy per layer would
/// ask for four.
#[test]
fn in_place_gpu_layers_copy_only_what_others_hold() {
    let mut rng = Rng(97);
    let x = Input::new(&mut rng, "data", 3, [64, 8, 1, 4]);
    let param = "7767517\n5 5\nInput data_in 0 1 data\nReLU r 1 1 data a 0=0.1\nSoftmax s0 1 1 a b 0=2\nSoftmax s1 1 1 b c 0=1\nSoftmax s2 1 1 c out 0=0\n";
    for ctx in gpu_contexts() {
        let mut net = Net::new();
        net.opt = RunOptions::fp32();
        net.set_context(ctx.clone());
        net.load_param_str("inplace", param).unwrap();
        net.load_model_bytes(&[]).unwrap();
        let before = ctx.storage_requests();
        let mut ex = net.create_extractor().unwrap();
        ex.input("data", x.mat()).unwrap();
        ex.extract("out").unwrap();
        assert_eq!(ctx.storage_requests() - before, 1, "{}", ctx.describe());
    }
}

#[test]
fn in_place_layers_never_change_what_another_reader_sees() {
    let (support, implements) = one_blob(true);
    let param = "7767517\n3 3\nInput data 0 1 data\nProbe p 1 1 data out\nReLU r 1 1 data other\n";
    for lightmode in [true, false] {
        let (mut net, _) = probe_net(support, implements, param);
        net.opt.lightmode = lightmode;
        net.load_model_zeros().unwrap();
        let mut ex = net.create_extractor().unwrap();
        let x = Mat::from_values(4, 1, 1, &[1.0, 2.0, 3.0, 4.0]).unwrap();
        ex.input("data", x).unwrap();
        assert_eq!(ex.extract("out").unwrap().to_values(), [0.0; 4]);
        assert_eq!(
            ex.extract("other").unwrap().to_values(),
            [1.0, 2.0, 3.0, 4.0],
            "light {lightmode}"
        );
    }
}

#[test]
fn a_flag_without_its_method_is_an_error_at_load_model() {
    let (support, _) = one_blob(true);
    let (mut net, _) = probe_net(
        support,
        Implements {
            forward: true,
            ..Implements::default()
        },
        PROBE,
    );
    let e = net.load_model_zeros().unwrap_err();
    assert!(
        matches!(
            e,
            Error::Unimplemented {
                method: "forward_inplace",
                ..
            }
        ),
        "{e}"
    );
    let (support, implements) = one_blob(false);
    let (mut net, _) = probe_net(
        Support {
            vulkan: true,
            ..support
        },
        implements,
        PROBE,
    );
    // without a device nothing runs on the GPU, so the CPU contract is what counts
    net.load_model_zeros().unwrap();
}

#[test]
fn feature_mask_switches_storage_off_for_one_layer() {
    let (mut support, implements) = one_blob(false);
    support.fp16_storage = true;
    let param = "7767517\n2 2\nInput data 0 1 data\nProbe p 1 1 data out 31=2\n";
    let (mut net, seen) = probe_net(support, implements, param);
    net.load_model_zeros().unwrap();
    let mut ex = net.create_extractor().unwrap();
    ex.input("data", Mat::new_3d(2, 2, 1, 1).unwrap()).unwrap();
    ex.extract("out").unwrap();
    assert_eq!(seen.lock().unwrap()[0].elemtype, Some(ElemType::F32));
}

#[test]
fn malformed_models_and_misuse_are_typed_errors() {
    let mut net = Net::new();
    for (text, needle) in [
        ("", "magic"),
        ("7767518\n1 1\n", "magic"),
        ("7767517\n1\n", "layer_count"),
        ("7767517\n2 2\nInput data 0 1 data\n", "declares 2 layers"),
        ("7767517\n1 1\nNoSuchLayer x 0 1 y\n", "unknown layer type"),
        (
            "7767517\n1 1\nReLU r 1 1 nowhere out\n",
            "before any layer writes it",
        ),
        ("7767517\n1 1\nReLU r 0 1 out 0=abc\n", "bad integer"),
        (
            "7767517\n1 1\nReLU r 0 1 out -23300=3,1,2\n",
            "declares 3 values",
        ),
    ] {
        let e = net.load_param_str("bad.param", text).unwrap_err();
        assert!(e.to_string().contains(needle), "{text:?}: {e}");
    }
    // weights too short for the declared InnerProduct
    let param = "7767517\n2 2\nInput data 0 1 data\nInnerProduct fc 1 1 data out 0=4 1=1 2=32\n";
    net.load_param_str("fc", param).unwrap();
    let e = net
        .load_model_bytes(&bin(&[(&[0.0; 31], true)]))
        .unwrap_err();
    assert!(
        matches!(e, Error::Weights { ref layer, .. } if layer == "fc"),
        "{e}"
    );
    for cut in 0..140 {
        let full = bin(&[(&[0.5; 32], true), (&[0.0; 4], false)]);
        let r = net.load_model_bytes(&full[..cut.min(full.len())]);
        assert_eq!(r.is_ok(), cut >= full.len(), "cut {cut}");
    }
    // missing input, unknown blob, wrong input shape
    net.load_model_bytes(&bin(&[(&[0.5; 32], true), (&[0.0; 4], false)]))
        .unwrap();
    let mut ex = net.create_extractor().unwrap();
    assert!(matches!(ex.extract("out"), Err(Error::Blob(_))));
    assert!(matches!(ex.extract("nope"), Err(Error::Blob(_))));
    ex.input("data", Mat::new_3d(3, 3, 1, 1).unwrap()).unwrap();
    let e = ex.extract("out").unwrap_err();
    assert!(
        matches!(e, Error::Layer { ref layer, .. } if layer == "fc"),
        "{e}"
    );
    let _ = ParamDict::new();
}

/// Writes `values` of numpy `shape` as a float32 `.npy`.
fn write_npy(path: &std::path::Path, shape: &[usize], values: &[f32]) {
    use npyz::WriterBuilder;
    let shape: Vec<u64> = shape.iter().map(|&n| n as u64).collect();
    let mut bytes = Vec::new();
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&shape)
        .writer(&mut bytes)
        .begin_nd()
        .unwrap();
    w.extend(values.iter().copied()).unwrap();
    w.finish().unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn read_npy(path: &std::path::Path) -> (Vec<u64>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap();
    let file = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = file.shape().to_vec();
    (shape, file.into_vec().unwrap())
}

/// `fpshader run` on the branchy model: .npy in, .npy out in numpy's axis order, on the CPU
/// and on the GPU through both paths, against ncnn; bad arguments are messages, not panics.
#[test]
fn cli_runs_a_model_from_npy_files_like_ncnn() {
    let exe = env!("CARGO_BIN_EXE_fpshader");
    let mut rng = Rng(47);
    let param = BRANCHY.replace("0=4\n", "0=8\n");
    let mem = rng.vec(8);
    let weights = bin(&[(&mem, false)]);
    let x = Input::new(&mut rng, "data", 3, [6, 5, 1, 8]);
    let dir = scratch();
    std::fs::write(dir.join("m.param"), &param).unwrap();
    std::fs::write(dir.join("m.bin"), &weights).unwrap();
    write_npy(&dir.join("x.npy"), &x.numpy_shape(), &x.values);
    let want = ncnn(&param, &weights, &[x], "out");
    let mut runs = vec![vec!["--cpu", "--opt", "fp32"], vec!["--cpu"]];
    if std::env::var_os("FPSHADER_SKIP_GPU").is_none() {
        runs.push(vec!["--opt", "fp32", "--path", "passthrough"]);
        runs.push(vec!["--path", "naga"]);
    }
    for extra in runs {
        let out = dir.join("out.npy");
        let _ = std::fs::remove_file(&out);
        let run = std::process::Command::new(exe)
            .current_dir(&dir)
            .args(["run", "m.param", "m.bin", "--input", "data=x.npy"])
            .args(["--output", "out", "-o", "out.npy", "--threads", "2"])
            .args(&extra)
            .env("WGPU_BACKEND", "vulkan")
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let (shape, got) = read_npy(&out);
        // global pooling leaves a 1-D blob of the 8 channels
        assert_eq!(shape, [8], "{extra:?}");
        let eps = if extra.contains(&"fp32") { 1e-3 } else { 0.1 };
        if let Some(want) = &want {
            assert_close(&got, want, eps, &format!("fpshader run {extra:?}"));
        }
    }
    // the summary on stdout, to a reader that goes away at once (`| head -0`)
    let mut child = std::process::Command::new(exe)
        .current_dir(&dir)
        .args([
            "run", "m.param", "m.bin", "--input", "x.npy", "--cpu", "--time",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let done = child.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(
        done.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    for (args, needle) in [
        (
            vec!["run", "m.param", "m.bin", "--input", "nope.npy", "--cpu"],
            "nope.npy",
        ),
        (
            vec![
                "run", "m.param", "m.bin", "--input", "x.npy", "--opt", "fp17",
            ],
            "fp17",
        ),
        (vec!["run", "missing.param", "--cpu"], "missing.param"),
        (
            vec!["run", "m.param", "m.bin", "--input", "m.bin", "--cpu"],
            "m.bin",
        ),
        (
            vec![
                "run", "m.param", "m.bin", "--input", "x.npy", "--output", "zz", "--cpu",
            ],
            "zz",
        ),
    ] {
        let run = std::process::Command::new(exe)
            .current_dir(&dir)
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(needle) && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Cast on the GPU rounds to fp16 and bf16 exactly as the host cast does (fp32 nets, where
/// nothing else rounds).
#[test]
fn cast_rounds_on_the_gpu_exactly_as_on_the_cpu() {
    let mut rng = Rng(89);
    let mut x = Input::new(&mut rng, "data", 1, [64, 1, 1, 1]);
    x.values.iter_mut().for_each(|v| *v *= 300.0);
    for code in [2, 4] {
        let param = format!(
            "7767517\n2 2\nInput data_in 0 1 data\nCast narrow 1 1 data out 0=1 1={code}\n"
        );
        let input = std::slice::from_ref(&x);
        let cpu = run_net(&param, &[], input, "out", RunOptions::fp32(), None).unwrap();
        assert_ne!(cpu.to_values(), x.values, "type {code} rounds on the CPU");
        for ctx in gpu_contexts() {
            let gpu = run_net(
                &param,
                &[],
                input,
                "out",
                RunOptions::fp32(),
                Some(ctx.clone()),
            );
            assert_eq!(
                gpu.unwrap().to_values(),
                cpu.to_values(),
                "type {code}, {}",
                ctx.describe()
            );
        }
    }
}

/// A convolution case: input `[w, h, 1, c]`, params without weight size, groups, outputs,
/// kernel `[kw, kh]`.
type ConvCase = ([usize; 4], String, usize, usize, [usize; 2]);

/// The convolution cases of the ncnn and GPU tests.
fn convolution_cases() -> Vec<ConvCase> {
    let mut cases = Vec::new();
    for (c, outc, k, extra) in [
        (3, 8, [3, 3], "3=2 4=1"),
        (4, 8, [1, 1], ""),
        (8, 4, [3, 3], "4=1 9=1"),
        (5, 7, [3, 3], "2=2 4=2"),
        (8, 8, [5, 5], "3=2 4=-233 9=2 -23310=1,0.1"),
        (6, 5, [7, 7], "3=2 4=-234 9=3 -23310=2,-0.5,0.5"),
        (8, 12, [3, 1], "12=2 14=1 16=2 4=0 18=0.5 9=4"),
        (4, 4, [2, 3], "13=2 9=5"),
        (16, 8, [3, 3], "4=1 9=6 -23310=2,0.2,0.5"),
        (3, 3, [3, 3], "5=0"),
        // the GEMM's wide tile (at most 64 outputs) with its steps split over 2 and 4 slices,
        // and output blocks that do not fill it
        (64, 8, [3, 3], "4=1 9=1"),
        (128, 12, [3, 3], "3=2 4=1 9=2 -23310=1,0.1"),
        (256, 36, [1, 1], ""),
        // the GEMM's narrow tile (more than 64 outputs), whole and split
        (32, 72, [3, 3], "4=1 9=1"),
        (128, 80, [3, 3], "4=1"),
        // channels padded to whole blocks for the GEMM: an RGB stem, and two blocks
        (3, 64, [7, 7], "3=2 4=3 9=1"),
        (6, 16, [3, 3], "4=1"),
    ] {
        cases.push(([9, 8, 1, c], extra.to_string(), 1, outc, k));
    }
    // grouped and depthwise (ConvolutionDepthWise)
    for (c, outc, group, k, extra) in [
        (8, 8, 8, [3, 3], "4=1 9=1"),
        (12, 12, 12, [3, 3], "3=2 4=1"),
        (5, 5, 5, [5, 5], "4=-233"),
        (8, 16, 4, [3, 3], "4=1"),
        // groups of whole blocks of 4: the pack4 shader
        (16, 16, 2, [3, 3], "4=1 9=1"),
        (16, 24, 4, [1, 1], "3=2"),
        (6, 4, 2, [1, 1], ""),
    ] {
        cases.push(([9, 8, 1, c], extra.to_string(), group, outc, k));
    }
    // depthwise over several shared-memory tiles (16 x 8 outputs each): stride 1; stride and
    // dilation 2 (the largest window the tile stages); and a reach past it (the direct shader)
    for (shape, extra, k) in [
        ([37, 19, 1, 8], "4=1 9=1", [3, 3]),
        ([37, 19, 1, 8], "2=2 12=2 3=2 13=2 4=2", [3, 3]),
        ([20, 11, 1, 8], "4=3 9=2 -23310=1,0.1", [7, 7]),
    ] {
        cases.push((shape, extra.to_string(), 8, 8, k));
    }
    // the GEMM's big tile (at least 8192 positions, more than 64 outputs), whole and with its
    // steps split over 2 and 4 slices
    cases.push(([96, 96, 1, 4], "4=1 9=1".to_string(), 1, 68, [3, 3]));
    cases.push(([92, 92, 1, 16], "4=1 9=1".to_string(), 1, 72, [3, 3]));
    cases.push(([91, 91, 1, 32], "4=1".to_string(), 1, 72, [3, 3]));
    cases
}

/// The one-layer model and `.bin` of a convolution case (random weights and bias).
fn convolution_model(
    rng: &mut Rng,
    (shape, extra, group, outc, [kw, kh]): &ConvCase,
) -> (String, Vec<u8>) {
    let c = shape[3];
    let size = outc * (c / group) * kw * kh;
    let bias = !extra.contains("5=0");
    let kind = if *group > 1 {
        "ConvolutionDepthWise"
    } else {
        "Convolution"
    };
    let mut params = format!("0={outc} 1={kw} 11={kh} 6={size} {extra}");
    if bias {
        params += " 5=1";
    }
    if *group > 1 {
        params += &format!(" 7={group}");
    }
    let (w, b) = (rng.vec(size), rng.vec(*outc));
    let mut parts: Vec<(&[f32], bool)> = vec![(&w, true)];
    if bias {
        parts.push((&b, false));
    }
    (one_layer(kind, &["data"], &params), bin(&parts))
}

#[test]
fn convolution_matches_ncnn_in_every_mode() {
    let mut rng = Rng(101);
    for case in convolution_cases() {
        let (param, weights) = convolution_model(&mut rng, &case);
        let x = Input::new(&mut rng, "data", 3, case.0);
        check_layer(&param, &param, &weights, &[x]);
    }
}

/// Convolution on the GPU (buffer nets): the pack1 shader (any groups) and the pack4 ones
/// (dense, depthwise), every kernel, stride, dilation, pad mode and activation of the ncnn cases.
#[test]
fn convolution_runs_on_the_gpu_in_every_mode() {
    let mut rng = Rng(103);
    for case in convolution_cases() {
        let (param, weights) = convolution_model(&mut rng, &case);
        let x = Input::new(&mut rng, "data", 3, case.0);
        let kind = if case.2 > 1 {
            "ConvolutionDepthWise"
        } else {
            "Convolution"
        };
        check_gpu_with(&param, &param, &weights, &[x], &[kind], true);
    }
}

/// Dense pack4 convolutions run on tensor cores (`convolution_gemm_cm`) exactly where the
/// context has cooperative matrices and the blobs are fp16, on the FMA GEMM everywhere else:
/// every case of [`convolution_cases`] checks the results of either on the contexts at hand.
/// `FPSHADER_REQUIRE_COOPMAT` (set on machines that have them) makes a context without them
/// fail the test.
#[test]
fn convolution_takes_cooperative_matrices_where_the_device_has_them() {
    let mut rng = Rng(107);
    let case: ConvCase = ([40, 30, 1, 16], "4=1 9=1".to_string(), 1, 72, [3, 3]);
    let (param, weights) = convolution_model(&mut rng, &case);
    let x = Input::new(&mut rng, "data", 3, case.0);
    let fp16 = RunOptions {
        use_packing_layout: true,
        use_fp16_packed: true,
        use_fp16_storage: true,
        ..RunOptions::fp32()
    };
    let require = std::env::var_os("FPSHADER_REQUIRE_COOPMAT").is_some();
    for ctx in gpu_contexts() {
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
        for (opt, tensor_cores) in [
            (fp16, ctx.cooperative_matrix()),
            (
                RunOptions {
                    use_cooperative_matrix: false,
                    ..fp16
                },
                false,
            ),
            (
                RunOptions {
                    use_packing_layout: true,
                    ..RunOptions::fp32()
                },
                false,
            ),
        ] {
            let input = std::slice::from_ref(&x);
            run_net(&param, &weights, input, "out", opt, Some(ctx.clone())).unwrap();
            let shaders: Vec<String> = ctx.take_timings().into_iter().map(|t| t.shader).collect();
            let want = if tensor_cores {
                "convolution_gemm_cm"
            } else {
                "convolution_gemm"
            };
            assert!(
                shaders.iter().any(|s| s == want)
                    && !shaders
                        .iter()
                        .any(|s| s.contains("gemm") && s != want && !s.ends_with("_sum")),
                "{}, {opt:?}: ran {shaders:?}, expected {want}",
                ctx.describe()
            );
        }
        ctx.set_timing(false);
    }
}

/// One net, one GPU context, inputs of three shapes in turn and the first again: the shapes
/// fold into each forward's pipelines (`psc()`), so a pipeline cached for one shape must never
/// serve another. Dense (the GEMM, split and whole), depthwise (shared-memory tiles) and pack1.
#[test]
fn convolution_pipelines_follow_the_input_shape() {
    let mut rng = Rng(113);
    let cases: [ConvCase; 3] = [
        ([0, 0, 1, 64], "4=1 9=1".to_string(), 1, 8, [3, 3]),
        ([0, 0, 1, 8], "4=1 9=1".to_string(), 8, 8, [3, 3]),
        ([0, 0, 1, 3], "3=2 4=1".to_string(), 1, 5, [3, 3]),
    ];
    for case in cases {
        let (param, weights) = convolution_model(&mut rng, &case);
        let c = case.0[3];
        let inputs: Vec<Input> = [[9, 8], [40, 33], [17, 5], [9, 8]]
            .into_iter()
            .map(|[w, h]| Input::new(&mut rng, "data", 3, [w, h, 1, c]))
            .collect();
        let want: Vec<Vec<f32>> = inputs
            .iter()
            .map(|x| {
                run_net(
                    &param,
                    &weights,
                    std::slice::from_ref(x),
                    "out",
                    RunOptions::fp32(),
                    None,
                )
                .unwrap()
                .to_values()
            })
            .collect();
        for ctx in gpu_contexts() {
            let mut net = Net::new();
            net.opt = RunOptions {
                use_packing_layout: true,
                ..RunOptions::fp32()
            };
            net.set_context(ctx.clone());
            net.load_param_str("shapes", &param).unwrap();
            net.load_model_bytes(&weights).unwrap();
            for (x, want) in inputs.iter().zip(&want) {
                let mut ex = net.create_extractor().unwrap();
                ex.input("data", x.mat()).unwrap();
                let got = ex.extract("out").unwrap().to_values();
                let what = format!("{param} on {:?}, {}", x.shape, ctx.describe());
                assert_close(&got, want, 1e-3, &what);
            }
        }
    }
}

/// Deconvolution cases: input `[w, h, 1, c]`, params without weight size, groups, outputs,
/// kernel: strides, dilations, explicit pads, output pads, output sizes with "same" cuts,
/// activations, grouped and depthwise.
fn deconvolution_cases() -> Vec<ConvCase> {
    [
        (3, 4, [3, 3], "3=2", 1),
        (4, 5, [4, 4], "3=2 4=1 9=1", 1),
        (5, 3, [3, 2], "2=2 13=2 4=0 15=1 14=1 16=2", 1),
        (4, 4, [3, 3], "3=2 18=1 9=2 -23310=1,0.1", 1),
        (6, 6, [3, 3], "3=2 4=-233 20=17 21=15", 1),
        (
            6,
            4,
            [2, 2],
            "3=2 4=-234 20=16 21=14 9=3 -23310=2,-0.5,0.5",
            1,
        ),
        (8, 8, [3, 3], "3=2 4=1", 8),
        (8, 12, [3, 3], "9=4", 4),
    ]
    .into_iter()
    .map(|(c, outc, k, extra, group)| ([9, 8, 1, c], extra.to_string(), group, outc, k))
    .collect()
}

#[test]
fn deconvolution_matches_ncnn_on_the_cpu_and_the_gpu() {
    let mut rng = Rng(109);
    for case in deconvolution_cases() {
        let (param, weights) = convolution_model(&mut rng, &case);
        let param = param.replace("Convolution", "Deconvolution");
        let x = Input::new(&mut rng, "data", 3, case.0);
        check_layer(&param, &param, &weights, std::slice::from_ref(&x));
        let kind = if case.2 > 1 {
            "DeconvolutionDepthWise"
        } else {
            "Deconvolution"
        };
        check_gpu_with(&param, &param, &weights, &[x], &[kind], true);
    }
}

#[test]
fn interp_matches_ncnn_on_the_cpu_and_the_gpu() {
    let mut rng = Rng(113);
    let planes = [
        "0=1 1=2 2=2",
        "0=1 3=5 4=7",
        "0=1 1=1.5 2=0.5",
        "0=2 1=2 2=2",
        "0=2 3=13 4=11 6=1",
        "0=2 3=4 4=5",
        "0=3 1=2 2=2",
        "0=3 3=17 4=6",
        "0=3 3=5 4=13 6=1",
        "0=2 1=1.5 2=1.5",
        "0=3 1=0.7 2=1.3",
        "0=2 1=1.5 2=2.5 6=1",
    ];
    let cases: Vec<(u8, [usize; 4], &str)> = planes
        .iter()
        .map(|p| (3, [9, 8, 1, 5], *p))
        .chain([
            (2, [9, 4, 1, 1], "0=2 2=1.5"),
            (2, [9, 4, 1, 1], "0=1 4=13"),
            (2, [9, 4, 1, 1], "0=3 4=17"),
            (1, [6, 1, 1, 1], "0=1 3=3 4=4"),
        ])
        .collect();
    check_cases(&mut rng, "Interp", &cases);
    for p in planes {
        let x = Input::new(&mut rng, "data", 3, [9, 8, 1, 8]);
        let param = one_layer("Interp", &["data"], p);
        check_gpu_with(&format!("Interp {p}"), &param, &[], &[x], &["Interp"], true);
    }
}

#[test]
fn lrn_matches_ncnn_across_and_within_channels() {
    let mut rng = Rng(107);
    let cases = [
        "0=0 1=5 2=0.0001 3=0.75 4=1",
        "0=0 1=3 2=0.5 3=0.5 4=2",
        "0=1 1=3 2=0.5 3=0.75 4=1",
        "0=1 1=4 2=1 3=0.6 4=1.5",
    ]
    .map(|p| (3, [7, 6, 1, 9], p));
    check_cases(&mut rng, "LRN", &cases);
    for (_, shape, params) in cases {
        let x = Input::new(&mut rng, "data", 3, shape);
        check_gpu_with(
            &format!("LRN {params}"),
            &one_layer("LRN", &["data"], params),
            &[],
            &[x],
            &["LRN"],
            true,
        );
    }
}

/// A convolution's bad input is a typed error naming the layer: weights the `.bin` lacks, a
/// kernel larger than the input, groups that do not divide the channels, a weight count that
/// fits no kernel.
#[test]
fn convolution_bad_input_is_a_typed_error() {
    let mut rng = Rng(109);
    let x = || Input::new(&mut Rng(110), "data", 3, [6, 6, 1, 4]);
    let w = rng.vec(8 * 4 * 9);
    let param = one_layer("Convolution", &["data"], "0=8 1=3 6=288");
    // the .bin ends before the weights do
    let short = bin(&[(&w[..100], true)]);
    let err = run_net(&param, &short, &[x()], "out", RunOptions::fp32(), None).unwrap_err();
    assert!(matches!(err, Error::Weights { .. }), "{err}");
    // a 7x7 kernel on a 6x6 input, no padding
    let w7 = rng.vec(8 * 4 * 49);
    let param7 = one_layer("Convolution", &["data"], "0=8 1=7 6=1568");
    let err = run_net(
        &param7,
        &bin(&[(&w7, true)]),
        &[x()],
        "out",
        RunOptions::fp32(),
        None,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("larger than the padded input"),
        "{err}"
    );
    // 3 groups of 4 channels
    let param3 = one_layer("ConvolutionDepthWise", &["data"], "0=6 1=3 6=72 7=3");
    let err = run_net(
        &param3,
        &bin(&[(&rng.vec(72), true)]),
        &[x()],
        "out",
        RunOptions::fp32(),
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("fit"), "{err}");
    // a weight count that is not outputs x kernel x something
    let bad = one_layer("Convolution", &["data"], "0=8 1=3 6=100");
    let err = run_net(&bad, &[], &[x()], "out", RunOptions::fp32(), None).unwrap_err();
    assert!(err.to_string().contains("weight_data_size"), "{err}");
}
