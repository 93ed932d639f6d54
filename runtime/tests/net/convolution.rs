//! The convolution family, Interp and LRN against ncnn on the CPU and the GPU, and their typed errors.

use super::*;

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
        // pack4 in, outputs not in whole blocks (an SSD head's): the GEMM into blocks of 4,
        // then unpacked
        (8, 7, [3, 3], "4=1 9=1"),
        (32, 42, [1, 1], "9=2 -23310=1,0.1"),
        (64, 126, [3, 3], "4=1"),
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

/// fp16 storage in packed layouts: the blobs the tensor-core GEMM takes.
fn fp16_packed() -> RunOptions {
    RunOptions {
        use_packing_layout: true,
        use_fp16_packed: true,
        use_fp16_storage: true,
        ..RunOptions::fp32()
    }
}

/// A case's model and a random input, with the CPU's fp32 output for it.
fn with_cpu_output(rng: &mut Rng, case: &ConvCase) -> (String, Vec<u8>, Input, Vec<f32>) {
    let (param, weights) = convolution_model(rng, case);
    let x = Input::new(rng, "data", 3, case.0);
    let want = run_net(
        &param,
        &weights,
        std::slice::from_ref(&x),
        "out",
        RunOptions::fp32(),
        None,
    )
    .unwrap()
    .to_values();
    (param, weights, x, want)
}

/// Dense pack4 convolutions run on tensor cores (`convolution_gemm_cm`) exactly where the
/// context has cooperative matrices and the blobs are fp16, on the FMA GEMM everywhere else,
/// and match the CPU: 72 outputs (a partial block of outputs) and 3 outputs over 40000 positions
/// (a pack1 output). `FPSHADER_REQUIRE_COOPMAT` (set on machines that have
/// them) makes a context without them fail the test.
#[test]
fn convolution_takes_cooperative_matrices_where_the_device_has_them() {
    let mut rng = Rng(107);
    let cases: [ConvCase; 2] = [
        ([40, 30, 1, 16], "4=1 9=1".to_string(), 1, 72, [3, 3]),
        ([200, 200, 1, 16], "4=1".to_string(), 1, 3, [3, 3]),
    ];
    let fp16 = fp16_packed();
    let contexts = gpu_contexts();
    for case in cases {
        let (param, weights, x, want) = with_cpu_output(&mut rng, &case);
        let input = std::slice::from_ref(&x);
        for ctx in &contexts {
            time_tensor_core_context(ctx);
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
                let what = format!("{} outputs, {opt:?}, {}", case.3, ctx.describe());
                let got = run_net(&param, &weights, input, "out", opt, Some(ctx.clone())).unwrap();
                assert_close(&got.to_values(), &want, 0.05, &what);
                let shaders: Vec<String> =
                    ctx.take_timings().into_iter().map(|t| t.shader).collect();
                let gemm = if tensor_cores {
                    "convolution_gemm_cm"
                } else {
                    "convolution_gemm"
                };
                assert!(
                    shaders.iter().any(|s| s == gemm)
                        && !shaders
                            .iter()
                            .any(|s| s.contains("gemm") && s != gemm && !s.ends_with("_sum")),
                    "{what}: ran {shaders:?}, expected {gemm}"
                );
            }
            ctx.set_timing(false);
        }
    }
}

/// A pack4 input to one block of outputs (an upscaler's RGB) over at least 256² positions
/// takes the direct pack4-to-pack1 shader, not the GEMM into blocks (which the 200² case above
/// keeps), and matches the CPU on every context, with and without tensor cores: 3 outputs with
/// an activation on a width that is not a multiple of the shader's 4 positions, 2 of stride 2
/// over 30 input blocks with a pad value, 1 of a 1×1 kernel.
#[test]
fn an_rgb_output_over_a_large_map_takes_the_direct_shader() {
    let mut rng = Rng(114);
    let cases: [ConvCase; 3] = [
        (
            [259, 256, 1, 16],
            "4=1 9=2 -23310=1,0.1".to_string(),
            1,
            3,
            [3, 3],
        ),
        (
            [516, 516, 1, 120],
            "3=2 4=1 18=0.5".to_string(),
            1,
            2,
            [3, 3],
        ),
        ([256, 256, 1, 8], String::new(), 1, 1, [1, 1]),
    ];
    let packed = RunOptions {
        use_packing_layout: true,
        ..RunOptions::fp32()
    };
    let contexts = gpu_contexts();
    for case in cases {
        let (param, weights, x, want) = with_cpu_output(&mut rng, &case);
        let input = std::slice::from_ref(&x);
        for ctx in &contexts {
            ctx.set_timing(true);
            for opt in [fp16_packed(), packed] {
                let what = format!("{} outputs, {opt:?}, {}", case.3, ctx.describe());
                let got = run_net(&param, &weights, input, "out", opt, Some(ctx.clone())).unwrap();
                assert_close(&got.to_values(), &want, 0.05, &what);
                let shaders: Vec<String> =
                    ctx.take_timings().into_iter().map(|t| t.shader).collect();
                assert!(
                    shaders.iter().any(|s| s == "convolution_pack4to1")
                        && !shaders.iter().any(|s| s.contains("gemm")),
                    "{what}: ran {shaders:?}"
                );
            }
            ctx.set_timing(false);
        }
    }
}

/// The GPU Winograd's transforms split a tile's work over more invocations where a layer has
/// too few tiles × channel blocks to fill a large device, against the CPU, as many channels in
/// as out: 16 at 256² (one invocation per tile, a workgroup's 64 windows one row of tiles), 64
/// at 152 × 110 (one per tile, 38 to a row, the last window's fifth column inside the map: a
/// workgroup's windows over two rows) and at 151 × 109 (the last tile of a row and the last row
/// partly outside), 16 at 200² (two per input and per output tile), 150² (three per input
/// tile, four per output tile) and 40 × 36 (six and four).
#[test]
fn winograd_transforms_whole_and_split_match_the_cpu() {
    let mut rng = Rng(115);
    let packed = RunOptions {
        use_packing_layout: true,
        ..RunOptions::fp32()
    };
    let contexts = gpu_contexts();
    let shapes = [
        [256, 256, 16],
        [152, 110, 64],
        [151, 109, 64],
        [200, 200, 16],
        [150, 150, 16],
        [40, 36, 16],
    ];
    for [w, h, c] in shapes {
        let case: ConvCase = ([w, h, 1, c], "4=1".to_string(), 1, c, [3, 3]);
        let (param, weights, x, want) = with_cpu_output(&mut rng, &case);
        for ctx in &contexts {
            ctx.set_timing(true);
            let what = format!("{w} x {h}, {}", ctx.describe());
            let input = std::slice::from_ref(&x);
            let got = run_net(&param, &weights, input, "out", packed, Some(ctx.clone())).unwrap();
            assert_close(&got.to_values(), &want, 1e-3, &what);
            let shaders: Vec<String> = ctx.take_timings().into_iter().map(|t| t.shader).collect();
            assert!(
                shaders.iter().any(|s| s == "convolution_winograd43_input"),
                "{what}: ran {shaders:?}"
            );
            ctx.set_timing(false);
        }
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
            let net = load_net(
                &param,
                &weights,
                RunOptions {
                    use_packing_layout: true,
                    ..RunOptions::fp32()
                },
                Some(ctx.clone()),
            )
            .unwrap();
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
        // dense over blocks of 4: the pack4 shaders (pack4 out, and pack1 out for 3 outputs
        // as waifu2x's last layer, 4×4 stride 2 pad 3)
        (12, 8, [2, 2], "3=2 9=2 -23310=1,0.1", 1),
        (16, 3, [4, 4], "3=2 4=3", 1),
        (8, 8, [3, 3], "2=2 3=2 4=-233 20=20 21=18", 1),
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
            // test_interp_6 / _11: a 1-D input's values become planes of 1 × 1 times the
            // scales (17 planes of 3 × 2, not 51 × 2)
            (1, [17, 1, 1, 1], "0=1 1=2.0 2=3.0"),
            (1, [20, 1, 1, 1], "0=2 1=4.0 2=5.0"),
            (1, [48, 1, 1, 1], "0=3 1=6.0 2=7.0"),
            (1, [17, 1, 1, 1], "0=1 3=10 4=12"),
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
    assert!(
        matches!(err, Error::Model(ModelError::Weights { .. })),
        "{err}"
    );
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
        err.report().contains("larger than the padded input"),
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
    assert!(err.report().contains("fit"), "{err}");
    // a weight count that is not outputs x kernel x something
    let bad = one_layer("Convolution", &["data"], "0=8 1=3 6=100");
    let err = run_net(&bad, &[], &[x()], "out", RunOptions::fp32(), None).unwrap_err();
    assert!(err.report().contains("weight_data_size"), "{err}");
}
