//! ncnn's test_deformableconv2d.cpp through the suite (CPU against ncnn's wheel, the GPU
//! against the CPU): its kernel/dilation/stride/pad rows over its shapes and channels, with the
//! mask, and the same without one (DCNv1); offsets and masks of the wrong shape as typed errors.

use super::suite::*;
use super::suite_conv_inputs::random_activation;
use super::*;

/// test_deformableconv2d_0's table (the test takes its first four rows).
const KDSP: [[usize; 4]; 4] = [[1, 1, 1, 0], [1, 1, 2, 0], [2, 1, 1, 1], [2, 1, 2, 0]];

/// Its `(w, h, c, outch, bias)` calls.
fn calls() -> Vec<(usize, usize, usize, usize, usize)> {
    let mut calls = vec![
        (9, 7, 1, 1, 1),
        (9, 7, 4, 13, 0),
        (9, 7, 13, 4, 1),
        (9, 7, 4, 8, 0),
        (9, 7, 8, 4, 1),
        (9, 7, 8, 13, 0),
        (9, 7, 13, 8, 1),
        (9, 7, 16, 16, 0),
    ];
    for c in [1, 4, 8, 16] {
        for outch in [1, 4, 8, 16] {
            calls.push((16, 16, c * 3, outch * 3, 1));
        }
    }
    calls
}

fn case(
    rng: &mut Rng,
    (w, h, c, outch, bias): (usize, usize, usize, usize, usize),
    [k, d, s, p]: [usize; 4],
    mask: bool,
) -> Case {
    let extent = d * (k - 1) + 1;
    let (ow, oh) = ((w + 2 * p - extent) / s + 1, (h + 2 * p - extent) / s + 1);
    let n = outch * c * k * k;
    let act = random_activation(rng);
    let params = format!("0={outch} 1={k} 2={d} 3={s} 4={p} 5={bias} 6={n} {act}");
    let mut sizes: Vec<Vec<usize>> = vec![vec![w, h, c], vec![ow, oh, k * k * 2]];
    if mask {
        sizes.push(vec![ow, oh, k * k]);
    }
    let refs: Vec<&[usize]> = sizes.iter().map(Vec::as_slice).collect();
    let mut case = case_of(rng, "DeformableConv2D", params, &refs, RANDOM, 1);
    case.weights = tagged_weights(rng, n, outch * bias);
    case
}

#[test]
fn ncnn_deformableconv2d_tests() {
    let mut rng = Rng(2201);
    let mut group = Vec::new();
    for kdsp in KDSP {
        for call in calls() {
            group.push(case(&mut rng, call, kdsp, true));
        }
    }
    let mut cases = sample(group, 24);
    let mut group = Vec::new();
    for kdsp in KDSP {
        for call in calls().into_iter().step_by(3) {
            group.push(case(&mut rng, call, kdsp, false));
        }
    }
    cases.extend(sample(group, 8));
    check_suite(cases, false);
}

#[test]
fn deformableconv2d_refuses_offsets_that_do_not_fit() {
    // (numpy shapes) a 3×3 kernel over 5×5 gives 3×3 positions: 18 offset channels, 9 mask ones
    let params = "0=2 1=3 6=54";
    let offsets = layer_error(
        "DeformableConv2D",
        params,
        &[("x", &[3, 5, 5]), ("o", &[16, 3, 3])],
    );
    assert!(offsets.contains("offsets"), "{offsets}");
    let mask = layer_error(
        "DeformableConv2D",
        params,
        &[("x", &[3, 5, 5]), ("o", &[18, 3, 3]), ("m", &[9, 4, 3])],
    );
    assert!(mask.contains("mask"), "{mask}");
    let alone = layer_error("DeformableConv2D", params, &[("x", &[3, 5, 5])]);
    assert!(alone.contains("offsets"), "{alone}");
}
