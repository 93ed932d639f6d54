//! ncnn's test_unfold.cpp, test_fold.cpp and test_gridsample.cpp through the suite (CPU
//! against ncnn's wheel, the GPU against the CPU), their parameter checks, and inputs that do
//! not fit as typed errors.

use super::suite::*;
use super::*;

/// `1=kernel_w 11=kernel_h 2=dilation_w 12=dilation_h 3=stride_w 13=stride_h 4=pad_w
/// 14=pad_h` of each test case.
fn window(k: [i32; 2], d: [i32; 2], s: [i32; 2], pad: [i32; 2]) -> String {
    format!(
        "1={} 11={} 2={} 12={} 3={} 13={} 4={} 14={}",
        k[0], k[1], d[0], d[1], s[0], s[1], pad[0], pad[1]
    )
}

#[test]
fn ncnn_unfold_and_fold_tests() {
    let mut rng = Rng(6907);
    let mut cases = Vec::new();
    // test_unfold.cpp: (w, h, c, kernel, dilation, stride, pad, pad_value)
    type Unfold = ([usize; 3], [i32; 2], [i32; 2], [i32; 2], [i32; 2], f32);
    let unfolds: [Unfold; 6] = [
        ([32, 32, 11], [3, 3], [1, 1], [1, 1], [0, 0], 0.0),
        ([32, 32, 12], [4, 2], [1, 1], [1, 2], [2, 2], -0.5),
        ([32, 32, 16], [3, 2], [2, 1], [1, 1], [4, 2], 2.0),
        ([32, 32, 11], [3, 3], [1, 1], [1, 1], [-233, -233], -0.5),
        ([32, 32, 12], [4, 2], [1, 1], [1, 2], [-234, -234], 0.0),
        ([32, 32, 16], [3, 2], [2, 1], [1, 1], [-233, -233], 1.0),
    ];
    for (sizes, k, d, s, pad, value) in unfolds {
        let params = format!("{} 18={value:?}", window(k, d, s, pad));
        cases.push(unary_case(&mut rng, "Unfold", &params, &sizes, RANDOM));
    }
    // test_fold.cpp: (w, h, outw, outh, kernel, dilation, stride, pad)
    type Fold = (
        [usize; 2],
        [usize; 2],
        [i32; 2],
        [i32; 2],
        [i32; 2],
        [i32; 2],
    );
    let folds: [Fold; 3] = [
        ([400, 108], [22, 22], [3, 3], [1, 1], [1, 1], [0, 0]),
        ([190, 96], [18, 17], [4, 2], [1, 1], [1, 2], [2, 2]),
        ([120, 36], [11, 5], [3, 2], [2, 1], [1, 1], [4, 2]),
    ];
    for (sizes, [ow, oh], k, d, s, pad) in folds {
        let params = format!("{} 20={ow} 21={oh}", window(k, d, s, pad));
        cases.push(unary_case(&mut rng, "Fold", &params, &sizes, RANDOM));
    }
    check_suite(cases, false);
}

#[test]
fn unfold_and_fold_refuse_what_does_not_fit() {
    // test_*.cpp's load_param cases: a zero stride, a kernel whose taps overflow
    for kind in ["Unfold", "Fold"] {
        let zero_stride = load_error(kind, &["x"], "1=3 3=0");
        assert!(zero_stride.contains("3"), "{kind}: {zero_stride}");
        let huge = load_error(kind, &["x"], "1=65536");
        assert!(huge.contains("65536"), "{kind}: {huge}");
    }
    // a map smaller than the kernel's reach, a 2-D input to Unfold
    let small = layer_error("Unfold", "1=5", &[("x", &[2, 4, 4])]);
    assert!(small.contains("kernel's reach"), "{small}");
    let flat = layer_error("Unfold", "1=3", &[("x", &[8, 8])]);
    assert!(flat.contains("2-D"), "{flat}");
    // rows that are not whole channels of taps, rows of the wrong length
    let rows = layer_error("Fold", "1=3 20=6", &[("x", &[10, 16])]);
    assert!(rows.contains("rows"), "{rows}");
    let len = layer_error("Fold", "1=3 20=6", &[("x", &[18, 15])]);
    assert!(len.contains("window positions"), "{len}");
}

#[test]
fn ncnn_gridsample_tests() {
    let mut rng = Rng(6911);
    let mut cases = Vec::new();
    // test_gridsample.cpp: (image, grid, grid with permute_fusion, sample types)
    type Group = (&'static [usize], &'static [usize], &'static [usize], i32);
    let groups: [Group; 4] = [
        (&[3, 7, 1], &[2, 11, 13], &[11, 13, 2], 3),
        (&[8, 12, 16], &[2, 24, 16], &[24, 16, 2], 3),
        (&[5, 7, 11, 13], &[3, 17, 11, 13], &[17, 11, 13, 3], 2),
        (&[16, 12, 11, 16], &[3, 11, 12, 16], &[11, 12, 16, 3], 2),
    ];
    for (image, grid, fused, samples) in groups {
        let mut group = Vec::new();
        for permute in 0..2 {
            for sample in 1..=samples {
                for padding in 1..=3 {
                    for align in 0..2 {
                        let params = format!("0={sample} 1={padding} 2={align} 3={permute}");
                        let g = if permute == 1 { fused } else { grid };
                        group.push(case_of(
                            &mut rng,
                            "GridSample",
                            params,
                            &[image, g],
                            RANDOM,
                            1,
                        ));
                    }
                }
            }
        }
        cases.extend(sample(group, 8));
    }
    check_suite(cases, false);
}

#[test]
fn gridsample_refuses_what_does_not_fit() {
    // a sample type or padding mode ncnn does not have
    let sample = load_error("GridSample", &["x", "g"], "0=4");
    assert!(sample.contains("4"), "{sample}");
    let padding = load_error("GridSample", &["x", "g"], "1=0");
    assert!(padding.contains("1"), "{padding}");
    // a grid of 3 coordinates for a 3-D image; a 2-D grid; bicubic in 3-D
    let coords = layer_error("GridSample", "", &[("x", &[2, 5, 6]), ("g", &[4, 4, 3])]);
    assert!(coords.contains("coordinates per grid point"), "{coords}");
    let flat = layer_error("GridSample", "", &[("x", &[2, 5, 6]), ("g", &[4, 2])]);
    assert!(flat.contains("do not fit"), "{flat}");
    let image = &[2, 3, 5, 6][..];
    let cubic = layer_error("GridSample", "0=3", &[("x", image), ("g", &[2, 3, 4, 3])]);
    assert!(cubic.contains("bicubic"), "{cubic}");
}
