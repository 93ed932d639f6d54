//! ncnn's tests of the layers that cut, pad and reorder blobs through the suite: test_crop_3.cpp
//! (shape expressions), test_slice.cpp, test_reshape_1.cpp (expressions), test_padding.cpp,
//! test_permute.cpp, test_squeeze.cpp and test_expanddims.cpp.

use super::suite::*;
use super::*;

/// test_crop_3.cpp: starts, ends and axes as expressions over one or more inputs.
#[test]
fn ncnn_crop_expression_tests() {
    let mut rng = Rng(301);
    let (a, b, c, d): (&[usize], &[usize], &[usize], &[usize]) =
        (&[13, 12, 25, 48], &[13, 12, 48], &[13, 48], &[128]);
    let one = [
        (a, "2", "-2", "0"),
        (b, "2", "-2", "0"),
        (c, "2", "-2", "0"),
        (d, "2", "-2", "0"),
        (a, "16", "32", "-4"),
        (b, "16", "32", "-3"),
        (c, "16", "32", "-2"),
        (d, "16", "32", "-1"),
        (a, "16,//(0d,4),2,3", "32,-1,-2,-3", "0,1,2,3"),
        (b, "16,//(0h,4),2", "32,-1,-(0w,2)", "0,1,2"),
        (c, "16,//(0w,4)", "32,-2", "0,1"),
        (a, "10", "11", "1"),
        (b, "1,1", "-(0c,15),-(0w,5)", "0,2"),
        (
            a,
            "-(0w,3),0h//2,floor(*(0c,0.3))",
            "-1,0h,ceil(*(0c,0.9))",
            "3,2,0",
        ),
        (
            b,
            "-(0w,3),0h//2,floor(*(0c,0.3))",
            "-1,0h,ceil(*(0c,0.9))",
            "2,1,0",
        ),
        (c, "-(0w,3),floor(*(0h,0.3))", "-1,ceil(*(0h,0.9))", "1,0"),
        (d, "floor(*(0w,0.3))", "ceil(*(0w,0.9))", "0"),
    ];
    let params = |s: &str, e: &str, x: &str| format!("19=\"{s}\" 20=\"{e}\" 21=\"{x}\"");
    let mut cases: Vec<Case> = one
        .iter()
        .map(|(sizes, s, e, x)| case_of(&mut rng, "Crop", params(s, e, x), &[sizes], RANDOM, 1))
        .collect();
    type Inputs = &'static [&'static [usize]];
    let a2: Inputs = &[&[14, 15, 13, 48], &[8, 5, 3, 4]];
    let b2: Inputs = &[&[14, 15, 48], &[28, 45, 16]];
    let c2: Inputs = &[&[24, 48], &[28, 6]];
    let d3: Inputs = &[&[128], &[16], &[64]];
    let many = [
        (a2, "*(1c,4)", "*(1c,8)", "-4"),
        (b2, "1c", "-(0c,1c)", "-3"),
        (c2, "+(1h,10)", "-(1h,22)", "-2"),
        (d3, "1w", "2w", "-1"),
        (a2, "16,//(min(0w,1d),4),2,3", "32,-1,-2,-3", "0,1,2,3"),
        (b2, "16,//(min(0w,1h),4),2", "32,-1,-(0w,2)", "0,1,2"),
        (c2, "16,//(min(0w,1w),4)", "32,-2", "0,1"),
        (b2, "1,//(1w,7)", "+(1c,1),-(0w,2)", "0,2"),
        (a2, "-(1w,4)", "neg(1h,3)", "0"),
        (b2, "-(1w,20)", "-2", "0"),
        (b2, "//(1h,15)", "neg(//(1w,7))", "2"),
        (
            b2,
            "//(100,0h),round(fmod(100,0c))",
            "-233,min(1c,0c)",
            "1,0",
        ),
    ];
    cases.extend(
        many.iter()
            .map(|(sizes, s, e, x)| case_of(&mut rng, "Crop", params(s, e, x), sizes, RANDOM, 1)),
    );
    // every case: the list is short, and the expressions are what is new
    check_suite(cases, false);
}

/// test_slice.cpp: sizes with -233 shares and indices (one output per index, the last taking
/// the rest) along every axis of 4-D, 3-D, 2-D and 1-D blobs.
#[test]
fn ncnn_slice_tests() {
    let mut rng = Rng(302);
    // per dims, as the test lists them: (0=slices or 2=indices, values, axes)
    type Lists = &'static [(u32, &'static [i32], &'static [i32])];
    const EQUAL: &[i32] = &[-233, -233, -233];
    let d4: Lists = &[
        (0, EQUAL, &[0, 1, -2, 3]),
        (0, &[3, 12, 16, -233], &[0]),
        (0, &[12, 16, -233], &[0]),
        (0, &[32, 8, -233], &[0]),
        (0, &[2, 12, 16, -233], &[1]),
        (0, &[16, 4, 5, -233], &[-2]),
        (0, &[8, 2, 16, -233], &[3]),
        (2, &[2, -24, -8], &[0]),
        (2, &[4, 20, 4], &[1]),
        (2, &[16, -16], &[-2]),
        (2, &[1, -12], &[3]),
    ];
    let d3: Lists = &[
        (0, EQUAL, &[0, 1, -1]),
        (0, &[3, 12, 16, -233], &[0]),
        (0, &[12, 16, -233], &[0]),
        (0, &[32, 8, -233], &[0]),
        (0, &[2, 12, 16, -233], &[1]),
        (0, &[16, 4, 5, -233], &[-1]),
        (2, &[2, -24, -8], &[0]),
        (2, &[4, 20, 4], &[1]),
        (2, &[1, -12], &[2]),
    ];
    let d2: Lists = &[
        (0, EQUAL, &[0, -1]),
        (0, &[3, 12, 16, -233], &[0]),
        (0, &[12, 16, -233], &[0]),
        (0, &[32, 8, -233], &[-2]),
        (0, &[2, 12, 16, -233], &[-1]),
        (2, &[2, -24, -8], &[0]),
        (2, &[1, -12], &[1]),
    ];
    let d1: Lists = &[
        (0, EQUAL, &[0]),
        (0, &[3, 12, 16, -233], &[0]),
        (0, &[12, 16, -233], &[0]),
        (0, &[32, 8, -233], &[-1]),
        (2, &[2, -24, -8], &[0]),
    ];
    let shapes: &[(&[usize], Lists)] = &[
        (&[30, 32, 36, 48], d4),
        (&[36, 30, 32, 51], d4),
        (&[30, 32, 36, 60], d4),
        (&[51, 36, 48], d3),
        (&[48, 48, 51], d3),
        (&[51, 36, 60], d3),
        (&[36, 48], d2),
        (&[48, 51], d2),
        (&[36, 60], d2),
        (&[48], d1),
        (&[51], d1),
        (&[60], d1),
    ];
    let mut group = Vec::new();
    for &(shape, lists) in shapes {
        for &(id, values, axes) in lists {
            for &axis in axes {
                let params = format!("{} 1={axis}", array_param(id, values));
                group.push(case_of(
                    &mut rng,
                    "Slice",
                    params,
                    &[shape],
                    RANDOM,
                    values.len(),
                ));
            }
        }
    }
    check_suite(sample(group, 24), false);
}

/// test_reshape_1.cpp: the shape as an expression (`6=`) over one or two inputs.
#[test]
fn ncnn_reshape_expression_tests() {
    let mut rng = Rng(305);
    let param = |e: &str| format!("6=\"{e}\"");
    let mut cases = Vec::new();
    for e in [
        "0w,0h,*(0d,2),-1",
        "-1,0w,5,4",
        "-1,square(neg(abs(max(min(//(*(-(+(0w,1),-1),4),4),100),-4))))",
        "-1,square(neg(abs(max(min(//(*(-(+(0w,1.0),-1.0),2.0),2.0),100.3),-2.2))))",
        "-1,trunc(*(round(-(floor(+(ceil(*(0w,1.2)),0.7)),-0.4)),1.0001))",
        "-1,ceil(sqrt(square(*(asinh(sinh(atanh(tanh(atan(tan(acos(cos(asin(sin(/(0w,2))))))))))),16))))",
    ] {
        cases.push(case_of(
            &mut rng,
            "Reshape",
            param(e),
            &[&[3, 2, 25, 32]],
            RANDOM,
            1,
        ));
    }
    let two: &[&[usize]] = &[&[14, 15, 16], &[28, 45, 48]];
    for e in ["*(1w,0.5),/(1h,3),-(1c,32)", "*(0w,0h),-(-(1c,0c),16)"] {
        cases.push(case_of(&mut rng, "Reshape", param(e), two, RANDOM, 1));
    }
    for e in ["*(0w,0.5),/(0h,3),-1", "-1", "*(0w,0h),0c"] {
        cases.push(case_of(
            &mut rng,
            "Reshape",
            param(e),
            &[&[14, 15, 16]],
            RANDOM,
            1,
        ));
    }
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
    // channel pads of whole blocks of 4, which pack4 blobs keep on the GPU (blazeface's 8=4),
    // with a constant and with per-channel values
    for (front, behind, c) in [(0, 4, 0), (4, 8, 28)] {
        let params = format!("0=1 1=0 2=0 3=1 5=0.5 6={c} 7={front} 8={behind}");
        let inputs = vec![random_mat(&mut rng, "x", &[20, 9, 16], RANDOM)];
        let weights = vec![random_values(&mut rng, c, RANDOM)];
        cases.push(case_with("Padding", params, inputs, weights));
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

/// Every subset of up to four axes, as test_squeeze.cpp and test_expanddims.cpp list them.
const AXES: &[&str] = &[
    "0", "1", "2", "3", "0,1", "0,2", "0,3", "1,2", "1,3", "2,3", "0,1,2", "0,1,3", "0,2,3",
    "1,2,3", "0,1,2,3",
];

/// `3=axes` as an ncnn array parameter, from a list like `"0,2"`.
pub fn axes_param(axes: &str) -> String {
    let axes: Vec<i32> = axes.split(',').map(|a| a.parse().unwrap()).collect();
    array_param(3, &axes)
}

/// test_squeeze.cpp (every flag combination and axis set on shapes with ones in every place)
/// and test_expanddims.cpp (every axis set).
#[test]
fn ncnn_squeeze_and_expanddims_tests() {
    let mut rng = Rng(104);
    let mut cases = Vec::new();
    let squeeze_shapes: &[&[usize]] = &[
        &[4, 5, 7, 16],
        &[4, 5, 1, 15],
        &[4, 1, 7, 12],
        &[1, 5, 7, 16],
        &[1, 5, 1, 15],
        &[1, 1, 7, 12],
        &[6, 1, 1, 16],
        &[1, 1, 1, 15],
        &[4, 5, 7, 1],
        &[4, 5, 1, 1],
        &[4, 1, 7, 1],
        &[1, 5, 7, 1],
        &[1, 5, 1, 1],
        &[1, 1, 7, 1],
        &[1, 1, 1, 1],
        &[3, 12, 16],
        &[3, 1, 16],
        &[1, 33, 15],
        &[1, 14, 1],
        &[12, 13, 1],
        &[1, 1, 1],
        &[14, 16],
        &[1, 14],
        &[11, 1],
        &[1, 1],
        &[120],
        &[1],
    ];
    for sizes in squeeze_shapes {
        let mut params: Vec<String> = (0..16)
            .map(|f| {
                format!(
                    "0={} 1={} 11={} 2={}",
                    f >> 3 & 1,
                    f >> 2 & 1,
                    f >> 1 & 1,
                    f & 1
                )
            })
            .collect();
        params.extend(AXES.iter().map(|a| axes_param(a)));
        let group = params
            .iter()
            .map(|p| unary_case(&mut rng, "Squeeze", p, sizes, RANDOM))
            .collect();
        cases.extend(sample(group, 6));
    }
    for sizes in squeeze_shapes.iter().filter(|s| s.len() <= 3) {
        let group = AXES
            .iter()
            .map(|a| unary_case(&mut rng, "ExpandDims", &axes_param(a), sizes, RANDOM))
            .collect();
        cases.extend(sample(group, 6));
    }
    // the gather family (Reshape, Flatten, these) has no image variants yet
    check_suite(cases, false);
}
