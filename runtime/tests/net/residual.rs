//! Residual sums folded into the convolution before them on the device: a convolution whose
//! output only an Eltwise sum or a BinaryOp add reads, with the other addend on the device
//! already, adds it in its epilogue, and the activation after the sum too (the GEMM's
//! epilogue, or the pass adding split slices; Winograd's output transform; the direct pack4
//! shaders' of grouped and depthwise layers); the CPU's outputs. Where the convolution cannot
//! (an activation of its own), the sum has coefficients, or the blob between is asked for, the
//! sum runs by itself, with the same outputs.

use super::*;

/// One case: the second convolution's channels (in and out), groups (1: Convolution, else
/// ConvolutionDepthWise), kernel, the map's side, its own activation (`9=`), the sum's line
/// after its blobs, whether the other addend comes first, and whether the sum folds in.
struct Case {
    c: usize,
    group: usize,
    k: usize,
    side: [usize; 2],
    own_act: i32,
    sum: &'static str,
    other_first: bool,
    folds: bool,
    /// A 3-D case's depth (Convolution3D over a 4-D blob); 0 for 2-D.
    depth: usize,
}

/// Input x (`c` channels) → 1×1 convolution `c0` → Split → `c1` (`k`×`k`, same padding) and
/// the sum of `c1`'s output with the split's other top → ReLU: the param and the weights.
fn net(rng: &mut Rng, case: &Case) -> (String, Vec<u8>) {
    let (c, k, g) = (case.c, case.k, case.group);
    let conv = match (g, case.depth) {
        (1, 0) => "Convolution".to_string(),
        (1, _) => "Convolution3D".to_string(),
        (g, _) => format!("ConvolutionDepthWise 7={g}"),
    };
    // a 3-D case's kernels are cubes, its 1×1 layer a Convolution3D too
    let (taps, c0) = match case.depth {
        0 => (k * k, "Convolution"),
        _ => (k * k * k, "Convolution3D"),
    };
    let (kind, group) = conv.split_once(' ').unwrap_or((&conv, ""));
    let (sum, params) = case.sum.split_once(' ').unwrap_or((case.sum, ""));
    let addends = if case.other_first { "y1 z" } else { "z y1" };
    let param = format!(
        "7767517\n6 7\nInput in 0 1 x\n{c0} c0 1 1 x y 0={c} 1=1 5=1 6={}\n\
         Split sp 1 2 y y0 y1\n{kind} c1 1 1 y0 z 0={c} 1={k} 4={} 5=1 6={} 9={} {group}\n\
         {sum} s 2 1 {addends} w {params}\nReLU r 1 1 w v\n",
        c * c,
        k / 2,
        c * c / g * taps,
        case.own_act,
    );
    let scale = 1.0 / (c / g * taps) as f32;
    let kernel1: Vec<f32> = (rng.vec(c * c / g * taps).iter())
        .map(|v| v * scale)
        .collect();
    let weights = bin(&[
        (&rng.vec(c * c), true),
        (&rng.vec(c), false),
        (&kernel1, true),
        (&rng.vec(c), false),
    ]);
    (param, weights)
}

#[test]
fn residual_sums_run_in_the_convolution_before_them() {
    let mut rng = Rng(4201);
    let plain = |c, k, side| Case {
        c,
        group: 1,
        k,
        side,
        own_act: 0,
        sum: "Eltwise 0=1",
        other_first: false,
        folds: true,
        depth: 0,
    };
    let cases = [
        // the GEMM in one pass, as resnet's 1×1 expansions
        plain(8, 1, [12, 10]),
        // steps split over 32 slices: the sum pass adds the residual
        plain(256, 3, [4, 4]),
        Case {
            sum: "BinaryOp 0=0",
            other_first: true,
            ..plain(16, 1, [9, 7])
        },
        Case {
            sum: "Eltwise 0=1 -23301=2,1.0,1.0",
            ..plain(8, 1, [6, 5])
        },
        // grouped (the direct pack4 shader) and depthwise (its tiled form where local memory
        // is on)
        Case {
            group: 2,
            ..plain(16, 1, [9, 7])
        },
        Case {
            group: 8,
            ..plain(8, 3, [11, 9])
        },
        // a 3-D convolution's GEMM (Convolution3D over a 4-D blob)
        Case {
            depth: 5,
            ..plain(8, 3, [7, 6])
        },
        // Winograd (2-D, and 3-D per depth slab): its output transform adds the residual
        plain(16, 3, [20, 18]),
        Case {
            depth: 4,
            ..plain(16, 3, [20, 18])
        },
        // not folded: the layer's own ReLU, a weighted sum
        Case {
            own_act: 1,
            folds: false,
            ..plain(8, 1, [12, 10])
        },
        Case {
            sum: "Eltwise 0=1 -23301=2,1.0,0.5",
            folds: false,
            ..plain(8, 1, [12, 10])
        },
    ];
    for ctx in gpu_contexts() {
        ctx.set_timing(true);
        for case in &cases {
            let (param, weights) = net(&mut rng, case);
            let [w, h] = case.side;
            let x = [match case.depth {
                0 => Input::new(&mut rng, "x", 3, [w, h, 1, case.c]),
                d => Input::new(&mut rng, "x", 4, [w, h, d, case.c]),
            }];
            let fp32 = RunOptions {
                use_packing_layout: true,
                ..RunOptions::fp32()
            };
            for (class, opt, eps) in [("fp32", fp32, 1e-3), ("fp16", RunOptions::default(), 3e-2)] {
                for out in ["v", "w", "z"] {
                    let what = format!(
                        "{} after {}×{} on {} in {} groups, {class}, {out}, {}",
                        case.sum,
                        case.k,
                        case.k,
                        case.c,
                        case.group,
                        ctx.describe()
                    );
                    let want = run_net(&param, &weights, &x, out, opt, None).unwrap();
                    ctx.take_timings();
                    let (got, record) =
                        run_net_recorded(&param, &weights, &x, out, opt, Some(ctx.clone()))
                            .unwrap_or_else(|e| panic!("{what}: {}", e.report()));
                    assert_close(&got.to_values(), &want.to_values(), eps, &what);
                    let shaders: Vec<String> =
                        ctx.take_timings().into_iter().map(|t| t.shader).collect();
                    // the 3×3 layers of 16 channels over 16² and more take Winograd
                    let winograd = case.group == 1
                        && case.k == 3
                        && case.c >= 16
                        && case.side.iter().all(|&s| s >= 16);
                    let transformed = shaders.iter().any(|s| s == "convolution_winograd43_output");
                    assert_eq!(transformed, winograd, "{what}: {shaders:?}");
                    let sum_ran = (shaders.iter())
                        .any(|s| s.starts_with("eltwise") || s.starts_with("binaryop"));
                    // asked for, the convolution's own output is made, and no sum runs
                    let folds = case.folds && out != "z";
                    assert_eq!(sum_ran, !folds && out != "z", "{what}: {shaders:?}");
                    // the ReLU folds in too where its output is asked for (into the sum
                    // where the sum runs by itself)
                    let fused = record.fused_layers().len();
                    let expected = usize::from(folds) + usize::from(out == "v");
                    assert_eq!(fused, expected, "{what}: {:?}", record.layers);
                }
            }
        }
    }
}
