//! ncnn's tests of the activations (test_relu.cpp, test_sigmoid.cpp, …), UnaryOp, PReLU and Bias
//! through the suite, and UnaryOp's out-of-range op as a typed error.

use super::suite::*;
use super::*;

/// The shapes ncnn's elementwise tests (`test_elu.cpp`, `test_unaryop.cpp`, …) run every
/// function on: 4-D, 3-D, 2-D and 1-D, with channel counts that pack by 8, 4 and not at all.
pub const ELEMENTWISE_SHAPES: &[&[usize]] = &[
    &[7, 6, 5, 32],
    &[5, 6, 7, 24],
    &[7, 8, 9, 12],
    &[3, 4, 5, 13],
    &[4, 7, 32],
    &[5, 7, 24],
    &[7, 9, 12],
    &[3, 5, 13],
    &[13, 32],
    &[15, 24],
    &[17, 12],
    &[19, 15],
    &[128],
    &[124],
    &[127],
    &[120],
];

#[test]
fn ncnn_activation_tests() {
    let mut rng = Rng(101);
    let mut cases = Vec::new();
    let mut each = |kind: &'static str, params: &str, range: (f32, f32), rng: &mut Rng| {
        let group = ELEMENTWISE_SHAPES
            .iter()
            .map(|sizes| unary_case(rng, kind, params, sizes, range))
            .collect();
        cases.extend(sample(group, 6));
    };
    // test_elu.cpp, test_selu.cpp, test_mish.cpp, test_softplus.cpp, test_erf.cpp,
    // test_absval.cpp, test_bnll.cpp
    each("ELU", "0=0.1", RANDOM, &mut rng);
    each("SELU", "0=1.673264 1=1.050700", RANDOM, &mut rng);
    each("Mish", "", RANDOM, &mut rng);
    each("Softplus", "", RANDOM, &mut rng);
    each("Erf", "", RANDOM, &mut rng);
    each("AbsVal", "", RANDOM, &mut rng);
    each("BNLL", "", RANDOM, &mut rng);
    // test_exp.cpp, test_log.cpp, test_power.cpp: (base, scale, shift) tuples and ranges
    for params in ["0=-1 1=1 2=0", "0=-1 1=0.75 2=-0.25", "0=2 1=0.5 2=0.125"] {
        each("Exp", params, (-1.0, 1.0), &mut rng);
    }
    for params in ["0=-1 1=1 2=0", "0=-1 1=0.75 2=0.25", "0=2 1=0.5 2=0.125"] {
        each("Log", params, (0.001, 2.0), &mut rng);
    }
    each("Power", "0=1.1 1=1.5 2=2", RANDOM, &mut rng);
    // test_threshold.cpp, test_shrink.cpp
    for params in ["0=0", "0=0.3"] {
        each("Threshold", params, RANDOM, &mut rng);
    }
    for params in ["0=0 1=5", "0=0.3 1=0.3", "0=4.5 1=6.1", "0=0.5 1=0.5"] {
        each("Shrink", params, RANDOM, &mut rng);
    }
    // the activations fpshader had before: test_relu.cpp, test_clip.cpp, test_hardswish.cpp,
    // test_hardsigmoid.cpp, test_gelu.cpp, test_dropout.cpp, test_swish.cpp, test_sigmoid.cpp,
    // test_tanh.cpp
    for (kind, params) in [
        ("ReLU", "0=0"),
        ("ReLU", "0=0.1"),
        ("Clip", "0=-1 1=1"),
        ("HardSwish", "0=0.2 1=0.5"),
        ("HardSigmoid", "0=0.5 1=0.5"),
        ("GELU", "0=0"),
        ("GELU", "0=1"),
        ("Dropout", "0=0.1"),
        ("Dropout", "0=0.5"),
        ("Dropout", "0=1"),
        ("Swish", ""),
        ("Sigmoid", ""),
        ("TanH", ""),
    ] {
        each(kind, params, RANDOM, &mut rng);
    }
    // test_celu.cpp: its shapes, each with its alpha
    let celu: [(&[usize], &str); 12] = [
        (&[3, 8, 12, 18], "0=1.0"),
        (&[4, 7, 9, 16], "0=0.1"),
        (&[9, 6, 7, 14], "0=0.1"),
        (&[7, 6, 18], "0=1.0"),
        (&[9, 6, 15], "0=0.1"),
        (&[2, 7, 11], "0=1.0"),
        (&[12, 18], "0=1.0"),
        (&[18, 12], "0=0.1"),
        (&[23, 27], "0=1.0"),
        (&[128], "0=1.0"),
        (&[124], "0=0.1"),
        (&[127], "0=0.2"),
    ];
    let group = (celu.iter())
        .map(|(sizes, params)| unary_case(&mut rng, "CELU", params, sizes, RANDOM))
        .collect();
    cases.extend(sample(group, 6));
    check_suite(cases, true);
}

/// test_unaryop.cpp: every op type on every shape, with the ranges the test gives the ops
/// that need them (scaled by 1000 for floor and ceil, positive for roots and logarithms, …).
#[test]
fn ncnn_unaryop_tests() {
    let mut rng = Rng(102);
    let mut cases = Vec::new();
    for op in 0..fpshader::layer::elementwise::unaryop::OPERATIONS.len() {
        let range = match op {
            2 | 3 => (-1200.0, 1200.0),
            5 | 6 | 8 | 17 => (0.001, 2.0),
            25 => (1.001, 2.0),
            11..=13 => (-1.0, 1.0),
            26 => (-0.99, 0.99),
            27 => (-0.999, 2.0),
            _ => RANDOM,
        };
        let group = ELEMENTWISE_SHAPES
            .iter()
            .map(|sizes| unary_case(&mut rng, "UnaryOp", &format!("0={op}"), sizes, range))
            .collect();
        cases.extend(sample(group, 4));
    }
    check_suite(cases, true);
}

/// test_prelu.cpp (per-channel and shared slopes on every dims) and test_bias.cpp.
#[test]
fn ncnn_prelu_and_bias_tests() {
    let mut rng = Rng(103);
    let mut cases = Vec::new();
    let prelu: &[(&[usize], usize)] = &[
        (&[5, 7, 24], 24),
        (&[5, 7, 24], 1),
        (&[5, 7, 32], 32),
        (&[5, 7, 32], 1),
        (&[7, 9, 12], 12),
        (&[7, 9, 12], 1),
        (&[3, 5, 13], 13),
        (&[3, 5, 13], 1),
        (&[15, 24], 24),
        (&[15, 24], 1),
        (&[15, 32], 32),
        (&[15, 32], 1),
        (&[17, 12], 12),
        (&[17, 12], 1),
        (&[19, 15], 15),
        (&[19, 15], 1),
        (&[128], 128),
        (&[128], 1),
        (&[124], 124),
        (&[124], 1),
        (&[120], 120),
        (&[120], 1),
        (&[127], 127),
        (&[127], 1),
        (&[5, 3, 2, 24], 24),
        (&[5, 3, 2, 24], 1),
        (&[3, 5, 3, 13], 13),
        (&[3, 5, 3, 13], 1),
    ];
    for (sizes, slopes) in prelu {
        let mut case = unary_case(&mut rng, "PReLU", &format!("0={slopes}"), sizes, RANDOM);
        case.weights = random_mat(&mut rng, "w", &[*slopes], RANDOM).values;
        cases.push(case);
    }
    for sizes in [
        &[5, 6, 7, 24][..],
        &[7, 8, 9, 12],
        &[3, 4, 5, 13],
        &[5, 7, 24],
        &[7, 9, 12],
        &[3, 5, 13],
    ] {
        let channels = *sizes.last().unwrap();
        let mut case = unary_case(&mut rng, "Bias", &format!("0={channels}"), sizes, RANDOM);
        case.weights = random_mat(&mut rng, "w", &[channels], RANDOM).values;
        cases.push(case);
    }
    // the channel_affine family has no image variants yet
    check_suite(cases, false);
}

/// Parameters out of ncnn's range are refused at load, naming the layer and the value.
#[test]
fn out_of_range_unaryop_is_a_typed_error_naming_the_layer() {
    for op in ["28", "-1"] {
        let mut net = Net::new();
        let e = net
            .load_param_str(
                "t.param",
                &one_layer("UnaryOp", &["data"], &format!("0={op}")),
            )
            .unwrap_err();
        let report = e.report();
        assert!(report.contains("layer `layer` (UnaryOp)"), "{report}");
        let Error::Model(fpshader::ModelError::LayerParam { source, .. }) = &e else {
            panic!("not a layer's parameter error: {report}");
        };
        let bad_param = matches!(source.as_ref(), Error::Layer { source, .. }
            if matches!(source.as_ref(), Error::BadParam { id: 0, value, .. } if value == op));
        assert!(bad_param, "{report}");
    }
}
