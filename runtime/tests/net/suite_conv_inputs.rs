//! ncnn's tests of Convolution with its weights as inputs (test_convolution_3.cpp's dynamic
//! weights) and on vectors, through the suite.

use super::suite::*;
use super::*;

/// The convolution tests' random fused activation: a type 0 to 6 with its two params (alpha
/// in [-1, 0], or [0, 1] for type 6; beta in [0, 1]).
pub(super) fn random_activation(rng: &mut Rng) -> String {
    let kind = ((rng.next() + 1.0) * 3.5) as i32 % 7;
    let alpha = if kind == 6 {
        (rng.next() + 1.0) / 2.0
    } else {
        (rng.next() - 1.0) / 2.0
    };
    let beta = (rng.next() + 1.0) / 2.0;
    format!("9={kind} -23310=2,{alpha},{beta}")
}

/// test_convolution_3.cpp, test_convolutiondepthwise_1.cpp, test_deconvolution.cpp and
/// test_deconvolutiondepthwise_1.cpp's dynamic-weight cases (`19=1` / `28=1`: the weights and
/// bias as inputs, num_output and kernel 0 in the params), every kernel/dilation/stride/pad
/// tuple of the tests, with their random activations.
#[test]
fn ncnn_dynamic_weight_convolution_tests() {
    let mut rng = Rng(306);
    const KDSP: [[i32; 4]; 7] = [
        [1, 1, 1, 0],
        [1, 1, 2, 0],
        [2, 1, 1, 1],
        [2, 1, 2, -233],
        [3, 1, 1, 1],
        [3, 1, 2, 1],
        [3, 2, 1, -234],
    ];
    let mut cases = Vec::new();
    for [k, d, s, p] in KDSP {
        let k = k as usize;
        let head = |bias: i32| format!("0=0 1=0 2={d} 3={s} 4={p} 5={bias} 6=0");
        // (c, outch, bias, group)
        for (c, outch, bias, group) in [
            (1, 1, 1, 1),
            (4, 13, 0, 1),
            (13, 4, 1, 1),
            (12, 12, 0, 1),
            (8, 13, 0, 1),
            (16, 16, 0, 1),
            (2, 2, 1, 2),
            (3, 3, 0, 3),
            (4, 2, 1, 2),
            (8, 8, 0, 2),
            (15, 15, 1, 15),
        ] {
            let (kind, flag) = if group == 1 {
                ("Convolution", "19=1".to_string())
            } else {
                ("ConvolutionDepthWise", format!("19=1 7={group}"))
            };
            let params = format!("{} {flag} {}", head(bias), random_activation(&mut rng));
            let weights: &[usize] = &[k, k, c / group, outch];
            let x = [11, 10, c];
            let mut inputs: Vec<&[usize]> = vec![&x, weights];
            let b = [outch];
            if bias == 1 {
                inputs.push(&b);
            }
            cases.push(case_of(&mut rng, kind, params, &inputs, RANDOM, 1));
        }
        // (w, h, c, outch, bias, group, output pads, output size)
        for (w, h, c, outch, bias, group, opad, osize) in [
            (9, 7, 1, 1, 1, 1, (0, 0), (0, 0)),
            (9, 7, 4, 13, 0, 1, (1, 1), (7, 5)),
            (9, 7, 13, 4, 1, 1, (1, 0), (0, 0)),
            (9, 7, 8, 4, 1, 1, (0, 0), (7, 5)),
            (4, 5, 12, 11, 0, 1, (0, 1), (1, 0)),
            (9, 7, 16, 16, 0, 1, (0, 2), (7, 5)),
            (15, 7, 2, 2, 1, 2, (1, 0), (0, 0)),
            (15, 7, 4, 2, 1, 2, (0, 0), (7, 5)),
            (15, 7, 8, 8, 0, 2, (0, 2), (7, 5)),
            (15, 7, 15, 15, 1, 15, (3, 0), (7, 5)),
        ] {
            let p = if osize.0 > 0 && osize.1 > 0 && p != -233 && p != -234 {
                -233
            } else {
                p
            };
            let head = format!("0=0 1=0 2={d} 3={s} 4={p} 5={bias} 6=0");
            let (kind, flag) = if group == 1 {
                ("Deconvolution", "28=1".to_string())
            } else {
                ("DeconvolutionDepthWise", format!("28=1 7={group}"))
            };
            let params = format!(
                "{head} {flag} {} 18={} 19={} 20={} 21={}",
                random_activation(&mut rng),
                opad.0,
                opad.1,
                osize.0,
                osize.1
            );
            let weights: &[usize] = &[k, k, outch / group, c];
            let x = [w, h, c];
            let mut inputs: Vec<&[usize]> = vec![&x, weights];
            let b = [outch];
            if bias == 1 {
                inputs.push(&b);
            }
            cases.push(case_of(&mut rng, kind, params, &inputs, RANDOM, 1));
        }
    }
    check_suite_cpu_only(sample(cases, 40));
}

/// test_convolution_3.cpp's 1-D inputs (`test_convolution_vec`): a 1×1 Convolution over the
/// values of a 1-D blob, ncnn's deprecated InnerProduct path.
#[test]
fn ncnn_convolution_vec_tests() {
    let mut rng = Rng(307);
    let mut cases = Vec::new();
    for (w, outch, bias) in [
        (1, 1, 1),
        (11, 12, 0),
        (20, 15, 1),
        (12, 20, 0),
        (3, 24, 1),
        (24, 5, 0),
        (32, 24, 1),
        (12, 32, 0),
        (64, 20, 1),
        (64, 128, 0),
    ] {
        let n = outch * w;
        let act = random_activation(&mut rng);
        let params = format!("0={outch} 1=1 2=1 3=1 4=0 5={bias} 6={n} {act}");
        let mut case = case_of(&mut rng, "Convolution", params, &[&[w]], RANDOM, 1);
        case.weights = tagged_weights(&mut rng, n, outch * bias as usize);
        cases.push(case);
    }
    check_suite(cases, false);
}
