//! ncnn's tests of the normalizations and reductions through the suite: test_layernorm.cpp,
//! test_rmsnorm.cpp, test_groupnorm.cpp, test_instancenorm.cpp, test_mvn.cpp,
//! test_normalize.cpp, test_statisticspooling.cpp, test_reduction.cpp and
//! test_cumulativesum.cpp (ncnn has no ArgMax test: its cases here are fpshader's).

use super::suite::*;
use super::*;

/// ncnn's channel count of RandomMat sizes (w, h, [d,] c): w for 1-D, h for 2-D, else c.
fn channels_of(sizes: &[usize]) -> usize {
    match sizes.len() {
        1 => sizes[0],
        2 => sizes[1],
        _ => *sizes.last().unwrap(),
    }
}

/// A case with gamma (and beta) of `len` as weights.
fn weighted(
    rng: &mut Rng,
    kind: &'static str,
    params: String,
    sizes: &[usize],
    len: usize,
    beta: bool,
) -> Case {
    let mut case = unary_case(rng, kind, &params, sizes, RANDOM);
    if len > 0 {
        case.weights = random_mat(rng, "g", &[len], RANDOM).values;
        if beta {
            case.weights
                .extend(random_mat(rng, "b", &[len], RANDOM).values);
        }
    }
    case
}

#[test]
fn ncnn_layernorm_and_rmsnorm_tests() {
    let mut rng = Rng(301);
    let mut cases = Vec::new();
    // (sizes, affine size, eps) from test_layernorm.cpp and test_rmsnorm.cpp
    let sets: &[(&[usize], usize, f32)] = &[
        (&[6, 4, 2], 6, 0.01),
        (&[4, 5, 6], 4, 0.01),
        (&[3, 3, 8], 3, 0.002),
        (&[5, 6, 12], 5, 0.02),
        (&[6, 7, 24], 6, 0.001),
        (&[5, 8, 32], 5, 0.001),
        (&[6, 4, 2], 24, 0.01),
        (&[4, 5, 6], 20, 0.01),
        (&[4, 7, 16], 28, 0.02),
        (&[5, 8, 32], 40, 0.001),
        (&[4, 2], 4, 0.01),
        (&[5, 6], 5, 0.01),
        (&[7, 24], 7, 0.001),
        (&[8, 32], 8, 0.001),
        (&[2], 2, 0.01),
        (&[12], 12, 0.02),
        (&[32], 32, 0.001),
        (&[5, 3, 2, 8], 5, 0.01),
        (&[4, 3, 2, 5], 12, 0.002),
        (&[5, 3, 2, 8], 30, 0.001),
    ];
    for (kind, beta) in [("LayerNorm", true), ("RMSNorm", false)] {
        let mut group = Vec::new();
        for (sizes, size, eps) in sets {
            for affine in [0, 1] {
                let params = format!("0={size} 1={eps} 2={affine}");
                let len = if affine == 1 { *size } else { 0 };
                group.push(weighted(&mut rng, kind, params, sizes, len, beta));
            }
        }
        cases.extend(sample(group, 12));
    }
    check_suite(cases, false);
}

#[test]
fn ncnn_groupnorm_and_instancenorm_tests() {
    let mut rng = Rng(302);
    let mut cases = Vec::new();
    let groupnorm: &[(&[usize], usize, f32)] = &[
        (&[3, 6, 4, 2], 1, 0.01),
        (&[2, 3, 3, 8], 2, 0.002),
        (&[5, 6, 7, 24], 2, 0.001),
        (&[6, 4, 2], 1, 0.01),
        (&[3, 3, 8], 2, 0.002),
        (&[4, 5, 6], 3, 0.01),
        (&[5, 6, 12], 4, 0.02),
        (&[8, 9, 24], 3, 0.0001),
        (&[24, 2], 1, 0.01),
        (&[23, 8], 2, 0.002),
        (&[29, 24], 3, 0.0001),
        (&[12], 1, 0.01),
        (&[36], 3, 0.01),
        (&[324], 3, 0.0001),
    ];
    let mut group = Vec::new();
    for (sizes, groups, eps) in groupnorm {
        let c = channels_of(sizes);
        for affine in [0, 1] {
            let params = format!("0={groups} 1={c} 2={eps} 3={affine}");
            let len = if affine == 1 { c } else { 0 };
            group.push(weighted(&mut rng, "GroupNorm", params, sizes, len, true));
        }
    }
    cases.extend(sample(group, 12));
    let instancenorm: &[(&[usize], f32)] = &[
        (&[6, 4, 2], 0.01),
        (&[3, 3, 12], 0.002),
        (&[5, 7, 16], 0.02),
        (&[5, 4, 3, 3], 0.01),
        (&[3, 3, 2, 8], 0.002),
    ];
    for (sizes, eps) in instancenorm {
        let c = *sizes.last().unwrap();
        for affine in [0, 1] {
            let params = format!("0={} 1={eps} 2={affine}", if affine == 1 { c } else { 0 });
            let len = if affine == 1 { c } else { 0 };
            cases.push(weighted(&mut rng, "InstanceNorm", params, sizes, len, true));
        }
    }
    check_suite(cases, false);
}

/// Groups larger than one workgroup's tile of `normalize_vec4.comp` (8192 values: split into
/// partials, their combination and the apply, a ragged last tile) and groups in whole vec4s
/// (one dispatch): not in ncnn's tests, which stay below both. Always run, not sampled.
#[test]
fn normalizations_of_large_and_vec4_groups() {
    let mut rng = Rng(304);
    let cases = vec![
        weighted(
            &mut rng,
            "LayerNorm",
            "0=8196 1=0.001 2=1".into(),
            &[8196, 2],
            8196,
            true,
        ),
        weighted(
            &mut rng,
            "LayerNorm",
            "0=64 1=0.001 2=1".into(),
            &[64, 5, 3],
            64,
            true,
        ),
        weighted(
            &mut rng,
            "RMSNorm",
            "0=12288 1=0.001 2=1".into(),
            &[12288],
            12288,
            false,
        ),
        weighted(
            &mut rng,
            "GroupNorm",
            "0=2 1=8 2=0.001 3=1".into(),
            &[64, 64, 8],
            8,
            true,
        ),
        weighted(
            &mut rng,
            "GroupNorm",
            "0=3 1=6 2=0.001 3=1".into(),
            &[7, 4, 6],
            6,
            true,
        ),
        weighted(
            &mut rng,
            "GroupNorm",
            "0=4 1=8 2=0.001 3=1".into(),
            &[6, 8],
            8,
            true,
        ),
        weighted(
            &mut rng,
            "InstanceNorm",
            "0=2 1=0.001 2=1".into(),
            &[100, 100, 2],
            2,
            true,
        ),
        unary_case(&mut rng, "MVN", "0=1 1=0 2=0.001", &[96, 96, 2], RANDOM),
        unary_case(&mut rng, "MVN", "0=0 1=1 2=0.001", &[48, 96, 2], RANDOM),
        weighted(
            &mut rng,
            "Normalize",
            "0=1 4=0 1=0 2=0.001 9=1 3=2".into(),
            &[96, 96, 2],
            2,
            false,
        ),
    ];
    check_suite(cases, false);
}

#[test]
fn ncnn_mvn_normalize_and_statisticspooling_tests() {
    let mut rng = Rng(303);
    let mut cases = Vec::new();
    // test_mvn.cpp's cases, and the same on 3-D, 2-D and 1-D blobs for the GPU
    for sizes in [&[5, 4, 3, 3][..], &[3, 3, 2, 8], &[5, 7, 8], &[6, 5], &[30]] {
        for (variance, across, eps) in
            [(0, 0, 0.0001), (1, 0, 0.001), (0, 1, 0.0001), (1, 1, 0.001)]
        {
            let params = format!("0={variance} 1={across} 2={eps}");
            cases.push(unary_case(&mut rng, "MVN", &params, sizes, RANDOM));
        }
    }
    // test_normalize.cpp: (across_spatial, across_channel) pairs, shared or per-channel
    // scales, each eps mode
    let mut group = Vec::new();
    for sizes in [
        &[6, 4, 2][..],
        &[5, 7, 8],
        &[5, 6, 3],
        &[2, 3, 5],
        &[4, 6, 8],
        &[5, 4, 3, 3],
        &[3, 3, 2, 8],
    ] {
        for (spatial, channel) in [(1, 0), (0, 1), (1, 1)] {
            for shared in [0, 1] {
                for (mode, eps) in [(0, 0.01), (1, 0.001), (2, 0.002)] {
                    let c = *sizes.last().unwrap();
                    let len = if shared == 1 { 1 } else { c };
                    let params =
                        format!("0={spatial} 4={channel} 1={shared} 2={eps} 9={mode} 3={len}");
                    group.push(weighted(&mut rng, "Normalize", params, sizes, len, false));
                }
            }
        }
    }
    cases.extend(sample(group, 20));
    for sizes in [&[5, 4, 3, 3][..], &[3, 3, 2, 8], &[5, 7, 8], &[6, 5], &[30]] {
        for stddev in [0, 1] {
            let params = format!("0={stddev}");
            cases.push(unary_case(
                &mut rng,
                "StatisticsPooling",
                &params,
                sizes,
                RANDOM,
            ));
        }
    }
    check_suite(cases, false);
}

/// `3=axes` with `5=1`, as test_reduction.cpp sets them.
fn reduce_axes(axes: &[i32]) -> String {
    format!("1=0 {} 5=1", array_param(3, axes))
}

#[test]
fn ncnn_reduction_tests() {
    let mut rng = Rng(304);
    let mut cases = Vec::new();
    let subsets = |n: i32| -> Vec<Vec<i32>> {
        (1..1 << n)
            .map(|m: i32| (0..n).filter(|a| m >> a & 1 == 1).collect())
            .collect()
    };
    for op in 0..11 {
        let range = if op == 9 || op == 10 {
            (0.001, 2.0)
        } else {
            RANDOM
        };
        let mut group = Vec::new();
        for sizes in [
            &[5, 6, 7, 24][..],
            &[3, 4, 5, 13],
            &[5, 7, 24],
            &[3, 5, 13],
            &[15, 24],
            &[19, 15],
            &[128],
            &[127],
        ] {
            for keepdims in [0, 1] {
                for coeff in [1.0, 2.0] {
                    let params = format!("0={op} 1=1 2={coeff} 4={keepdims}");
                    group.push(unary_case(&mut rng, "Reduction", &params, sizes, range));
                }
                for axes in subsets(sizes.len() as i32) {
                    let params = format!("0={op} 2=2 4={keepdims} {}", reduce_axes(&axes));
                    group.push(unary_case(&mut rng, "Reduction", &params, sizes, range));
                }
            }
        }
        cases.extend(sample(group, 10));
        // over the rows and columns of a blob of whole blocks of 4 channels: pack4 on the
        // device, through its scalar view, into a pack4 output
        for (axes, keepdims) in [(&[1, 2][..], 1), (&[-1, -2], 0)] {
            let params = format!("0={op} 2=0.5 4={keepdims} {}", reduce_axes(axes));
            cases.push(unary_case(
                &mut rng,
                "Reduction",
                &params,
                &[9, 7, 12],
                range,
            ));
        }
    }
    check_suite(cases, false);
}

#[test]
fn ncnn_cumulativesum_and_argmax_tests() {
    let mut rng = Rng(305);
    let mut cases = Vec::new();
    let sets: &[(&[usize], &[i32])] = &[
        (&[5, 4, 3, 6], &[0, 1, 2, 3, -4, -1]),
        (&[6], &[0]),
        (&[101], &[0, -1]),
        (&[6, 8], &[0]),
        (&[20, 103], &[1]),
        (&[106, 50], &[-1, -2]),
        (&[10, 6, 8], &[0]),
        (&[303, 20, 103], &[1]),
        (&[106, 50, 99], &[2]),
        (&[303, 200, 103], &[-1, -2]),
    ];
    let mut group = Vec::new();
    for (sizes, axes) in sets {
        for axis in *axes {
            let params = format!("0={axis}");
            group.push(unary_case(
                &mut rng,
                "CumulativeSum",
                &params,
                sizes,
                RANDOM,
            ));
        }
    }
    cases.extend(sample(group, 8));
    check_suite(cases, false);
}

/// ArgMax (CPU only, as in ncnn; ncnn's wheel is built without it and ncnn has no test of
/// it): against a full sort of (value, index) pairs, largest first, as ncnn's partial sort
/// orders them.
#[test]
fn argmax_is_the_top_of_a_full_sort() {
    let mut rng = Rng(306);
    for sizes in [&[5, 4, 3, 6][..], &[10, 6, 8], &[20, 13], &[101]] {
        for (out_max_val, topk) in [(0, 1), (1, 1), (0, 5), (1, 7)] {
            let mut x = random_mat(&mut rng, "x", sizes, RANDOM);
            // ties, which ncnn breaks towards the larger index
            x.values[3] = x.values[7];
            let param = one_layer("ArgMax", &["x"], &format!("0={out_max_val} 1={topk}"));
            let net = load_net(&param, &[], RunOptions::fp32(), None).unwrap();
            let mut ex = net.create_extractor().unwrap();
            ex.input("x", x.mat()).unwrap();
            let got = ex.extract("out").unwrap();
            let mut pairs: Vec<(f32, usize)> = x.values.iter().copied().zip(0..).collect();
            pairs.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
            let top = &pairs[..topk];
            let mut want: Vec<f32> = Vec::new();
            if out_max_val == 1 {
                want.extend(top.iter().map(|p| p.0));
            }
            want.extend(top.iter().map(|p| p.1 as f32));
            assert_eq!(
                got.to_values(),
                want,
                "ArgMax {out_max_val} {topk} on {sizes:?}"
            );
            assert_eq!(got.numpy_shape(), vec![1 + out_max_val as usize, topk]);
        }
    }
}

/// test_embed.cpp: tables with and without bias, fp32 and int8 with a scale.
#[test]
fn ncnn_embed_tests() {
    let mut rng = Rng(307);
    let mut cases = Vec::new();
    for (n, int8) in [
        (128, false),
        (127, false),
        (124, false),
        (128, true),
        (127, true),
    ] {
        for bias in [0, 1] {
            let mut x = random_mat(&mut rng, "x", &[n], (0.0, 1.0));
            x.values = x
                .values
                .iter()
                .map(|v| (v * (n - 1) as f32).round())
                .collect();
            x.int = true;
            // the table as `load(n, 0)` reads it: a tag, then fp32 or int8 values
            let table = n * n;
            let mut weights = Vec::new();
            if int8 {
                weights.extend(s8_weights(&mut rng, table));
            } else {
                weights.push(0.0);
                weights.extend(random_mat(&mut rng, "w", &[table], RANDOM).values);
            }
            if bias == 1 {
                weights.extend(random_mat(&mut rng, "b", &[n], RANDOM).values);
            }
            let mut params = format!("0={n} 1={n} 2={bias} 3={table}");
            if int8 {
                params.push_str(" 18=2");
                weights.extend(random_mat(&mut rng, "s", &[1], (100.0, 200.0)).values);
            }
            cases.push(Case {
                kind: "Embed",
                params,
                inputs: vec![x],
                weights,
                tops: 1,
            });
        }
    }
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
