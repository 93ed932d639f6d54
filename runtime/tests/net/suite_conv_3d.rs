//! ncnn's tests of the 3-D convolutions through the suite: test_convolution3d.cpp,
//! test_convolutiondepthwise3d.cpp, test_deconvolution3d.cpp and
//! test_deconvolutiondepthwise3d.cpp (every kernel/dilation/stride/pad row of their table over
//! their channels and groups, output pads and sizes), and inputs that do not fit as typed
//! errors.

use super::suite::*;
use super::*;

/// The four tests' kernel, dilation, stride, pad table.
const KDSP: [[i32; 4]; 7] = [
    [1, 1, 1, 0],
    [1, 1, 2, 0],
    [2, 1, 1, 1],
    [2, 1, 2, -233],
    [3, 1, 1, 1],
    [3, 1, 2, 1],
    [3, 2, 1, -234],
];

/// One layer over a `RandomMat(w, h, d, c)`: `(c, outch, group, bias)`, a table row, `extra`
/// params (output pads and sizes).
fn case(
    rng: &mut Rng,
    kind: &'static str,
    size: [usize; 3],
    (c, outch, group, bias): (usize, usize, usize, usize),
    [k, d, s, p]: [i32; 4],
    extra: &str,
) -> Case {
    let k3 = (k * k * k) as usize;
    let n = outch / group * (c / group) * k3 * group;
    let act = ACTIVATIONS[(c + outch + k as usize + group) % ACTIVATIONS.len()];
    let mut params = format!("0={outch} 1={k} 2={d} 3={s} 4={p} 5={bias} 6={n} {act} {extra}");
    if kind.contains("DepthWise") {
        params += &format!(" 7={group}");
    }
    let [w, h, dd] = size;
    let mut case = unary_case(rng, kind, &params, &[w, h, dd, c], RANDOM);
    case.weights = tagged_weights(rng, n, outch * bias);
    case
}

/// test_convolutiondepthwise3d.cpp's `(c, outch, bias, group)`.
const DEPTHWISE: [(usize, usize, usize, usize); 13] = [
    (1, 1, 1, 1),
    (2, 2, 0, 1),
    (2, 2, 1, 2),
    (3, 3, 0, 3),
    (4, 2, 1, 2),
    (4, 4, 0, 4),
    (7, 7, 1, 7),
    (8, 8, 0, 2),
    (8, 8, 1, 8),
    (12, 12, 0, 4),
    (15, 15, 1, 15),
    (16, 8, 0, 2),
    (16, 16, 1, 16),
];

#[test]
fn ncnn_convolution3d_tests() {
    let mut rng = Rng(3301);
    let mut group = Vec::new();
    for kdsp in KDSP {
        for (c, outch, bias) in [
            (1, 1, 1),
            (4, 13, 0),
            (13, 4, 1),
            (12, 12, 0),
            (8, 12, 1),
            (8, 13, 0),
            (13, 8, 1),
            (12, 16, 0),
            (15, 15, 0),
            (16, 16, 0),
        ] {
            let shape = (c, outch, 1, bias);
            group.push(case(
                &mut rng,
                "Convolution3D",
                [11, 10, 9],
                shape,
                kdsp,
                "",
            ));
        }
    }
    let mut cases = sample(group, 24);
    let mut group = Vec::new();
    for kdsp in KDSP {
        for (c, outch, bias, g) in DEPTHWISE {
            let shape = (c, outch, g, bias);
            let kind = "ConvolutionDepthWise3D";
            group.push(case(&mut rng, kind, [11, 10, 9], shape, kdsp, ""));
        }
    }
    cases.extend(sample(group, 24));
    check_suite(cases, false);
}

/// `output_pad_right, output_pad_bottom, output_pad_behind, output_w, output_h, output_d` as
/// params.
fn outputs(o: [i32; 6]) -> String {
    format!(
        "18={} 19={} 20={} 25={} 26={} 27={}",
        o[0], o[1], o[2], o[3], o[4], o[5]
    )
}

/// Whether ncnn makes an output: output sizes with neither positive nor "same" pads cut
/// nothing and make none (an error in both).
fn makes_output(pad: i32, o: [i32; 6]) -> bool {
    !(pad == 0 && o[3] > 0)
}

#[test]
fn ncnn_deconvolution3d_tests() {
    let mut rng = Rng(3302);
    let mut group = Vec::new();
    for kdsp in KDSP {
        // (c, outch, bias, output pads and sizes)
        for (c, outch, bias, o) in [
            (1, 1, 1, [0, 0, 0, 0, 0, 0]),
            (4, 13, 0, [1, 1, 1, 7, 6, 5]),
            (13, 4, 1, [1, 0, 0, 0, 0, 0]),
            (4, 8, 0, [0, 1, 0, 0, 0, 0]),
            (8, 4, 1, [0, 0, 0, 7, 6, 5]),
            (8, 13, 0, [2, 2, 2, 0, 0, 0]),
            (13, 8, 1, [2, 0, 2, 0, 0, 0]),
            (16, 16, 0, [0, 2, 0, 7, 6, 5]),
        ] {
            if makes_output(kdsp[3], o) {
                let shape = (c, outch, 1, bias);
                let kind = "Deconvolution3D";
                group.push(case(&mut rng, kind, [9, 8, 7], shape, kdsp, &outputs(o)));
            }
        }
    }
    let mut cases = sample(group, 20);
    let mut group = Vec::new();
    for kdsp in KDSP {
        for (c, outch, bias, g, o) in [
            (1, 1, 1, 1, [0, 0, 0, 0, 0, 0]),
            (2, 2, 0, 1, [1, 1, 1, 7, 6, 5]),
            (2, 2, 1, 2, [1, 0, 0, 0, 0, 0]),
            (3, 3, 0, 3, [0, 1, 0, 0, 0, 0]),
            (4, 2, 1, 2, [0, 0, 0, 7, 6, 5]),
            (4, 4, 0, 4, [2, 2, 2, 0, 0, 0]),
            (7, 7, 1, 7, [2, 0, 2, 0, 0, 0]),
            (8, 8, 0, 2, [0, 2, 0, 7, 6, 5]),
            (8, 8, 1, 8, [0, 0, 0, 0, 0, 0]),
            (12, 12, 0, 4, [3, 3, 3, 0, 0, 0]),
            (15, 15, 1, 15, [3, 0, 0, 7, 6, 5]),
            (16, 8, 0, 2, [0, 3, 3, 0, 0, 0]),
            (16, 16, 1, 16, [0, 0, 0, 0, 0, 0]),
        ] {
            if makes_output(kdsp[3], o) {
                let shape = (c, outch, g, bias);
                let kind = "DeconvolutionDepthWise3D";
                group.push(case(&mut rng, kind, [15, 11, 7], shape, kdsp, &outputs(o)));
            }
        }
    }
    cases.extend(sample(group, 20));
    check_suite(cases, false);
}

#[test]
fn three_d_convolutions_refuse_what_does_not_fit() {
    // (numpy shapes) a 3-D input, channels that are not the weights', a kernel past the
    // padded depth
    let planes = layer_error("Convolution3D", "0=4 1=3 6=216", &[("x", &[2, 5, 5])]);
    assert!(planes.contains("4-D"), "{planes}");
    let channels = layer_error("Convolution3D", "0=4 1=3 6=216", &[("x", &[3, 5, 5, 5])]);
    assert!(channels.contains("3 input channels; 2 fit"), "{channels}");
    let deep = layer_error("Convolution3D", "0=4 1=3 6=216", &[("x", &[2, 2, 5, 5])]);
    assert!(deep.contains("kernel depth"), "{deep}");
    let transposed = layer_error("Deconvolution3D", "0=4 1=3 6=216", &[("x", &[2, 5, 5])]);
    assert!(transposed.contains("4-D"), "{transposed}");
    // output sizes without pads to cut by: ncnn makes no output either
    let sizes = "0=4 1=3 6=216 25=4 26=4 27=4";
    let cut = layer_error("Deconvolution3D", sizes, &[("x", &[2, 3, 3, 3])]);
    assert!(cut.contains("output_w/h/d"), "{cut}");
    // weights that fit no whole number of input channels; weights as inputs
    let weights = load_error("ConvolutionDepthWise3D", &["x"], "0=4 1=3 6=100 7=2");
    assert!(weights.contains("weight_data_size"), "{weights}");
    let dynamic = load_error("Convolution3D", &["x"], "0=4 1=3 6=216 19=1");
    assert!(dynamic.contains("19"), "{dynamic}");
}

/// Convolution3D's layers of 3×3 across at stride 1 on maps of at least 16² (12² with 3
/// depth taps or more) take Winograd F(4,3) per depth slab on the device (the depth taps
/// summed by its products), in fp32, in fp16 on the tensor cores where the device has them and
/// without: the CPU's outputs. The depth's kernel, dilation, stride and padding vary; an
/// output side past one tile row and rows that fill no tile; the bias and a fused ReLU; and
/// the maps too small for it keep the implicit GEMM.
#[test]
fn winograd_3d_matches_the_cpu() {
    let mut rng = Rng(3303);
    // (channels, outputs, kernel_d, params, input w, h, d, whether Winograd is taken)
    let cases = [
        (16, 16, 3, "1=3 4=1 9=1", [18, 16, 5], true),
        (32, 64, 1, "1=3 21=1 4=1 24=0", [20, 17, 3], true),
        (16, 32, 3, "1=3 22=2 23=2 4=1 24=2", [17, 19, 9], true),
        (20, 16, 3, "1=3 4=-233 9=1", [16, 21, 4], true),
        (16, 16, 3, "1=3 4=1", [13, 12, 3], true),
        (16, 16, 1, "1=3 21=1 4=1 24=0", [13, 12, 3], false),
        (16, 16, 3, "1=3 4=1", [11, 12, 3], false),
    ];
    let fp32 = RunOptions {
        use_packing_layout: true,
        ..RunOptions::fp32()
    };
    let no_cm = RunOptions {
        use_cooperative_matrix: false,
        ..RunOptions::default()
    };
    for ctx in gpu_contexts() {
        ctx.set_timing(true);
        for (c, outch, kd, extra, [w, h, d], takes) in cases {
            let size = outch * c * kd * 9;
            let param = one_layer(
                "Convolution3D",
                &["data"],
                &format!("0={outch} {extra} 5=1 6={size}"),
            );
            let scale = 1.0 / (c * kd * 9) as f32;
            let kernel: Vec<f32> = rng.vec(size).iter().map(|v| v * scale).collect();
            let weights = bin(&[(&kernel, true), (&rng.vec(outch), false)]);
            let inputs = [Input::new(&mut rng, "data", 4, [w, h, d, c])];
            let want = run_net(&param, &weights, &inputs, "out", fp32, None)
                .unwrap()
                .to_values();
            for (opt, eps) in [(fp32, 1e-3), (RunOptions::default(), 3e-2), (no_cm, 3e-2)] {
                let what = format!("{param}, {opt:?}, {}", ctx.describe());
                ctx.take_timings();
                let got = run_net(&param, &weights, &inputs, "out", opt, Some(ctx.clone()))
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_close(&got.to_values(), &want, eps, &what);
                let shaders: Vec<String> =
                    ctx.take_timings().into_iter().map(|t| t.shader).collect();
                let winograd = shaders.iter().any(|s| s == "convolution_winograd43_input");
                assert_eq!(winograd, takes, "{what}: {shaders:?}");
            }
        }
        ctx.set_timing(false);
    }
}
