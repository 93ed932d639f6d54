//! ncnn's static int8 inference through the suite, on the CPU against ncnn's wheel (which runs
//! it by default): test_quantize.cpp, test_dequantize.cpp and test_requantize.cpp's cases, and
//! the int8 cases of test_convolution_3.cpp, test_convolutiondepthwise_1.cpp and
//! test_innerproduct.cpp (fp32 kernels the layer quantizes with its scales, or int8 kernels;
//! dequantized outputs within 0.001, requantized levels within 1, as ncnn's tests).

use super::suite::*;
use super::*;

/// [`check_suite_cpu_only`] for layers with ncnn's static int8 inference
/// (`int8_scale_term`): fpshader runs with `use_int8_inference`, as the wheel does by
/// default, and matches it at the test's `epsilon` (0.001 for dequantized outputs, 1.0 for
/// requantized levels, as ncnn's tests).
pub(crate) fn check_suite_int8_inference(cases: Vec<Case>, epsilon: f32) -> Vec<Output> {
    check_suite_cpu_outputs_at(&cases, epsilon, false, true)
}

/// ncnn's `scales_mat`: `127 / absmax` of each of `m` runs of `k` values `ld` apart; the first
/// value of all (`mat[0]`) seeds every run's minimum and maximum, as there.
fn scales_mat(values: &[f32], m: usize, k: usize, ld: usize) -> Vec<f32> {
    (0..m)
        .map(|i| {
            let run = &values[i * ld..i * ld + k];
            let (lo, hi) = run.iter().fold((values[0], values[0]), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
            127.0 / lo.abs().max(hi.abs())
        })
        .collect()
}

/// The tests' random fused activation: its type and `-23310=` params.
fn random_activation(rng: &mut Rng) -> String {
    let kind = rng.below(7);
    let mut uniform = |lo: f32, hi: f32| lo + (rng.next() + 1.0) * 0.5 * (hi - lo);
    let alpha = if kind == 6 {
        uniform(0.0, 1.0)
    } else {
        uniform(-1.0, 0.0)
    };
    let beta = uniform(0.0, 1.0);
    format!("9={kind} -23310=2,{alpha:?},{beta:?}")
}

/// An int8 convolution case: `(w, h, c, outch, kernel, dilation, stride, pad, bias, group,
/// int8_scale_term)`; `group` 0 for Convolution, else ConvolutionDepthWise with that group.
#[allow(clippy::type_complexity)]
pub(crate) fn conv_int8_case(
    rng: &mut Rng,
    (w, h, c, outch, k, d, s, p, bias, group, term): (
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
        i32,
        usize,
        usize,
        i32,
    ),
) -> Case {
    let a = random_mat(rng, "x", &[w, h, c], RANDOM);
    let groups = group.max(1);
    let n = outch / groups * c / groups * k * k * groups;
    let kernel = random_values(rng, n, RANDOM);
    let mut weight_scales = match (group, term) {
        (0, _) => scales_mat(&kernel, outch, c * k * k, c * k * k),
        (_, 2 | 102) => scales_mat(&kernel, 1, n, n),
        _ => scales_mat(&kernel, groups, c * k * k / groups, c * k * k / groups),
    };
    if group == 0 && k == 3 && d == 1 && s == 1 {
        // the tests' 6-bit quantization
        weight_scales.iter_mut().for_each(|v| *v /= 4.0);
    }
    let input_scale = scales_mat(&a.values, 1, a.values.len(), 0);
    let mut weights = vec![vec![0.0], kernel];
    if bias == 1 {
        weights.push(random_values(rng, outch, RANDOM));
    }
    weights.push(weight_scales);
    weights.push(input_scale.clone());
    if term > 100 {
        weights.push(input_scale);
    }
    let kind = if group == 0 {
        "Convolution"
    } else {
        "ConvolutionDepthWise"
    };
    let grouped = if group == 0 {
        String::new()
    } else {
        format!(" 7={group}")
    };
    let params = format!(
        "0={outch} 1={k} 2={d} 3={s} 4={p} 5={bias} 6={n}{grouped} 8={term} {}",
        random_activation(rng)
    );
    case_with(kind, params, vec![a], weights)
}

const KDSP: [(usize, usize, usize, i32); 16] = [
    (1, 1, 1, 0),
    (1, 1, 2, 0),
    (2, 1, 1, 1),
    (2, 1, 2, -233),
    (3, 1, 1, 1),
    (3, 1, 2, 1),
    (3, 2, 1, 1),
    (4, 1, 1, 2),
    (4, 1, 2, -233),
    (4, 2, 1, -234),
    (5, 1, 1, -234),
    (5, 1, 2, 2),
    (5, 2, 2, 2),
    (7, 1, 1, 3),
    (7, 1, 2, 3),
    (7, 2, 1, -233),
];

/// test_convolution_3.cpp's `test_convolution_1`: dequantized (term 1) and requantized (101)
/// outputs over every kernel, dilation, stride and pad set, and the listed shapes with terms 2
/// and 102. A sample in CI, all with `FPSHADER_NCNN_SUITE=all`.
#[test]
fn ncnn_convolution_int8_tests() {
    let mut rng = Rng(831);
    let pairs = [
        (1, 1),
        (2, 2),
        (3, 3),
        (4, 4),
        (7, 7),
        (8, 8),
        (15, 15),
        (16, 15),
        (15, 16),
        (16, 16),
    ];
    for (requant, term) in [(false, 1), (true, 101)] {
        let mut cases = Vec::new();
        for &(k, d, s, p) in &KDSP {
            for &(c, outch) in &pairs {
                cases.push(conv_int8_case(
                    &mut rng,
                    (9, 7, c, outch, k, d, s, p, 1, 0, term),
                ));
            }
        }
        check_suite_int8_inference(sample(cases, 40), if requant { 1.0 } else { 1e-3 });
    }
    let listed = [
        (11, 11, 8, 16, 3, 1, 1, 1, 1, 0, 1),
        (13, 16, 16, 24, 3, 1, 1, 1, 1, 0, 1),
        (6, 7, 64, 64, 3, 1, 2, 0, 1, 0, 1),
        (25, 33, 31, 31, 3, 1, 1, 1, 0, 0, 1),
        (5, 7, 32, 8, 5, 1, 2, 0, 1, 0, 1),
        (16, 10, 31, 32, 2, 1, 3, 0, 0, 0, 1),
        (23, 11, 33, 28, 5, 1, 1, 0, 1, 0, 1),
        (7, 5, 4, 8, 1, 1, 1, 0, 1, 0, 2),
        (9, 7, 8, 12, 2, 1, 2, 1, 1, 0, 1),
    ];
    let cases = listed
        .into_iter()
        .map(|t| conv_int8_case(&mut rng, t))
        .collect();
    check_suite_int8_inference(cases, 1e-3);
    let requantized = [
        (7, 5, 4, 8, 1, 1, 1, 0, 1, 0, 102),
        (9, 7, 8, 12, 2, 1, 2, 1, 1, 0, 101),
    ];
    let cases = requantized
        .into_iter()
        .map(|t| conv_int8_case(&mut rng, t))
        .collect();
    check_suite_int8_inference(cases, 1.0);
}

/// test_convolutiondepthwise_1.cpp's int8 cases: depthwise and grouped, per-group scales (1,
/// 101) and one for all (2, 102).
#[test]
fn ncnn_convolutiondepthwise_int8_tests() {
    let mut rng = Rng(832);
    let sets = [
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
    for (requant, term, extra) in [(false, 1, 2), (true, 101, 102)] {
        let mut cases = Vec::new();
        for &(k, d, s, p) in &KDSP {
            for &(c, outch, bias, group) in &sets {
                let t = (15, 7, c, outch, k, d, s, p, bias, group, term);
                cases.push(conv_int8_case(&mut rng, t));
            }
            for group in [8, 2] {
                let t = (15, 7, 8, 8, k, d, s, p, 1, group, extra);
                cases.push(conv_int8_case(&mut rng, t));
            }
        }
        check_suite_int8_inference(sample(cases, 40), if requant { 1.0 } else { 1e-3 });
    }
}

/// test_innerproduct.cpp's int8 cases and 2-D inputs of several rows: fp32 kernels with their scales, and int8 kernels
/// (`RandomS8Mat`) with scales in 10–20.
#[test]
fn ncnn_innerproduct_int8_tests() {
    let cases = innerproduct_int8_cases(&mut Rng(833));
    check_suite_int8_inference(cases, 1e-3);
}

/// The cases of [`ncnn_innerproduct_int8_tests`].
pub(crate) fn innerproduct_int8_cases(rng: &mut Rng) -> Vec<Case> {
    // ncnn's sets, then 2-D inputs of several rows (ncnn's gemm path: `w` inputs per row)
    let sets: [(&[usize], usize, bool); 18] = [
        (&[1, 3, 1], 1, false),
        (&[3, 2, 2], 2, false),
        (&[5, 3, 3], 3, false),
        (&[7, 2, 3], 12, false),
        (&[9, 3, 4], 4, false),
        (&[2, 2, 7], 7, false),
        (&[4, 3, 8], 3, false),
        (&[6, 2, 8], 8, false),
        (&[8, 3, 15], 15, false),
        (&[7, 2, 16], 4, false),
        (&[6, 3, 16], 16, false),
        (&[16], 16, false),
        (&[32], 16, true),
        (&[16], 12, true),
        (&[2, 2, 4], 8, false),
        (&[16, 3], 8, false),
        (&[12, 5], 4, true),
        (&[20, 2], 12, false),
    ];
    let mut cases = Vec::new();
    for (sizes, outch, int8_kernel) in sets {
        let a = random_mat(rng, "x", sizes, RANDOM);
        let k = match sizes {
            [w, _] => *w,
            _ => a.values.len(),
        };
        let (kernel, weight_scales) = if int8_kernel {
            let scales = random_values(rng, outch, (10.0, 20.0));
            (s8_weights(rng, outch * k), scales)
        } else {
            let kernel = random_values(rng, outch * k, RANDOM);
            let scales = scales_mat(&kernel, outch, k, k);
            ([vec![0.0], kernel].concat(), scales)
        };
        let input_scale = scales_mat(&a.values, 1, a.values.len(), 0);
        let bias = random_values(rng, outch, RANDOM);
        let params = format!(
            "0={outch} 1=1 2={} 8=1 {}",
            outch * k,
            random_activation(rng)
        );
        let weights = vec![kernel, bias, weight_scales, input_scale];
        cases.push(case_with("InnerProduct", params, vec![a], weights));
    }
    cases
}

/// Whole numbers in -10000..10000 as ncnn's `RandomIntMat`: the wheel gets them as int32.
fn int_mat(rng: &mut Rng, sizes: &[usize]) -> Input {
    let mut m = random_mat(rng, "x", sizes, RANDOM);
    m.values
        .iter_mut()
        .for_each(|v| *v = (*v / 1.2 * 10000.0).trunc());
    m.int = true;
    m
}

/// test_quantize.cpp: one scale of 100 or one per channel in 120–140, over 1-D to 4-D blobs.
#[test]
fn ncnn_quantize_tests() {
    let mut rng = Rng(834);
    let shapes: [&[usize]; 14] = [
        &[5, 7, 24],
        &[7, 9, 12],
        &[3, 5, 13],
        &[3, 3, 256],
        &[3, 3, 255],
        &[15, 24],
        &[17, 12],
        &[19, 15],
        &[15, 255],
        &[128],
        &[124],
        &[255],
        &[5, 3, 2, 24],
        &[3, 5, 3, 13],
    ];
    let mut cases = Vec::new();
    for sizes in shapes {
        for per_channel in [false, true] {
            let a = random_mat(&mut rng, "x", sizes, RANDOM);
            let n = if per_channel && sizes.len() > 1 {
                channels(sizes)
            } else {
                1
            };
            let scales = if per_channel {
                random_values(&mut rng, n, (120.0, 140.0))
            } else {
                vec![100.0]
            };
            cases.push(case_with(
                "Quantize",
                format!("0={n}"),
                vec![a],
                vec![scales],
            ));
        }
    }
    check_suite_int8_inference(cases, 1e-3);
}

/// test_dequantize.cpp and test_requantize.cpp: int32 inputs, scales and biases of one value,
/// one per channel or none, Requantize with each activation.
#[test]
fn ncnn_dequantize_and_requantize_tests() {
    let mut rng = Rng(835);
    let shapes: [&[usize]; 5] = [&[11, 13, 48], &[5, 7, 24], &[3, 5, 13], &[15, 24], &[128]];
    let mut dequantize = Vec::new();
    let mut requantize = Vec::new();
    for sizes in shapes {
        let c = channels(sizes);
        let counts: Vec<usize> = if sizes.len() == 1 {
            vec![1]
        } else {
            vec![1, c]
        };
        for &scale_n in &counts {
            for bias_n in [0, 1, c].into_iter().filter(|n| *n <= 1 || sizes.len() > 1) {
                let a = int_mat(&mut rng, sizes);
                let mut weights = vec![random_values(&mut rng, scale_n, (0.0001, 0.001))];
                weights.push(random_values(&mut rng, bias_n, RANDOM));
                let params = format!("0={scale_n} 1={bias_n}");
                dequantize.push(case_with("Dequantize", params, vec![a], weights));
                for &out_n in &counts {
                    let a = int_mat(&mut rng, sizes);
                    let kind = rng.below(6);
                    let weights = vec![
                        random_values(&mut rng, scale_n, (0.0001, 0.001)),
                        random_values(&mut rng, out_n, (10.0, 100.0)),
                        random_values(&mut rng, bias_n, RANDOM),
                    ];
                    let params = format!(
                        "0={scale_n} 1={out_n} 2={bias_n} 3={kind} -23304=2,{:?},{:?}",
                        -0.5 + rng.next() * 0.4,
                        0.5 + rng.next() * 0.4
                    );
                    requantize.push(case_with("Requantize", params, vec![a], weights));
                }
            }
        }
    }
    check_suite_int8_inference(dequantize, 1e-3);
    check_suite_int8_inference(requantize, 1e-3);
}

/// The scale counts the quantization layers take are typed errors otherwise.
#[test]
fn quantization_layers_refuse_scales_that_do_not_fit() {
    let report = layer_error("Requantize", "0=3 1=1", &[("x", &[4, 5, 5])]);
    assert!(report.contains("Requantize's input scales"), "{report}");
    assert!(report.contains('3') && report.contains('4'), "{report}");
    let report = layer_error("Quantize", "0=2", &[("x", &[3, 5, 5])]);
    assert!(report.contains("Quantize's scales"), "{report}");
    let report = load_error("ConvolutionDepthWise", &["x"], "0=4 1=3 6=36 7=4 8=3");
    assert!(report.contains("param 8 = 3"), "{report}");
}
