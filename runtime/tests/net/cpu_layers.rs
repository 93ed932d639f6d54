//! Every layer on the CPU against ncnn's wheel, with the parameter sets of ncnn's tests.

use super::*;

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
                        int: false,
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

    // packed blobs (pack8 and pack4 from a Packing layer) through the per-channel layers
    for pack in [8, 4] {
        let c = 16;
        let (a, b, m) = (rng.vec(c), rng.vec(c), rng.vec(c));
        let v: Vec<f32> = rng.vec(c).iter().map(|v| v.abs() + 0.1).collect();
        for (kind, params, weights) in [
            (
                "BatchNorm",
                format!("0={c} 1=0.001"),
                bin(&[(&a, false), (&m, false), (&v, false), (&b, false)]),
            ),
            (
                "Scale",
                format!("0={c} 1=1"),
                bin(&[(&a, false), (&b, false)]),
            ),
            ("Bias", format!("0={c}"), bin(&[(&b, false)])),
            ("PReLU", format!("0={c}"), bin(&[(&a, false)])),
        ] {
            let param = format!(
                "7767517\n3 3\nInput in 0 1 data\nPacking pk 1 1 data p 0={pack}\n\
                 {kind} layer 1 1 p out {params}\n"
            );
            let x = Input::new(&mut rng, "data", 3, [5, 4, 1, c]);
            check_layer(&format!("{kind} on pack{pack}"), &param, &weights, &[x]);
        }
    }

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

/// Pooling windows in every pad mode, global and adaptive.
const POOLING_MODES: &[&str] = &[
    "1=2 2=2",
    "1=3 2=2 3=1",
    "1=3 2=2 5=1",
    "1=3 2=2 5=2",
    "1=3 2=2 5=3",
    "1=3 2=2 3=1 6=1",
    "1=3 11=2 2=1 12=2 3=1 13=0 14=0 15=1 5=1",
    "4=1",
    "7=1 8=3 18=2",
    // one window over the whole plane (resnet50's pool5)
    "1=7 11=6 2=1",
    // a stride past the plane: one window along each axis
    "1=3 2=1000 5=1",
];

#[test]
fn pooling_matches_ncnn_in_every_pad_mode() {
    let mut rng = Rng(13);
    for ty in [0, 1] {
        for params in POOLING_MODES {
            let x = Input::new(&mut rng, "data", 3, [7, 6, 1, 3]);
            let param = one_layer("Pooling", &["data"], &format!("0={ty} {params}"));
            check_layer(&format!("Pooling 0={ty} {params}"), &param, &[], &[x]);
        }
    }
}

/// Packed blobs (a Packing layer in front: pack8, and pack4, which no layer of ours makes on
/// x86) through the layers that take any packing on the CPU: Pooling in every pad mode, global
/// and adaptive, Eltwise on operands of one packing and of two, Concat, BinaryOp's per-channel
/// broadcasts; against ncnn's wheel.
#[test]
fn packed_blobs_pool_and_combine_as_ncnn() {
    let mut rng = Rng(19);
    for pack in [8, 4] {
        for ty in [0, 1] {
            for params in POOLING_MODES {
                let x = Input::new(&mut rng, "data", 3, [7, 6, 1, 16]);
                let param = format!(
                    "7767517\n3 3\nInput in 0 1 data\nPacking pk 1 1 data p 0={pack}\n\
                     Pooling layer 1 1 p out 0={ty} {params}\n"
                );
                let what = format!("Pooling 0={ty} {params} on pack{pack}");
                check_layer(&what, &param, &[], &[x]);
            }
        }
        for (op, second) in [(1, pack), (0, pack), (2, pack), (1, 1)] {
            let a = Input::new(&mut rng, "a", 3, [5, 4, 1, 24]);
            let b = Input::new(&mut rng, "b", 3, [5, 4, 1, 24]);
            let param = format!(
                "7767517\n5 5\nInput ia 0 1 a\nInput ib 0 1 b\nPacking pa 1 1 a pa 0={pack}\n\
                 Packing pb 1 1 b pb 0={second}\nEltwise layer 2 1 pa pb out 0={op}\n"
            );
            let what = format!("Eltwise 0={op} on pack{pack} and pack{second}");
            check_layer(&what, &param, &[], &[a, b]);
        }
        // Concat along the channels (blocks of one packing, or of two), and along h
        for (axis, second) in [(0, pack), (0, 1), (1, pack)] {
            let a = Input::new(&mut rng, "a", 3, [5, 4, 1, 16]);
            let b = Input::new(&mut rng, "b", 3, [5, 4, 1, 24]);
            let b = if axis == 1 {
                Input::new(&mut rng, "b", 3, [5, 3, 1, 16])
            } else {
                b
            };
            let param = format!(
                "7767517\n5 5\nInput ia 0 1 a\nInput ib 0 1 b\nPacking pa 1 1 a pa 0={pack}\n\
                 Packing pb 1 1 b pb 0={second}\nConcat layer 2 1 pa pb out 0={axis}\n"
            );
            let what = format!("Concat 0={axis} on pack{pack} and pack{second}");
            check_layer(&what, &param, &[], &[a, b]);
        }
        // a packed map and one value per channel (1-D, ncnn's per-channel broadcast, and
        // 1×1×c), either side of the operator
        for (op, shape, map_first) in [
            (2, [24, 1, 1, 1], true),
            (0, [24, 1, 1, 1], false),
            (1, [1, 1, 1, 24], true),
            (3, [1, 1, 1, 24], false),
        ] {
            let a = Input::new(&mut rng, "a", 3, [5, 4, 1, 24]);
            let dims = if shape[0] == 24 { 1 } else { 3 };
            let b = Input::new(&mut rng, "b", dims, shape);
            let (l, r) = if map_first { ("pa", "b") } else { ("b", "pa") };
            let param = format!(
                "7767517\n4 4\nInput ia 0 1 a\nInput ib 0 1 b\nPacking pa 1 1 a pa 0={pack}\n\
                 BinaryOp layer 2 1 {l} {r} out 0={op}\n"
            );
            let what = format!("BinaryOp 0={op} on pack{pack} and {shape:?} ({l} first)");
            check_layer(&what, &param, &[], &[a, b]);
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

/// A cast from fp32 to bf16 on the CPU rounds each fp32 value once, to the nearest bf16, with
/// the default options too (whose fp16 storage must not round the values first).
#[test]
fn cast_to_bf16_rounds_the_fp32_values_once() {
    let mut rng = Rng(42);
    let mut x = Input::new(&mut rng, "data", 1, [64, 1, 1, 1]);
    // halfway between two bf16 values once rounded to fp16: the case double rounding breaks
    x.values[0] = 1.120_670_6;
    let param = "7767517\n2 2\nInput data_in 0 1 data\nCast b 1 1 data out 0=1 1=4\n";
    for opt in [RunOptions::fp32(), RunOptions::default()] {
        let net = load_net(param, &[], opt, None).unwrap();
        let mut ex = net.create_extractor().unwrap();
        ex.input("data", x.mat()).unwrap();
        let got = ex.extract("out").unwrap().to_values();
        let want: Vec<f32> = x
            .values
            .iter()
            .map(|v| half::bf16::from_f32(*v).to_f32())
            .collect();
        assert_eq!(got, want);
    }
}
