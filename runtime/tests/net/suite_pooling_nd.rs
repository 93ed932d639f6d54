//! ncnn's test_pooling1d.cpp and test_pooling3d.cpp through the suite (CPU against ncnn's
//! wheel, the GPU against the CPU): every kernel, stride and pad of their table in the four
//! pad modes, global and adaptive pooling; their parameter checks and inputs of other dims as
//! typed errors.

use super::suite::*;
use super::*;

/// `(w, h, pooling_type, kernel, stride, pad, global, pad_mode, include_pad, adaptive,
/// out_w)`, test_pooling1d()'s arguments (test_pooling3d()'s take `w, h, d, c` apart).
type Args = (usize, usize, i32, i32, i32, i32, i32, i32, i32, i32, i32);

fn case(rng: &mut Rng, a: Args) -> Case {
    case_of_rows(rng, "Pooling1D", &[a.0, a.1], a)
}

/// The case of `kind` over a `RandomMat` of `sizes` with `a`'s params.
fn case_of_rows(rng: &mut Rng, kind: &'static str, sizes: &[usize], a: Args) -> Case {
    let (_, _, ty, k, s, pad, global, mode, include, adaptive, out_w) = a;
    let params = format!(
        "0={ty} 1={k} 2={s} 3={pad} 4={global} 5={mode} 6={include} 7={adaptive} 8={out_w}"
    );
    unary_case(rng, kind, &params, sizes, RANDOM)
}

/// The rows (h, or c) and pad modes of both tests' max cases per kernel.
const MAX_ROWS: [(usize, i32); 8] = [
    (1, 0),
    (2, 1),
    (3, 2),
    (4, 3),
    (7, 0),
    (8, 1),
    (15, 2),
    (16, 3),
];

/// Their average cases: rows, pad mode, whether the padding counts.
const AVG_ROWS: [(usize, i32, i32); 10] = [
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

/// The (kernel, stride, pad) table of ncnn's pooling tests (test_pooling.cpp's too).
pub(crate) const KSP: [(i32, i32, i32); 11] = [
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

#[test]
fn ncnn_pooling1d_tests() {
    let mut rng = Rng(6919);
    let mut cases = Vec::new();
    // test_pooling1d_0 (max) and _1 (average): (h, pad_mode[, include_pad]) per kernel
    let mut group = Vec::new();
    for (k, s, p) in KSP {
        for (h, mode) in MAX_ROWS {
            group.push(case(&mut rng, (9, h, 0, k, s, p, 0, mode, 0, 0, 0)));
        }
        for (h, mode, include) in AVG_ROWS {
            group.push(case(&mut rng, (9, h, 1, k, s, p, 0, mode, include, 0, 0)));
        }
    }
    cases.extend(sample(group, 24));
    // test_pooling1d_2: global pooling, and two plain ones
    let globals: [(usize, usize, i32); 10] = [
        (2, 1, 0),
        (5, 1, 1),
        (3, 3, 0),
        (6, 3, 1),
        (4, 4, 0),
        (6, 4, 1),
        (8, 8, 0),
        (7, 8, 1),
        (11, 16, 0),
        (13, 16, 1),
    ];
    for (w, h, ty) in globals {
        cases.push(case(&mut rng, (w, h, ty, 1, 1, 0, 1, 0, 0, 0, 0)));
    }
    cases.push(case(&mut rng, (48, 4, 0, 2, 2, 0, 0, 0, 0, 0, 0)));
    cases.push(case(&mut rng, (48, 15, 0, 2, 2, 1, 0, 0, 0, 0, 0)));
    // test_pooling1d_3 and _4: adaptive average and max over each size and output width
    let mut group = Vec::new();
    for ty in 0..2 {
        for (w, h, widths) in [
            (2, 1, 6),
            (5, 1, 6),
            (3, 3, 6),
            (4, 4, 8),
            (6, 4, 6),
            (8, 8, 8),
        ] {
            for out_w in 1..=widths {
                group.push(case(&mut rng, (w, h, ty, 1, 1, 0, 0, 0, 0, 1, out_w)));
            }
        }
        for out_w in [1, 3, 5, 7, 9, 11, 13] {
            group.push(case(&mut rng, (11, 16, ty, 1, 1, 0, 0, 0, 1, 0, out_w)));
        }
        for out_w in [2, 4, 6, 8, 10, 12] {
            group.push(case(&mut rng, (13, 16, ty, 1, 1, 0, 0, 0, 1, 0, out_w)));
        }
    }
    cases.extend(sample(group, 16));
    check_suite(cases, false);
}

#[test]
fn pooling1d_refuses_what_does_not_fit() {
    // test_pooling1d_load_param: a zero stride, but not for global pooling
    let stride = load_error("Pooling1D", &["x"], "1=3 2=0");
    assert!(stride.contains("2"), "{stride}");
    let mut net = Net::new();
    assert!(
        net.load_param_str("t.param", &one_layer("Pooling1D", &["x"], "1=3 2=0 4=1"))
            .is_ok()
    );
    // a kernel past the padded row, a 3-D input
    let long = layer_error("Pooling1D", "1=9 5=1", &[("x", &[2, 5])]);
    assert!(long.contains("shorter than the kernel"), "{long}");
    let planes = layer_error("Pooling1D", "1=2", &[("x", &[2, 3, 5])]);
    assert!(planes.contains("2-D"), "{planes}");
}

#[test]
fn ncnn_pooling3d_tests() {
    let mut rng = Rng(6923);
    let mut cases = Vec::new();
    let case3 = |rng: &mut Rng, [w, h, d, c]: [usize; 4], a: Args| {
        case_of_rows(rng, "Pooling3D", &[w, h, d, c], a)
    };
    // test_pooling3d_0 (max) and _1 (average) over 9 × 8 × 7: (c, pad_mode[, include_pad])
    let mut group = Vec::new();
    for (k, s, p) in KSP {
        for (c, mode) in MAX_ROWS {
            group.push(case3(
                &mut rng,
                [9, 8, 7, c],
                (0, 0, 0, k, s, p, 0, mode, 0, 0, 0),
            ));
        }
        for (c, mode, include) in AVG_ROWS {
            let a = (0, 0, 1, k, s, p, 0, mode, include, 0, 0);
            group.push(case3(&mut rng, [9, 8, 7, c], a));
        }
    }
    cases.extend(sample(group, 24));
    // test_pooling3d_2: global pooling, and two plain ones on 48³
    let globals: [([usize; 4], i32); 10] = [
        ([2, 2, 5, 1], 0),
        ([5, 2, 2, 1], 1),
        ([3, 3, 6, 3], 0),
        ([6, 3, 3, 3], 1),
        ([4, 4, 4, 4], 0),
        ([6, 5, 4, 4], 1),
        ([8, 7, 7, 8], 0),
        ([7, 7, 8, 8], 1),
        ([11, 12, 13, 16], 0),
        ([13, 12, 11, 16], 1),
    ];
    for (sizes, ty) in globals {
        cases.push(case3(&mut rng, sizes, (0, 0, ty, 1, 1, 0, 1, 0, 0, 0, 0)));
    }
    cases.push(case3(
        &mut rng,
        [48, 48, 48, 4],
        (0, 0, 0, 2, 2, 0, 0, 0, 0, 0, 0),
    ));
    cases.push(case3(
        &mut rng,
        [48, 48, 48, 15],
        (0, 0, 0, 2, 2, 1, 0, 0, 0, 0, 0),
    ));
    // test_pooling3d_3 and _4: adaptive average and max
    let mut group = Vec::new();
    let sizes: [([usize; 4], i32); 6] = [
        ([2, 2, 5, 1], 6),
        ([5, 2, 2, 1], 6),
        ([3, 4, 6, 3], 6),
        ([4, 4, 4, 4], 8),
        ([6, 5, 4, 4], 6),
        ([8, 7, 7, 8], 9),
    ];
    for ty in 0..2 {
        for (s, widths) in sizes {
            for out_w in 1..=widths {
                group.push(case3(&mut rng, s, (0, 0, ty, 1, 1, 0, 0, 0, 0, 1, out_w)));
            }
        }
        for (s, widths) in [
            ([11, 12, 13, 16], [1, 3, 5, 7, 9, 11, 13]),
            ([13, 12, 11, 16], [2, 4, 6, 8, 10, 12, 12]),
        ] {
            for out_w in widths {
                group.push(case3(&mut rng, s, (0, 0, ty, 1, 1, 0, 0, 0, 1, 0, out_w)));
            }
        }
    }
    cases.extend(sample(group, 16));
    check_suite(cases, false);
}

#[test]
fn pooling3d_refuses_what_does_not_fit() {
    let stride = load_error("Pooling3D", &["x"], "1=3 2=0");
    assert!(stride.contains("2"), "{stride}");
    let mut net = Net::new();
    let global = one_layer("Pooling3D", &["x"], "1=3 2=0 4=1");
    assert!(net.load_param_str("t.param", &global).is_ok());
    let long = layer_error("Pooling3D", "1=9 5=1", &[("x", &[2, 3, 5, 5])]);
    assert!(long.contains("shorter than the kernel"), "{long}");
    let planes = layer_error("Pooling3D", "1=2", &[("x", &[2, 3, 5])]);
    assert!(planes.contains("4-D"), "{planes}");
}
