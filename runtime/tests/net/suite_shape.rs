//! ncnn's tests of the strided shape layers through the suite: test_pixelshuffle.cpp,
//! test_reorg.cpp, test_tile.cpp, test_flip.cpp, test_deepcopy.cpp, test_diag.cpp,
//! test_glu.cpp and test_copyto.cpp.

use super::suite::*;
use super::*;

#[test]
fn ncnn_pixelshuffle_reorg_and_deepcopy_tests() {
    let mut rng = Rng(201);
    let mut cases = Vec::new();
    for mode in 0..2 {
        let mut group = Vec::new();
        for (sizes, r) in [
            (&[7, 7, 1][..], 1),
            (&[7, 7, 8], 2),
            (&[7, 7, 12], 2),
            (&[7, 7, 64], 4),
            (&[7, 7, 32], 2),
            (&[7, 7, 48], 2),
            (&[7, 7, 36], 3),
            (&[7, 7, 72], 3),
            (&[7, 7, 90], 3),
            (&[8, 3, 8], 2),
            (&[13, 3, 8], 2),
            (&[5, 3, 64], 4),
        ] {
            let params = format!("0={r} 1={mode}");
            group.push(unary_case(&mut rng, "PixelShuffle", &params, sizes, RANDOM));
        }
        cases.extend(sample(group, 6));
        let mut group = Vec::new();
        for (sizes, s) in [
            (&[6, 7, 1][..], 1),
            (&[6, 6, 2], 2),
            (&[6, 8, 3], 2),
            (&[4, 4, 4], 4),
            (&[8, 8, 8], 2),
            (&[10, 10, 12], 2),
            (&[9, 9, 4], 3),
            (&[9, 9, 16], 3),
        ] {
            let params = format!("0={s} 1={mode}");
            group.push(unary_case(&mut rng, "Reorg", &params, sizes, RANDOM));
        }
        cases.extend(sample(group, 4));
    }
    let group = [
        &[5, 6, 7, 24][..],
        &[7, 8, 9, 12],
        &[3, 4, 5, 13],
        &[5, 7, 24],
        &[7, 9, 12],
        &[3, 5, 13],
        &[15, 24],
        &[17, 12],
        &[19, 15],
        &[128],
        &[124],
        &[127],
    ]
    .iter()
    .map(|s| unary_case(&mut rng, "DeepCopy", "", s, RANDOM))
    .collect();
    cases.extend(sample(group, 6));
    check_suite(cases, false);
}

#[test]
fn ncnn_tile_tests() {
    let mut rng = Rng(202);
    let mut cases = Vec::new();
    /// A shape, its (axis, tiles) pairs and its repeats arrays.
    type TileSet<'a> = (&'a [usize], &'a [(i32, i32)], &'a [&'a [i32]]);
    let sets: &[TileSet] = &[
        (
            &[5, 6, 7, 24],
            &[(0, 3), (1, 4), (2, 5), (3, 2)],
            &[&[3], &[2, 4], &[2, 2, 5], &[3, 1, 3, 2]],
        ),
        (
            &[3, 4, 5, 13],
            &[(0, 3), (1, 4), (2, 5), (3, 2)],
            &[&[3], &[1, 1, 4], &[2, 2, 5], &[3, 2, 1, 9]],
        ),
        (
            &[5, 7, 24],
            &[(0, 5), (1, 4), (2, 4)],
            &[&[5], &[1, 4], &[2, 1, 4], &[1, 2, 1, 4]],
        ),
        (
            &[3, 5, 13],
            &[(0, 1), (1, 2), (2, 2)],
            &[&[1], &[2, 1], &[2, 2, 2], &[2, 1, 2, 1]],
        ),
        (
            &[15, 24],
            &[(0, 2), (1, 1)],
            &[&[2], &[1, 1], &[4, 1, 1], &[2, 4, 4, 1]],
        ),
        (
            &[19, 13],
            &[(0, 5), (1, 6)],
            &[&[5], &[6, 1], &[6, 1, 6], &[3, 2, 1, 1]],
        ),
        (&[128], &[(0, 1), (0, 2)], &[&[10], &[2, 3], &[2, 2, 2]]),
        (&[127], &[(0, 4)], &[&[3], &[2, 1, 3, 1]]),
    ];
    for (sizes, axis_tiles, repeats) in sets {
        let mut group = Vec::new();
        for (axis, tiles) in *axis_tiles {
            let params = format!("0={axis} 1={tiles}");
            group.push(unary_case(&mut rng, "Tile", &params, sizes, RANDOM));
        }
        for r in *repeats {
            group.push(unary_case(
                &mut rng,
                "Tile",
                &array_param(2, r),
                sizes,
                RANDOM,
            ));
        }
        cases.extend(sample(group, 4));
    }
    // every axis of a 4-D blob repeated: a view of eight axes, more than the GPU copy's six
    let repeats = array_param(2, &[2, 2, 3, 2]);
    cases.push(unary_case(
        &mut rng,
        "Tile",
        &repeats,
        &[5, 6, 7, 24],
        RANDOM,
    ));
    check_suite(cases, false);
}

#[test]
fn ncnn_flip_tests() {
    let mut rng = Rng(203);
    let mut cases = Vec::new();
    let subsets = |n: i32| -> Vec<Vec<i32>> {
        (1..1 << n)
            .map(|m: i32| (0..n).filter(|a| m >> a & 1 == 1).collect())
            .collect()
    };
    for sizes in [
        &[5, 6, 7, 24][..],
        &[3, 4, 5, 13],
        &[5, 7, 24],
        &[7, 9, 12],
        &[3, 5, 13],
        &[15, 24],
        &[19, 15],
        &[128],
        &[127],
    ] {
        let group = subsets(sizes.len() as i32)
            .iter()
            .map(|axes| unary_case(&mut rng, "Flip", &array_param(0, axes), sizes, RANDOM))
            .collect();
        cases.extend(sample(group, 3));
    }
    check_suite(cases, false);
}

#[test]
fn ncnn_diag_and_glu_tests() {
    let mut rng = Rng(204);
    let mut cases = Vec::new();
    // test_diag.cpp (its empty-diagonal case, (3, 4) at -6, is an error here: no empty blobs)
    for (sizes, k) in [
        (&[5, 24][..], 3),
        (&[7, 12], 0),
        (&[6, 6], -4),
        (&[5], -1),
        (&[7], 0),
        (&[3], 2),
    ] {
        cases.push(unary_case(
            &mut rng,
            "Diag",
            &format!("0={k}"),
            sizes,
            RANDOM,
        ));
    }
    let glu: &[(&[usize], i32)] = &[
        (&[5, 7, 3, 8], 0),
        (&[5, 7, 6, 3], 1),
        (&[5, 8, 3, 3], -2),
        (&[10, 7, 3, 3], -1),
        (&[6, 7, 24], 0),
        (&[6, 8, 24], 1),
        (&[6, 8, 24], 2),
        (&[36, 7, 22], 0),
        (&[5, 256, 23], -2),
        (&[129, 9, 60], 2),
        (&[129, 9, 30], -1),
        (&[10, 24], 0),
        (&[7, 24], 1),
        (&[128, 22], 0),
        (&[128, 256], 1),
        (&[10], 0),
        (&[20], 0),
        (&[128], 0),
    ];
    let group = glu
        .iter()
        .map(|(s, axis)| unary_case(&mut rng, "GLU", &format!("0={axis}"), s, RANDOM))
        .collect();
    cases.extend(sample(group, 8));
    check_suite(cases, false);
}

#[test]
fn ncnn_copyto_tests() {
    let mut rng = Rng(205);
    let mut cases = Vec::new();
    /// Blobs, blobs to write into them, and (w, h, d, c) offsets.
    type CopySet<'a> = (&'a [&'a [usize]], &'a [&'a [usize]], &'a [[i32; 4]]);
    let sets: &[CopySet] = &[
        (
            &[&[112], &[127]],
            &[&[33], &[64]],
            &[[0, 0, 0, 0], [13, 0, 0, 0], [28, 0, 0, 0], [32, 0, 0, 0]],
        ),
        (
            &[&[72, 112], &[64, 127]],
            &[&[14, 33], &[16, 64], &[24]],
            &[[0, 0, 0, 0], [1, 13, 0, 0], [3, 28, 0, 0], [10, 32, 0, 0]],
        ),
        (
            &[&[32, 42, 81], &[36, 34, 88]],
            &[&[1, 14, 23], &[11, 8, 32], &[12, 1], &[11]],
            &[[0, 0, 0, 0], [0, 1, 0, 13], [4, 3, 0, 28], [5, 0, 0, 32]],
        ),
        (
            &[&[12, 42, 7, 81]],
            &[&[1, 14, 2, 23], &[11, 8, 1], &[12, 1], &[11]],
            &[[0, 0, 0, 0], [0, 1, 1, 13], [4, 3, 0, 28], [5, 0, 2, 32]],
        ),
        (
            &[&[15], &[11, 15], &[4, 5, 16], &[3, 4, 5, 16]],
            &[],
            &[[0, 0, 0, 0]],
        ),
    ];
    for (selves, srcs, offsets) in sets {
        let mut group = Vec::new();
        for a in *selves {
            // the last set copies each blob onto one of its own shape
            let same: [&[usize]; 1] = [a];
            let srcs: &[&[usize]] = if srcs.is_empty() { &same } else { srcs };
            for b in srcs {
                for [w, h, d, c] in *offsets {
                    // test_copyto_3 also writes an 11-wide row at 5 into 12-wide rows, which
                    // ncnn's CPU does by running on into the next row: an error here
                    let fits = |k: usize, off: i32| {
                        // RandomMat's sizes as w, h, d, c
                        let at = |s: &[usize]| match (s.len(), k) {
                            (3, 3) => s[2],
                            (3, 2) => 1,
                            (n, k) if k < n => s[k],
                            _ => 1,
                        };
                        off as usize + at(b) <= at(a)
                    };
                    if !(fits(0, *w) && fits(1, *h) && fits(2, *d) && fits(3, *c)) {
                        continue;
                    }
                    group.push(Case {
                        kind: "CopyTo",
                        params: format!("0={w} 1={h} 13={d} 2={c}"),
                        inputs: vec![
                            random_mat(&mut rng, "a", a, RANDOM),
                            random_mat(&mut rng, "b", b, RANDOM),
                        ],
                        weights: Vec::new(),
                        tops: 1,
                    });
                }
            }
        }
        cases.extend(sample(group, 8));
    }
    check_suite(cases, false);
}

/// test_innerproduct.cpp's shapes for the 2-D (gemm) path, one row among them: ncnn keeps a
/// 2-D input 2-D, one row too; 1-D and 3-D inputs come out 1-D.
#[test]
fn ncnn_innerproduct_shape_tests() {
    let mut rng = Rng(206);
    let mut cases = Vec::new();
    for (sizes, num_input) in [
        (&[23, 1][..], 23),
        (&[16, 7], 16),
        (&[4, 1], 4),
        (&[48], 48),
        (&[1, 1, 12], 12),
        (&[3, 2, 4], 24),
    ] {
        for (num_output, bias) in [(8, 1), (7, 0)] {
            let mut case = unary_case(
                &mut rng,
                "InnerProduct",
                &format!("0={num_output} 1={bias} 2={}", num_output * num_input),
                sizes,
                RANDOM,
            );
            case.weights =
                tagged_weights(&mut rng, num_output * num_input, num_output * bias as usize);
            cases.push(case);
        }
    }
    check_suite(cases, false);
}

/// test_interp.cpp's reference-blob cases (`5=1`: the size is the second input's) and
/// test_interp_1.cpp's size expressions (`9=`), on one or two inputs.
#[test]
fn ncnn_interp_dynamic_size_tests() {
    let mut rng = Rng(304);
    let mut cases = Vec::new();
    for resize in 1..=3 {
        for (a, sizes) in [
            (&[15, 16, 7][..], [(10, 12), (2, 2), (15, 16)]),
            (&[14, 17, 12], [(10, 12), (2, 2), (14, 17)]),
            (&[13, 14, 32], [(10, 12), (2, 2), (14, 17)]),
        ] {
            for (oh, ow) in sizes {
                let params = format!("0={resize} 5=1");
                let reference: &[usize] = &[ow, oh, 1];
                cases.push(case_of(
                    &mut rng,
                    "Interp",
                    params,
                    &[a, reference],
                    RANDOM,
                    1,
                ));
            }
        }
    }
    let expr = |resize: i32, align: i32, e: &str| format!("0={resize} 5=1 6={align} 9=\"{e}\"");
    let (a, b): (&[usize], &[usize]) = (&[32, 25, 3], &[20, 14, 32]);
    for (input, resize, align, e) in [
        (a, 1, 0, "0w,0h"),
        (a, 2, 0, "0w,5"),
        (b, 1, 0, "0w,0h"),
        (b, 2, 0, "0w,5"),
        (
            a,
            3,
            0,
            "square(neg(abs(max(min(//(*(-(+(0w,1),-1),4),4),100),-4)))),0h",
        ),
        (
            a,
            1,
            0,
            "square(neg(abs(max(min(//(*(-(+(0w,1.0),-1.0),2.0),2.0),100.3),-2.2)))),0h",
        ),
        (
            a,
            2,
            1,
            "0w,trunc(*(round(-(floor(+(ceil(*(0w,1.2)),0.7)),-0.4)),1.0001))",
        ),
        (
            a,
            3,
            0,
            "*(0d,4),ceil(sqrt(square(*(asinh(sinh(atanh(tanh(atan(tan(acos(cos(asin(sin(/(0w,2))))))))))),16))))",
        ),
        (&[14, 15, 16], 1, 0, "*(0w,0.5),/(0h,3)"),
        (&[14, 15, 16], 1, 0, "1,4"),
        (&[14, 15, 16], 2, 1, "*(0w,0h),0c"),
        (&[22, 13], 1, 0, "//(0w,3)"),
        (&[22, 13], 2, 0, "-(0w,5)"),
    ] {
        cases.push(case_of(
            &mut rng,
            "Interp",
            expr(resize, align, e),
            &[input],
            RANDOM,
            1,
        ));
    }
    let two: &[&[usize]] = &[&[14, 15, 16], &[28, 45, 48]];
    for (resize, e) in [(1, "*(1w,0.5),/(1h,3)"), (2, "*(0w,0h),-(-(1c,0c),16)")] {
        cases.push(case_of(
            &mut rng,
            "Interp",
            expr(resize, 0, e),
            two,
            RANDOM,
            1,
        ));
    }
    check_suite(cases, false);
}

/// test_packing.cpp's layouts through a net: Packing to every elempack, 16 (ncnn's AVX-512
/// layout, on the CPU) included, on 4-D, 3-D, 2-D and 1-D blobs, whose channels take it or not
/// (then the blob stays as it is). `use_padding` is left out: ncnn leaves the added channels
/// uninitialized.
#[test]
fn ncnn_packing_tests() {
    let mut rng = Rng(308);
    let mut cases = Vec::new();
    for sizes in [
        &[9, 7, 10, 16][..],
        &[9, 10, 16],
        &[19, 16],
        &[80],
        &[9, 10, 12],
        &[19, 20],
    ] {
        for out in [1, 4, 8, 16] {
            cases.push(case_of(
                &mut rng,
                "Packing",
                format!("0={out}"),
                &[sizes],
                RANDOM,
                1,
            ));
        }
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
    // 1-D blobs past 65535 elements (an SSD's flattened class scores): a grid longer than a
    // device allows along z
    let inputs = [[70001], [40000], [60007]]
        .iter()
        .map(|sizes| random_mat(&mut rng, "x", sizes, RANDOM))
        .collect();
    cases.push(case_with("Concat", "0=0".to_string(), inputs, vec![]));
    check_suite(cases, false);
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
