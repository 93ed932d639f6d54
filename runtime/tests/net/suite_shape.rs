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
