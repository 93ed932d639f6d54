//! ncnn's tests of the 1-D convolutions through the suite: test_convolution1d.cpp,
//! test_convolutiondepthwise1d.cpp, test_deconvolution1d.cpp and
//! test_deconvolutiondepthwise1d.cpp (every kernel/dilation/stride/pad row of their tables over
//! their shapes, channels and groups, output pads and sizes; their dynamic-weight cases on the
//! CPU, as ncnn's Vulkan takes none), and inputs that do not fit as typed errors.

use super::suite::*;
use super::suite_conv::FORWARD_KDSP;
use super::suite_conv_inputs::random_activation;
use super::*;

/// test_deconvolution1d.cpp's and test_deconvolutiondepthwise1d.cpp's table.
const TRANSPOSED_KDSP: [[i32; 4]; 16] = [
    [1, 1, 1, 0],
    [1, 1, 2, 0],
    [2, 1, 1, 1],
    [2, 1, 2, -233],
    [3, 1, 1, 1],
    [3, 1, 2, 1],
    [3, 2, 1, 1],
    [4, 1, 1, -233],
    [4, 1, 2, -234],
    [4, 2, 1, -234],
    [5, 1, 1, 2],
    [5, 1, 2, 2],
    [5, 2, 2, 2],
    [7, 1, 1, 3],
    [7, 1, 2, 3],
    [7, 2, 1, -233],
];

/// The dynamic-weight tests' table.
const DYNAMIC_KDSP: [[i32; 4]; 7] = [
    [1, 1, 1, 0],
    [1, 1, 2, 0],
    [2, 1, 1, 1],
    [2, 1, 2, -233],
    [3, 1, 1, 1],
    [3, 1, 2, 1],
    [3, 2, 1, -234],
];

/// One layer over a `RandomMat(w, h)` with stored weights: `(w, h, outh, group, bias)`,
/// `[kernel, dilation, stride, pad]`, `extra` params (output pads and sizes).
fn stored(
    rng: &mut Rng,
    kind: &'static str,
    (w, h, outh, group, bias): (usize, usize, usize, usize, usize),
    [k, d, s, p]: [i32; 4],
    extra: &str,
) -> Case {
    // the weights the layer reads; test_convolutiondepthwise1d.cpp passes kernel² times that
    // many, of which ncnn's forward reads the first (fpshader takes the count as the weights')
    let size = outh / group * (h / group) * k as usize * group;
    let act = ACTIVATIONS[(w + h + outh + k as usize) % ACTIVATIONS.len()];
    let mut params = format!("0={outh} 1={k} 2={d} 3={s} 4={p} 5={bias} 6={size} {act} {extra}");
    if kind.contains("DepthWise") {
        params += &format!(" 7={group}");
    }
    let mut case = unary_case(rng, kind, &params, &[w, h], RANDOM);
    case.weights = tagged_weights(rng, size, outh * bias);
    case
}

/// One layer with its weights as inputs: `weights` the weight blob's shape.
fn dynamic(
    rng: &mut Rng,
    kind: &'static str,
    (w, h, outh, group, bias): (usize, usize, usize, usize, usize),
    [_, d, s, p]: [i32; 4],
    (flag, extra): (&str, &str),
    weights: &[usize],
) -> Case {
    let mut params = format!("0=0 1=0 2={d} 3={s} 4={p} 5={bias} 6=0 {flag} {extra}");
    if kind.contains("DepthWise") {
        params += &format!(" 7={group}");
    }
    params += &format!(" {}", random_activation(rng));
    let x = [w, h];
    let b = [outh];
    let mut inputs: Vec<&[usize]> = vec![&x, weights];
    if bias == 1 {
        inputs.push(&b);
    }
    case_of(rng, kind, params, &inputs, RANDOM, 1)
}

/// test_convolution1d_0's shapes: `(w, h, outh)` per row (its biases alternate).
fn convolution1d_shapes() -> Vec<(usize, usize, usize)> {
    let mut shapes = Vec::new();
    for h in [1, 3, 7, 15, 31] {
        for outh in [1, 3, 7, 15, 31] {
            if (h, outh) != (31, 31) {
                shapes.push((9, h, outh));
            }
        }
    }
    for (h, outh) in [
        (28, 31),
        (31, 28),
        (28, 28),
        (24, 28),
        (24, 31),
        (28, 24),
        (31, 24),
        (24, 24),
        (28, 48),
        (31, 48),
        (24, 48),
        (48, 28),
        (48, 31),
        (48, 24),
        (31, 31),
        (48, 48),
    ] {
        shapes.push((25, h, outh));
    }
    shapes
}

/// test_convolutiondepthwise1d_0's `(h, outh, bias, group)` per width.
const DEPTHWISE_1D: [(usize, usize, usize, usize); 13] = [
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
fn ncnn_convolution1d_tests() {
    let mut rng = Rng(1601);
    let mut group = Vec::new();
    for (i, kdsp) in FORWARD_KDSP.iter().enumerate() {
        for (j, (w, h, outh)) in convolution1d_shapes().into_iter().enumerate() {
            let bias = (i + j) % 2;
            group.push(stored(
                &mut rng,
                "Convolution1D",
                (w, h, outh, 1, bias),
                *kdsp,
                "",
            ));
        }
    }
    let mut cases = sample(group, 40);
    // its untemplated calls: 3-wide kernels on more channels, a strided 64-channel one
    for (w, h, outh, s, p, bias) in [
        (7, 1, 4, 1, 1, 1),
        (14, 1, 4, 2, 1, 1),
        (15, 4, 4, 1, 1, 1),
        (15, 8, 8, 1, 1, 1),
        (11, 8, 16, 1, 1, 1),
        (13, 16, 24, 1, 1, 1),
        (8, 16, 24, 1, 1, 0),
        (4, 16, 24, 1, 1, 1),
        (4, 16, 24, 1, 1, 0),
        (6, 64, 64, 2, 0, 1),
    ] {
        let row = [3, 1, s, p];
        cases.push(stored(
            &mut rng,
            "Convolution1D",
            (w, h, outh, 1, bias),
            row,
            "",
        ));
    }
    let mut group = Vec::new();
    for kdsp in FORWARD_KDSP {
        for w in [15, 18, 25] {
            for (h, outh, bias, g) in DEPTHWISE_1D {
                let shape = (w, h, outh, g, bias);
                group.push(stored(&mut rng, "ConvolutionDepthWise1D", shape, *kdsp, ""));
            }
        }
    }
    cases.extend(sample(group, 40));
    check_suite(cases, false);
}

#[test]
fn ncnn_deconvolution1d_tests() {
    let mut rng = Rng(1602);
    let mut group = Vec::new();
    for kdsp in TRANSPOSED_KDSP {
        // (h, outh, bias, output_pad_right, output_w)
        for (h, outh, bias, opr, ow) in [
            (1, 1, 1, 0, 0),
            (4, 13, 0, 1, 7),
            (13, 4, 1, 1, 0),
            (4, 8, 0, 0, 0),
            (8, 4, 1, 0, 7),
            (8, 13, 0, 2, 0),
            (13, 8, 1, 2, 0),
            (16, 16, 0, 0, 7),
        ] {
            let extra = format!("18={opr} 20={ow}");
            let shape = (9, h, outh, 1, bias);
            if makes_output(kdsp[3], ow) {
                group.push(stored(&mut rng, "Deconvolution1D", shape, kdsp, &extra));
            }
        }
    }
    let mut cases = sample(group, 30);
    let mut group = Vec::new();
    for kdsp in TRANSPOSED_KDSP {
        for (h, outh, bias, g, opr, ow) in DEPTHWISE_TRANSPOSED_1D {
            let extra = format!("18={opr} 20={ow}");
            let shape = (15, h, outh, g, bias);
            if makes_output(kdsp[3], ow) {
                group.push(stored(
                    &mut rng,
                    "DeconvolutionDepthWise1D",
                    shape,
                    kdsp,
                    &extra,
                ));
            }
        }
    }
    cases.extend(sample(group, 30));
    check_suite(cases, false);
}

/// test_deconvolutiondepthwise1d.cpp's `(h, outh, bias, group, output_pad_right, output_w)`.
const DEPTHWISE_TRANSPOSED_1D: [(usize, usize, usize, usize, i32, i32); 13] = [
    (1, 1, 1, 1, 0, 0),
    (2, 2, 0, 1, 1, 7),
    (2, 2, 1, 2, 1, 0),
    (3, 3, 0, 3, 0, 0),
    (4, 2, 1, 2, 0, 7),
    (4, 4, 0, 4, 2, 0),
    (7, 7, 1, 7, 2, 0),
    (8, 8, 0, 2, 0, 7),
    (8, 8, 1, 8, 0, 0),
    (12, 12, 0, 4, 3, 0),
    (15, 15, 1, 15, 3, 7),
    (16, 8, 0, 2, 0, 0),
    (16, 16, 1, 16, 0, 0),
];

/// Whether ncnn makes an output: an output size with neither positive nor "same" pads cuts
/// nothing and makes none (an error in both).
fn makes_output(pad: i32, output_w: i32) -> bool {
    !(pad == 0 && output_w > 0)
}

#[test]
fn ncnn_dynamic_weight_1d_tests() {
    let mut rng = Rng(1603);
    let mut cases = Vec::new();
    for kdsp in DYNAMIC_KDSP {
        let k = kdsp[0] as usize;
        for (h, outh, bias) in [
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
            let shape = (11, h, outh, 1, bias);
            let flags = ("19=1", "");
            cases.push(dynamic(
                &mut rng,
                "Convolution1D",
                shape,
                kdsp,
                flags,
                &[k, h, outh],
            ));
        }
        for (h, outh, bias, g) in DEPTHWISE_1D {
            let shape = (11, h, outh, g, bias);
            let flags = ("19=1", "");
            let weights = [k, h / g, outh];
            cases.push(dynamic(
                &mut rng,
                "ConvolutionDepthWise1D",
                shape,
                kdsp,
                flags,
                &weights,
            ));
        }
    }
    for kdsp in TRANSPOSED_KDSP {
        let k = kdsp[0] as usize;
        for (h, outh, bias, g, opr, ow) in DEPTHWISE_TRANSPOSED_1D {
            if !makes_output(kdsp[3], ow) {
                continue;
            }
            let extra = format!("18={opr} 20={ow}");
            let (kind, weights) = match g {
                1 => ("Deconvolution1D", [k, outh, h]),
                _ => ("DeconvolutionDepthWise1D", [k, outh / g, h]),
            };
            let shape = (9, h, outh, g, bias);
            cases.push(dynamic(
                &mut rng,
                kind,
                shape,
                kdsp,
                ("28=1", &extra),
                &weights,
            ));
        }
    }
    check_suite_cpu_only(sample(cases, 40));
}

#[test]
fn one_d_convolutions_refuse_what_does_not_fit() {
    // (numpy shapes) a 3-D input, rows that are not the weights' channels, a kernel past the
    // padded row
    let planes = layer_error("Convolution1D", "0=4 1=3 6=24", &[("x", &[2, 2, 9])]);
    assert!(planes.contains("2-D"), "{planes}");
    let rows = layer_error("Convolution1D", "0=4 1=3 6=24", &[("x", &[3, 9])]);
    assert!(rows.contains("3 input channels; 2 fit"), "{rows}");
    let long = layer_error("Convolution1D", "0=4 1=7 6=56", &[("x", &[2, 4])]);
    assert!(long.contains("kernel"), "{long}");
    let transposed = layer_error("Deconvolution1D", "0=4 1=3 6=24", &[("x", &[2, 2, 9])]);
    assert!(transposed.contains("2-D"), "{transposed}");
    // weights that fit no whole number of input channels
    let weights = load_error("ConvolutionDepthWise1D", &["x"], "0=4 1=3 6=10 7=2");
    assert!(weights.contains("weight_data_size"), "{weights}");
}
