//! ncnn's tests of the layers fpshader had before issue 23, through the suite: test_pooling.cpp,
//! test_padding.cpp, test_permute.cpp, test_softmax.cpp, test_concat.cpp, test_eltwise.cpp,
//! test_batchnorm.cpp, test_scale.cpp, test_flatten.cpp and test_shufflechannel.cpp.

use super::suite::*;
use super::*;

/// A case over several inputs with raw fp32 weights.
fn case_with(
    kind: &'static str,
    params: String,
    inputs: Vec<Input>,
    weights: Vec<Vec<f32>>,
) -> Case {
    Case {
        kind,
        params,
        inputs,
        weights: weights.concat(),
        tops: 1,
    }
}

/// ncnn's channels of a `RandomMat` of `sizes`: c of 3-D and 4-D, h of 2-D, w of 1-D.
fn channels(sizes: &[usize]) -> usize {
    match sizes.len() {
        1 => sizes[0],
        2 => sizes[1],
        _ => sizes[sizes.len() - 1],
    }
}

/// test_pooling.cpp: every kernel/stride/pad triple over max and average pooling, each pad
/// mode, global and adaptive pooling.
#[test]
fn ncnn_pooling_tests() {
    let mut rng = Rng(401);
    let mut cases = Vec::new();
    let ksp = [
        (2, 1, 0),
        (2, 2, 0),
        (3, 1, 0),
        (3, 2, 1),
        (4, 1, 0),
        (4, 2, 1),
        (5, 1, 0),
        (5, 2, 2),
        (7, 1, 0),
        (7, 2, 1),
        (7, 3, 2),
    ];
    // (channels, pad mode, count include pad) per pooling type
    let max_sets = [
        (1, 0, 0),
        (2, 1, 0),
        (3, 2, 0),
        (4, 3, 0),
        (7, 0, 0),
        (8, 1, 0),
        (15, 2, 0),
        (16, 3, 0),
    ];
    let avg_sets = [
        (1, 0, 0),
        (2, 1, 0),
        (3, 0, 1),
        (4, 1, 0),
        (7, 0, 0),
        (8, 1, 1),
        (12, 2, 1),
        (15, 0, 0),
        (16, 1, 0),
        (64, 3, 1),
    ];
    for (kind, sets) in [(0, &max_sets[..]), (1, &avg_sets[..])] {
        let mut group = Vec::new();
        for (k, s, p) in ksp {
            for (c, mode, include) in sets {
                let params = format!("0={kind} 1={k} 2={s} 3={p} 5={mode} 6={include}");
                group.push(unary_case(
                    &mut rng,
                    "Pooling",
                    &params,
                    &[9, 7, *c],
                    RANDOM,
                ));
            }
        }
        cases.extend(sample(group, 12));
    }
    // global pooling, and its reduced-size windows
    let mut group = Vec::new();
    for (w, h, c, kind) in [
        (2, 5, 1, 0),
        (5, 2, 1, 1),
        (3, 6, 3, 0),
        (6, 3, 3, 1),
        (4, 4, 4, 0),
        (6, 4, 4, 1),
        (8, 7, 8, 0),
        (7, 8, 8, 1),
        (11, 13, 16, 0),
        (13, 11, 16, 1),
        (110, 103, 106, 0),
        (130, 101, 106, 1),
        (80, 93, 128, 0),
        (80, 91, 128, 1),
    ] {
        let params = format!("0={kind} 1=1 2=1 4=1");
        group.push(unary_case(&mut rng, "Pooling", &params, &[w, h, c], RANDOM));
    }
    group.push(unary_case(
        &mut rng,
        "Pooling",
        "0=0 1=2 2=2",
        &[48, 48, 4],
        RANDOM,
    ));
    group.push(unary_case(
        &mut rng,
        "Pooling",
        "0=0 1=2 2=2 3=1",
        &[48, 48, 15],
        RANDOM,
    ));
    cases.extend(sample(group, 6));
    // adaptive pooling to every output size up to past the input's
    for kind in [1, 0] {
        let mut group = Vec::new();
        for (w, h, c) in [
            (2, 5, 1),
            (5, 2, 1),
            (3, 6, 3),
            (4, 4, 4),
            (6, 4, 4),
            (8, 7, 8),
        ] {
            for out in 1..=w.max(h) + 1 {
                let params = format!("0={kind} 1=1 2=1 7=1 8={out}");
                group.push(unary_case(&mut rng, "Pooling", &params, &[w, h, c], RANDOM));
            }
        }
        cases.extend(sample(group, 8));
    }
    // average pooling counting the pad, output sizes ignored without adaptive pooling
    let mut group = Vec::new();
    for (w, h, out) in [(11, 13, 1), (11, 13, 7), (13, 11, 2), (13, 11, 12)] {
        let params = format!("0=0 1=1 2=1 6=1 8={out}");
        group.push(unary_case(
            &mut rng,
            "Pooling",
            &params,
            &[w, h, 16],
            RANDOM,
        ));
    }
    cases.extend(sample(group, 2));
    check_suite(cases, false);
}

/// test_padding.cpp: constant, replicate and reflect padding on every side, per-channel pad
/// values, over 4-D, 3-D, 2-D and 1-D blobs.
#[test]
fn ncnn_padding_tests() {
    let mut rng = Rng(402);
    let mut cases = Vec::new();
    // (top, bottom, left, right, front, behind, type, value, per-channel)
    type Pad = (i32, i32, i32, i32, i32, i32, i32, f32, bool);
    let four: &[Pad] = &[
        (0, 0, 0, 0, 0, 0, 0, 0.0, false),
        (2, 2, 2, 2, 2, 2, 0, 1.0, false),
        (2, 1, 2, 1, 2, 1, 0, 0.0, true),
        (0, 1, 0, 1, 0, 1, 0, 0.0, false),
        (1, 2, 3, 4, 5, 6, 0, 0.0, false),
        (2, 3, 2, 3, 2, 3, 0, 0.0, false),
        (1, 1, 1, 1, 1, 1, 0, -1.0, false),
        (1, 2, 3, 1, 2, 1, 1, 0.0, false),
        (2, 1, 1, 3, 1, 2, 1, 0.0, false),
        (1, 1, 2, 1, 1, 1, 1, 0.0, false),
        (2, 1, 1, 2, 1, 2, 2, 0.0, false),
        (1, 2, 2, 1, 2, 1, 2, 0.0, false),
        (1, 1, 1, 2, 1, 1, 2, 0.0, false),
    ];
    let three: &[Pad] = &[
        (0, 0, 0, 0, 0, 0, 0, 0.0, false),
        (2, 2, 2, 2, 0, 0, 0, -3.0, false),
        (2, 1, 2, 1, 0, 0, 0, 0.0, true),
        (0, 1, 0, 1, 0, 0, 1, 0.0, false),
        (1, 2, 3, 4, 0, 0, 1, 0.0, false),
        (2, 3, 2, 3, 0, 0, 2, 0.0, false),
        (1, 1, 2, 1, 0, 0, 2, 0.0, false),
        (3, 3, 3, 3, 0, 0, 0, 2.0, true),
    ];
    let two: &[Pad] = &[
        (0, 0, 0, 0, 0, 0, 0, 0.0, false),
        (0, 0, 1, 1, 0, 0, 0, 1.0, false),
        (0, 0, 3, 4, 0, 0, 1, 0.0, false),
        (0, 0, 3, 2, 0, 0, 2, 0.0, false),
        (2, 2, 2, 2, 0, 0, 0, 2.0, false),
        (16, 16, 2, 5, 0, 0, 0, -1.0, false),
        (3, 1, 3, 1, 0, 0, 1, 0.0, false),
        (4, 4, 0, 1, 0, 0, 1, 0.0, false),
        (2, 3, 2, 3, 0, 0, 2, 0.0, false),
        (2, 6, 1, 0, 0, 0, 2, 0.0, false),
    ];
    let one: &[Pad] = &[
        (0, 0, 0, 0, 0, 0, 0, 0.0, false),
        (0, 0, 2, 2, 0, 0, 0, 1.0, false),
        (0, 0, 32, 16, 0, 0, 0, -1.0, false),
        (0, 0, 0, 1, 0, 0, 1, 0.0, false),
        (0, 0, 4, 12, 0, 0, 1, 0.0, false),
        (0, 0, 2, 3, 0, 0, 2, 0.0, false),
        (0, 0, 10, 6, 0, 0, 2, 0.0, false),
    ];
    let blobs: [(&[Pad], [&[usize]; 3]); 4] = [
        (four, [&[9, 10, 11, 96], &[10, 12, 13, 44], &[8, 7, 9, 13]]),
        (three, [&[9, 11, 96], &[10, 13, 44], &[8, 9, 13]]),
        (two, [&[15, 96], &[19, 44], &[17, 15]]),
        (one, [&[128], &[124], &[127]]),
    ];
    for (pads, shapes) in blobs {
        let mut group = Vec::new();
        for &(top, bottom, left, right, front, behind, kind, value, per_channel) in pads {
            for sizes in shapes {
                let c = if per_channel { channels(sizes) } else { 0 };
                let params = format!(
                    "0={top} 1={bottom} 2={left} 3={right} 4={kind} 5={value} 6={c} 7={front} 8={behind}"
                );
                let inputs = vec![random_mat(&mut rng, "x", sizes, RANDOM)];
                let weights = vec![random_values(&mut rng, c, RANDOM)];
                group.push(case_with("Padding", params, inputs, weights));
            }
        }
        cases.extend(sample(group, 10));
    }
    check_suite(cases, false);
}

/// test_permute.cpp: every order type of 1-D, 2-D, 3-D and 4-D blobs.
#[test]
fn ncnn_permute_tests() {
    let mut rng = Rng(403);
    let mut cases = Vec::new();
    let sets: [(usize, &[&[usize]]); 4] = [
        (1, &[&[128], &[127]]),
        (2, &[&[12, 32], &[8, 15], &[11, 16], &[7, 9]]),
        (
            6,
            &[
                &[8, 16, 32],
                &[12, 8, 16],
                &[7, 14, 12],
                &[4, 4, 13],
                &[1, 2, 7],
                &[8, 5, 6],
            ],
        ),
        (
            24,
            &[
                &[8, 12, 16, 32],
                &[12, 4, 8, 16],
                &[7, 8, 14, 12],
                &[4, 4, 4, 13],
                &[1, 2, 3, 7],
                &[8, 6, 5, 6],
            ],
        ),
    ];
    for (orders, shapes) in sets {
        let mut group = Vec::new();
        for order in 0..orders {
            for sizes in shapes {
                group.push(unary_case(
                    &mut rng,
                    "Permute",
                    &format!("0={order}"),
                    sizes,
                    RANDOM,
                ));
            }
        }
        cases.extend(sample(group, 12));
    }
    check_suite(cases, false);
}

/// test_softmax.cpp: every axis, counted from either end, of 4-D, 3-D, 2-D and 1-D blobs.
#[test]
fn ncnn_softmax_tests() {
    let mut rng = Rng(404);
    let mut cases = Vec::new();
    let shapes: [&[&[usize]]; 4] = [
        &[
            &[23, 25, 27, 32],
            &[21, 22, 19, 40],
            &[24, 27, 29, 28],
            &[25, 23, 25, 31],
        ],
        &[&[25, 27, 32], &[22, 19, 40], &[27, 29, 28], &[23, 25, 31]],
        &[&[125, 32], &[147, 40], &[127, 28], &[129, 31]],
        &[&[128], &[120], &[124], &[127]],
    ];
    for set in shapes {
        let mut group = Vec::new();
        for sizes in set {
            let dims = sizes.len() as i32;
            for axis in -dims..dims {
                let params = format!("0={axis} 1=1");
                group.push(unary_case(&mut rng, "Softmax", &params, sizes, RANDOM));
            }
        }
        cases.extend(sample(group, 6));
    }
    check_suite(cases, false);
}

/// test_concat.cpp: along every axis (from either end) of 4-D, 3-D, 2-D and 1-D blobs, the
/// concatenated axis in sizes that pack by 8, 4 and not at all, in every order.
#[test]
fn ncnn_concat_tests() {
    let mut rng = Rng(405);
    let mut cases = Vec::new();
    // per dims: the blobs along each axis (axis 0 first)
    let sets: [&[[&[usize]; 4]]; 4] = [
        &[
            [
                &[15, 5, 6, 13],
                &[15, 5, 6, 20],
                &[15, 5, 6, 24],
                &[15, 5, 6, 48],
            ],
            [
                &[15, 3, 15, 13],
                &[15, 3, 16, 20],
                &[15, 3, 17, 24],
                &[15, 3, 18, 48],
            ],
            [
                &[15, 15, 6, 13],
                &[15, 16, 6, 20],
                &[15, 17, 6, 24],
                &[15, 18, 6, 48],
            ],
            [
                &[15, 5, 7, 13],
                &[16, 5, 7, 20],
                &[17, 5, 7, 24],
                &[18, 5, 7, 48],
            ],
        ],
        &[
            [&[15, 13, 13], &[15, 13, 20], &[15, 13, 24], &[15, 13, 48]],
            [&[15, 15, 13], &[15, 16, 20], &[15, 17, 24], &[15, 18, 48]],
            [&[15, 13, 13], &[16, 13, 20], &[17, 13, 24], &[18, 13, 48]],
        ],
        &[
            [&[19, 29], &[19, 44], &[19, 56], &[19, 80]],
            [&[19, 29], &[16, 44], &[17, 56], &[18, 80]],
        ],
        &[[&[29], &[44], &[56], &[80]]],
    ];
    for set in sets {
        let dims = set[0][0].len() as i32;
        let mut group = Vec::new();
        for (axis, blobs) in set.iter().enumerate() {
            let axis = axis as i32;
            for negative in [false, true] {
                let a = if negative { axis - dims } else { axis };
                if axis == 0 {
                    // three blobs of any sizes along the axis, the last twice
                    for (i, j, k) in [(0, 1, 2), (3, 0, 1), (2, 2, 3), (1, 3, 0), (0, 0, 0)] {
                        let inputs = [i, j, k, k]
                            .iter()
                            .map(|&n| random_mat(&mut rng, "x", blobs[n], RANDOM))
                            .collect();
                        group.push(case_with("Concat", format!("0={a}"), inputs, vec![]));
                    }
                } else {
                    for b in blobs {
                        let inputs = (0..3)
                            .map(|_| random_mat(&mut rng, "x", b, RANDOM))
                            .collect();
                        group.push(case_with("Concat", format!("0={a}"), inputs, vec![]));
                    }
                }
            }
        }
        cases.extend(sample(group, 10));
    }
    // beyond test_concat.cpp: 4-D blobs of depth 1 joined along h, of different heights (the
    // view's rows, not slabs of one height)
    let inputs = [[5, 3, 1, 8], [5, 5, 1, 8]]
        .iter()
        .map(|sizes| random_mat(&mut rng, "x", sizes, RANDOM))
        .collect();
    cases.push(case_with("Concat", "0=2".to_string(), inputs, vec![]));
    check_suite(cases, false);
}

/// test_eltwise.cpp: product, sum and max of two to five blobs, with and without coefficients.
#[test]
fn ncnn_eltwise_tests() {
    let mut rng = Rng(406);
    let mut cases = Vec::new();
    let sets: [(usize, &[&[usize]]); 7] = [
        (2, &[&[16, 12, 12], &[15, 11, 24], &[9, 5, 7]]),
        (3, &[&[15, 11, 16]]),
        (4, &[&[7, 3, 5]]),
        (5, &[&[12, 4, 16]]),
        (2, &[&[16, 12], &[11, 24], &[9, 7]]),
        (2, &[&[128], &[124], &[127]]),
        (3, &[&[13, 9, 7, 16]]),
    ];
    let mut group = Vec::new();
    for (n, shapes) in sets {
        for sizes in shapes {
            for op in 0..3 {
                for coeffs in [false, true] {
                    let inputs: Vec<Input> = (0..n)
                        .map(|_| random_mat(&mut rng, "x", sizes, RANDOM))
                        .collect();
                    let mut params = format!("0={op}");
                    if coeffs {
                        let c = random_values(&mut rng, n, RANDOM);
                        let list: Vec<String> = c.iter().map(|v| v.to_string()).collect();
                        params += &format!(" -23301={n},{}", list.join(","));
                    }
                    group.push(case_with("Eltwise", params, inputs, vec![]));
                }
            }
        }
    }
    cases.extend(sample(group, 24));
    check_suite(cases, false);
}

/// test_batchnorm.cpp: slope, mean, variance (positive) and bias per channel, with and without
/// epsilon.
#[test]
fn ncnn_batchnorm_tests() {
    let mut rng = Rng(407);
    let mut group = Vec::new();
    for (sizes, eps) in [
        (&[5, 6, 7, 24][..], 0.0),
        (&[7, 8, 9, 12], 0.001),
        (&[3, 4, 5, 13], 0.0),
        (&[3, 4, 5, 32], 0.001),
        (&[5, 7, 24], 0.0),
        (&[5, 7, 24], 0.01),
        (&[7, 9, 12], 0.001),
        (&[3, 5, 13], 0.0),
        (&[3, 5, 16], 0.001),
        (&[3, 5, 32], 0.001),
        (&[15, 24], 0.0),
        (&[17, 12], 0.001),
        (&[19, 15], 0.01),
        (&[128], 0.0),
        (&[124], 0.001),
        (&[127], 0.01),
    ] {
        let c = channels(sizes);
        let inputs = vec![random_mat(&mut rng, "x", sizes, RANDOM)];
        let weights = vec![
            random_values(&mut rng, c, RANDOM),
            random_values(&mut rng, c, RANDOM),
            random_values(&mut rng, c, (0.001, 2.0)),
            random_values(&mut rng, c, RANDOM),
        ];
        group.push(case_with(
            "BatchNorm",
            format!("0={c} 1={eps}"),
            inputs,
            weights,
        ));
    }
    check_suite(sample(group, 10), false);
}

/// test_scale.cpp: a scale (and bias) per channel from the weights, and from a second blob
/// (`0=-233`, as in attention blocks).
#[test]
fn ncnn_scale_tests() {
    let mut rng = Rng(408);
    let mut group = Vec::new();
    let shapes: [&[usize]; 14] = [
        &[5, 3, 48],
        &[5, 7, 24],
        &[7, 9, 12],
        &[3, 5, 13],
        &[13, 48],
        &[15, 24],
        &[17, 12],
        &[19, 15],
        &[128],
        &[124],
        &[127],
        &[5, 6, 48],
        &[25, 48],
        &[6, 5, 4, 16],
    ];
    for sizes in shapes {
        let c = channels(sizes);
        for bias in [0, 1] {
            let inputs = vec![random_mat(&mut rng, "x", sizes, RANDOM)];
            let mut weights = vec![random_values(&mut rng, c, RANDOM)];
            if bias == 1 {
                weights.push(random_values(&mut rng, c, RANDOM));
            }
            group.push(case_with(
                "Scale",
                format!("0={c} 1={bias}"),
                inputs,
                weights,
            ));
        }
        let inputs = vec![
            random_mat(&mut rng, "x", sizes, RANDOM),
            random_mat(&mut rng, "s", &[c], RANDOM),
        ];
        group.push(case_with("Scale", "0=-233".into(), inputs, vec![]));
    }
    check_suite(sample(group, 18), false);
}

/// test_flatten.cpp and test_shufflechannel.cpp.
#[test]
fn ncnn_flatten_and_shufflechannel_tests() {
    let mut rng = Rng(409);
    let mut cases = Vec::new();
    let group = [
        &[2, 3, 4, 4][..],
        &[3, 5, 7, 8],
        &[1, 1, 1, 16],
        &[9, 10, 2, 16],
        &[1, 7, 1, 1],
        &[6, 6, 6, 15],
        &[2, 4, 4],
        &[3, 5, 8],
        &[1, 1, 16],
        &[9, 10, 16],
        &[1, 7, 1],
        &[6, 6, 15],
        &[13, 13],
        &[16, 16],
        &[8, 12],
        &[8, 2],
        &[32],
        &[17],
    ]
    .iter()
    .map(|s| unary_case(&mut rng, "Flatten", "", s, RANDOM))
    .collect();
    cases.extend(sample(group, 8));
    let mut group = Vec::new();
    for (w, h, c, g) in [
        (3, 7, 1, 1),
        (5, 7, 2, 2),
        (3, 9, 3, 3),
        (5, 7, 4, 2),
        (3, 7, 12, 3),
        (5, 9, 12, 4),
        (3, 7, 12, 6),
        (5, 7, 15, 3),
        (3, 9, 15, 5),
        (5, 7, 16, 2),
        (5, 9, 16, 4),
        (3, 7, 16, 8),
        (1, 1, 20, 2),
        (5, 7, 20, 2),
        (5, 7, 24, 2),
        (3, 7, 24, 3),
        (5, 9, 24, 4),
        (3, 7, 32, 2),
        (3, 7, 32, 8),
        (5, 7, 48, 2),
        (5, 7, 48, 3),
        (5, 9, 64, 4),
    ] {
        for reverse in [0, 1] {
            let params = format!("0={g} 1={reverse}");
            group.push(unary_case(
                &mut rng,
                "ShuffleChannel",
                &params,
                &[w, h, c],
                RANDOM,
            ));
            group.push(unary_case(
                &mut rng,
                "ShuffleChannel",
                &params,
                &[w, h, 3, c],
                RANDOM,
            ));
        }
    }
    cases.extend(sample(group, 12));
    check_suite(cases, false);
}
