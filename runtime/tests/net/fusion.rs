//! Activation layers folded into the layer before them on the device: each activation ncnn's
//! epilogue has (and Swish, which only the net fuses) after dense pack4 (GEMM and Winograd),
//! depthwise and pack1 convolutions runs in the convolution's dispatch, after an Eltwise in its
//! last step and after a BinaryOp of two blobs in its dispatch, with the CPU's outputs; where
//! the blob between them is asked for, or the convolution has an activation of its own, the
//! activation layer runs by itself.

use super::*;

/// `(layer line's type and params)` of each activation the epilogue takes.
const ACTIVATIONS: [&str; 7] = [
    "ReLU",
    "ReLU 0=0.1",
    "Clip 0=-0.2 1=0.3",
    "Sigmoid",
    "Mish",
    "HardSwish 0=0.2 1=0.5",
    "Swish",
];

/// Input (`c` channels of 12 × 10) → convolution `conv` (its param tail) → activation `act`:
/// the param and the weights.
fn net(rng: &mut Rng, conv: (&str, usize, usize, usize), act: &str) -> (String, Vec<u8>) {
    let (kind, c, outc, k) = conv;
    let group = if kind == "ConvolutionDepthWise" { c } else { 1 };
    let n = outc * c / group * k * k;
    let tail = format!("0={outc} 1={k} 4={} 5=1 6={n}", k / 2);
    let tail = match group {
        1 => tail,
        g => format!("{tail} 7={g}"),
    };
    let (act_kind, act_params) = act.split_once(' ').unwrap_or((act, ""));
    let param = format!(
        "7767517\n3 3\nInput in 0 1 x\n{kind} conv 1 1 x y {tail}\n\
         {act_kind} act 1 1 y z {act_params}\n"
    );
    let weights = bin(&[(&rng.vec(n), true), (&rng.vec(outc), false)]);
    (param, weights)
}

/// fp32 with packing: the pack4 shaders in fp32.
fn packed32() -> RunOptions {
    RunOptions {
        use_packing_layout: true,
        ..RunOptions::fp32()
    }
}

/// `param` (weights `weights`) on the CPU and on `ctx` with `opt`, blob `out` of each within
/// `eps` of the other; the shaders the device ran. The run's record must list an activation
/// layer as fused exactly where `out` is the activation's and no activation shader ran.
fn gpu_against_cpu(
    ctx: &Arc<fpshader::Context>,
    (param, weights): (&str, &[u8]),
    inputs: &[Input],
    (out, opt, eps): (&str, RunOptions, f32),
    what: &str,
) -> Vec<String> {
    let want = run_net(param, weights, inputs, out, opt, None).unwrap();
    ctx.take_timings();
    let (got, record) = run_net_recorded(param, weights, inputs, out, opt, Some(ctx.clone()))
        .unwrap_or_else(|e| panic!("{what}: {}", e.report()));
    assert_close(
        &got.to_values(),
        &want.to_values(),
        eps,
        &format!("{what}: {out}"),
    );
    let shaders: Vec<String> = ctx.take_timings().into_iter().map(|t| t.shader).collect();
    let fused = !record.fused_layers().is_empty();
    let expected = out == "z" && !activation_alone(&shaders);
    assert_eq!(fused, expected, "{what}: {:?}, {shaders:?}", record.layers);
    shaders
}

/// Whether `shaders` has a dispatch of the activation alone.
fn activation_alone(shaders: &[String]) -> bool {
    shaders.iter().any(|s| s.starts_with("unaryop"))
}

/// The classes each case runs in: fp32 packed and fp16 (the default options), with their
/// tolerances.
fn classes(eps16: f32) -> [(&'static str, RunOptions, f32); 2] {
    [
        ("fp32", packed32(), 1e-4),
        ("fp16", RunOptions::default(), eps16),
    ]
}

#[test]
fn activations_after_convolutions_run_in_their_dispatch() {
    let mut rng = Rng(4099);
    // GEMM, Winograd (3×3 on 8 channels to 16 over a map this size), depthwise, pack1
    let convs = [
        ("Convolution", 8, 8, 1),
        ("Convolution", 16, 16, 3),
        ("ConvolutionDepthWise", 8, 8, 3),
        ("Convolution", 3, 5, 3),
    ];
    for ctx in gpu_contexts() {
        ctx.set_timing(true);
        for conv in convs {
            for act in ACTIVATIONS {
                let (param, weights) = net(&mut rng, conv, act);
                let x = [Input::new(&mut rng, "x", 3, [12, 10, 1, conv.1])];
                for (name, opt, eps) in classes(2e-2) {
                    let what = format!("{conv:?} + {act}, {name}, {}", ctx.describe());
                    let model = (param.as_str(), &weights[..]);
                    let shaders = gpu_against_cpu(&ctx, model, &x, ("z", opt, eps), &what);
                    assert!(!activation_alone(&shaders), "{what}: {shaders:?}");
                    // asked for, the blob between them is the convolution's own output
                    let shaders = gpu_against_cpu(&ctx, model, &x, ("y", opt, eps), &what);
                    assert!(!shaders.is_empty(), "{what}: no dispatch timed");
                }
            }
        }
        // a convolution with an activation of its own keeps the layer after it
        let (param, weights) = net(&mut rng, ("Convolution", 8, 8, 1), "Sigmoid");
        let param = param.replace("6=64", "6=64 9=1");
        let x = [Input::new(&mut rng, "x", 3, [12, 10, 1, 8])];
        let what = format!("ReLU'd convolution + Sigmoid, {}", ctx.describe());
        let model = (param.as_str(), &weights[..]);
        let shaders = gpu_against_cpu(&ctx, model, &x, ("z", packed32(), 1e-4), &what);
        assert!(activation_alone(&shaders), "{what}: {shaders:?}");
    }
}

/// Eltwise (a sum with coefficients, a product, three inputs) with the activation after it in
/// its last step: no activation dispatch, the CPU's outputs.
#[test]
fn activations_after_eltwise_run_in_its_last_step() {
    let mut rng = Rng(4111);
    let cases = [
        ("0=1 -23301=2,2,0.5", 2, "ReLU"),
        ("0=0", 2, "Sigmoid"),
        ("0=1 -23301=3,2,0.5,-1", 3, "Clip 0=-0.2 1=0.3"),
        ("0=2", 3, "Swish"),
    ];
    for ctx in gpu_contexts() {
        ctx.set_timing(true);
        for (params, n, act) in cases {
            let names = ["a", "b", "c"];
            let mut param = format!("7767517\n{} {}\n", n + 2, n + 2);
            for name in &names[..n] {
                param += &format!("Input in_{name} 0 1 {name}\n");
            }
            param += &format!("Eltwise e {n} 1 {} s {params}\n", names[..n].join(" "));
            let (act_kind, act_params) = act.split_once(' ').unwrap_or((act, ""));
            param += &format!("{act_kind} act 1 1 s z {act_params}\n");
            let inputs: Vec<Input> = (names[..n].iter())
                .map(|name| Input::new(&mut rng, name, 3, [9, 7, 1, 8]))
                .collect();
            for (name, opt, eps) in classes(1e-2) {
                let what = format!(
                    "Eltwise {params} of {n} + {act}, {name}, {}",
                    ctx.describe()
                );
                let shaders = gpu_against_cpu(&ctx, (&param, &[]), &inputs, ("z", opt, eps), &what);
                let steps = shaders.iter().filter(|s| s.starts_with("eltwise")).count();
                assert_eq!(steps, n - 1, "{what}: {shaders:?}");
                assert!(!activation_alone(&shaders), "{what}: {shaders:?}");
            }
        }
    }
}

/// BinaryOp of two blobs (equal shapes through the flat shader, a per-channel and a row
/// broadcast through the packed ones, a broadcast the shaders lack through the stretch) with
/// the activation after it in the op's dispatch: no activation dispatch, the CPU's outputs.
#[test]
fn activations_after_binaryop_run_in_its_dispatch() {
    let mut rng = Rng(4127);
    /// `(op_type, a's shape, b's dims and shape, the activation)`.
    type Case = (i32, [usize; 4], (u8, [usize; 4]), &'static str);
    let cases: [Case; 4] = [
        (0, [9, 7, 1, 8], (3, [9, 7, 1, 8]), "ReLU"),
        (2, [9, 7, 1, 8], (3, [1, 1, 1, 8]), "Sigmoid"),
        (1, [9, 7, 1, 8], (1, [9, 1, 1, 1]), "HardSwish 0=0.2 1=0.5"),
        (4, [6, 5, 1, 8], (3, [1, 5, 1, 1]), "ReLU 0=0.1"),
    ];
    for ctx in gpu_contexts() {
        ctx.set_timing(true);
        for (op, a, (b_dims, b), act) in cases {
            let (act_kind, act_params) = act.split_once(' ').unwrap_or((act, ""));
            let param = format!(
                "7767517\n4 4\nInput in_a 0 1 a\nInput in_b 0 1 b\nBinaryOp op 2 1 a b s 0={op}\n\
                 {act_kind} act 1 1 s z {act_params}\n"
            );
            let inputs = [
                Input::new(&mut rng, "a", 3, a),
                Input::new(&mut rng, "b", b_dims, b),
            ];
            for (name, opt, eps) in classes(1e-2) {
                let what = format!(
                    "BinaryOp {op} {a:?} {b:?} + {act}, {name}, {}",
                    ctx.describe()
                );
                let shaders = gpu_against_cpu(&ctx, (&param, &[]), &inputs, ("z", opt, eps), &what);
                let ran = shaders.iter().any(|s| s.starts_with("binaryop"));
                assert!(ran && !activation_alone(&shaders), "{what}: {shaders:?}");
            }
        }
    }
}
