//! The detection heads through the suite, on the CPU against ncnn's wheel (ncnn runs them on
//! the CPU too; PriorBox on the GPU as well): test_priorbox.cpp and
//! test_yolov3detectionoutput.cpp's cases, and cases of
//! DetectionOutput and YoloDetectionOutput (which ncnn's tests lack) over SSD-shaped inputs:
//! softmax scores and PriorBox's own priors.

use super::suite::*;
use super::*;

/// An ncnn float array parameter `id` (`-23300-id=n,v0,v1,…`).
fn floats_param(id: u32, values: &[f32]) -> String {
    let list: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("-{}={},{}", 23300 + id, values.len(), list.join(","))
}

/// test_priorbox.cpp: Caffe's SSD priors with an image input, MXNet's without, and the
/// mmdetection steps and centers.
#[test]
fn ncnn_priorbox_tests() {
    let mut rng = Rng(811);
    let caffe = [
        floats_param(0, &[105.0]),
        floats_param(1, &[150.0]),
        floats_param(2, &[2.0, 3.0]),
        "7=1 8=0 9=-233 10=-233 11=-233.0 12=-233.0 13=0.0".into(),
    ]
    .join(" ");
    let mxnet = [
        floats_param(0, &[0.15, 0.2121]),
        floats_param(2, &[1.0, 2.0, 0.5, 3.0, 0.333333]),
        "7=0 8=0 9=-233 10=-233 11=-233.0 12=-233.0 13=0.5".into(),
    ]
    .join(" ");
    let mmdet = [
        floats_param(0, &[32.0, 64.0]),
        floats_param(2, &[0.5]),
        "7=1 8=1 9=300 10=300 13=0.5 14=1 15=1".into(),
    ]
    .join(" ");
    let cases = vec![
        case_of(
            &mut rng,
            "PriorBox",
            caffe,
            &[&[72, 72, 1], &[512, 512, 1]],
            RANDOM,
            1,
        ),
        case_of(&mut rng, "PriorBox", mxnet, &[&[72, 72, 1]], RANDOM, 1),
        case_of(
            &mut rng,
            "PriorBox",
            mmdet,
            &[&[19, 10, 4], &[8, 8, 3]],
            RANDOM,
            1,
        ),
    ];
    // and on every GPU context against the CPU: computed from the device blobs' shapes
    check_suite(cases, true);
}

/// test_yolov3detectionoutput.cpp: YOLOv4, v4-tiny and v3 heads over grids of values in
/// [-15, 1.5], 80 classes, 3 anchors per scale.
#[test]
fn ncnn_yolov3detectionoutput_tests() {
    let mut rng = Rng(812);
    let head = |biases: &[f32], mask: &[f32], scales: &[f32], confidence: f32| {
        [
            format!("0=80 1=3 2={confidence:?} 3=0.45"),
            floats_param(4, biases),
            floats_param(5, mask),
            floats_param(6, scales),
        ]
        .join(" ")
    };
    let v4 = head(
        &[
            12., 16., 19., 36., 40., 28., 36., 75., 76., 55., 72., 146., 142., 110., 192., 243.,
            459., 401.,
        ],
        &[0., 1., 2., 3., 4., 5., 6., 7., 8.],
        &[9.6, 17.6, 33.6],
        0.55,
    );
    let v4tiny = head(
        &[
            10., 14., 23., 27., 37., 58., 81., 82., 135., 169., 344., 319.,
        ],
        &[3., 4., 5., 1., 2., 3.],
        &[33.6, 16.8],
        0.4,
    );
    let v3 = head(
        &[
            10., 13., 16., 30., 33., 23., 30., 61., 62., 45., 59., 119., 116., 90., 156., 198.,
            373., 326.,
        ],
        &[6., 7., 8., 3., 4., 5., 0., 1., 2.],
        &[32.0, 16.0, 8.0],
        0.6,
    );
    let range = (-15.0, 1.5);
    let mut cases = vec![
        case_of(
            &mut rng,
            "Yolov3DetectionOutput",
            v4tiny,
            &[&[13, 13, 255], &[26, 26, 255]],
            range,
            1,
        ),
        case_of(
            &mut rng,
            "Yolov3DetectionOutput",
            v3,
            &[&[19, 19, 255], &[38, 38, 255], &[76, 76, 255]],
            range,
            1,
        ),
    ];
    let all = std::env::var("FPSHADER_NCNN_SUITE").is_ok_and(|v| v == "all");
    if all {
        let sizes: [&[usize]; 3] = [&[76, 76, 255], &[38, 38, 255], &[19, 19, 255]];
        cases.push(case_of(
            &mut rng,
            "Yolov3DetectionOutput",
            v4,
            &sizes,
            range,
            1,
        ));
    }
    let outputs = check_suite_cpu_only(cases);
    // the cases detect something: the rows are compared, not two empty outputs
    assert!(
        outputs
            .iter()
            .all(|(shape, _)| shape.len() == 2 && shape[1] == 6)
    );
}

/// YoloDetectionOutput (YOLOv2's region head): two grids of 5 anchors and 20 classes.
#[test]
fn yolodetectionoutput_matches_ncnn() {
    let mut rng = Rng(813);
    let biases = [
        1.08, 1.19, 3.42, 4.41, 6.63, 11.38, 9.42, 5.11, 16.62, 10.52,
    ];
    let params = format!("0=20 1=5 2=0.3 3=0.45 {}", floats_param(4, &biases));
    let range = (-4.0, 3.0);
    let cases = vec![
        case_of(
            &mut rng,
            "YoloDetectionOutput",
            params.clone(),
            &[&[13, 13, 125]],
            range,
            1,
        ),
        case_of(
            &mut rng,
            "YoloDetectionOutput",
            params,
            &[&[7, 5, 125], &[4, 3, 125]],
            range,
            1,
        ),
    ];
    let outputs = check_suite_cpu_only(cases);
    assert!(
        outputs
            .iter()
            .all(|(shape, _)| shape.len() == 2 && shape[1] == 6)
    );
}

/// DetectionOutput over SSD's inputs: offsets, per-prior softmax scores (a prior whose background
/// passes 1 - threshold has no class above the threshold, as in a real SSD) and a PriorBox's
/// corners and variances; Caffe's layout and MXNet's (`num_class -233`).
#[test]
fn detectionoutput_matches_ncnn() {
    let mut rng = Rng(814);
    let (num_prior, num_class) = (300, 6);
    let offsets = random_mat(&mut rng, "x", &[num_prior * 4], (-1.0, 1.0));
    let mut scores = random_mat(&mut rng, "x", &[num_class, num_prior], (-3.0, 3.0));
    for row in scores.values.chunks_mut(num_class) {
        let sum: f32 = row.iter().map(|v| v.exp()).sum();
        row.iter_mut().for_each(|v| *v = v.exp() / sum);
    }
    // priors: corners in [0, 1] around random centers, then the variances row
    let mut priors = random_mat(&mut rng, "x", &[num_prior * 4, 2], (0.0, 1.0));
    for (i, b) in priors.values[..num_prior * 4].chunks_mut(4).enumerate() {
        let (cx, cy, s) = (b[0], b[1], 0.05 + 0.2 * (i % 5) as f32 / 5.0);
        b.copy_from_slice(&[cx - s, cy - s * 0.7, cx + s, cy + s * 0.7]);
    }
    for v in priors.values[num_prior * 4..].chunks_mut(4) {
        v.copy_from_slice(&[0.1, 0.1, 0.2, 0.2]);
    }
    let caffe = format!("0={num_class} 1=0.45 2=100 3=50 4=0.2");
    let inputs = vec![offsets.clone(), scores.clone(), priors.clone()];
    let mut cases = vec![case_with("DetectionOutput", caffe, inputs, vec![])];
    // MXNet: scores class by class, priors one per row of 4
    let mut by_class = scores.clone();
    by_class.shape = [num_prior, num_class, 1, 1];
    for c in 0..num_class {
        for i in 0..num_prior {
            by_class.values[c * num_prior + i] = scores.values[i * num_class + c];
        }
    }
    let mut rows = priors.clone();
    rows.shape = [4, num_prior, 1, 1];
    rows.values.truncate(num_prior * 4);
    let mxnet = "0=-233 1=0.5 2=200 3=30 4=0.25".to_string();
    cases.push(case_with(
        "DetectionOutput",
        mxnet,
        vec![offsets, by_class, rows],
        vec![],
    ));
    let outputs = check_suite_cpu_only(cases);
    assert!(
        outputs
            .iter()
            .all(|(shape, _)| shape.len() == 2 && shape[1] == 6)
    );
}

/// Inputs the heads' parameters do not fit are typed errors naming the layer.
#[test]
fn detection_heads_refuse_what_does_not_fit_them() {
    let report = layer_error(
        "Yolov3DetectionOutput",
        "0=80 1=3",
        &[("x", &[250, 13, 13])],
    );
    assert!(report.contains("Yolov3DetectionOutput"), "{report}");
    assert!(report.contains("num_box × (4 + 1 + num_class)"), "{report}");
    let report = layer_error("YoloDetectionOutput", "0=20 1=5", &[("x", &[125, 13, 13])]);
    assert!(report.contains("biases"), "{report}");
    let report = layer_error(
        "PriorBox",
        &format!(
            "{} 9=-233 10=-233 {}",
            floats_param(0, &[30.0]),
            floats_param(1, &[60.0])
        ),
        &[("x", &[4, 8, 8])],
    );
    assert!(report.contains("image"), "{report}");
    let report = layer_error(
        "DetectionOutput",
        "0=21",
        &[("a", &[40]), ("b", &[10, 20]), ("c", &[2, 40])],
    );
    assert!(report.contains("class scores"), "{report}");
}

/// A box inside a `w × h` map as test_roipooling.cpp and test_roialign.cpp draw it (x2 after
/// x1, y1 and y2 in the map; y2's lower end is x2's, as the tests write it, on square maps),
/// drawn again until, scaled by `scale` and rounded as ROIPooling does, its width and height
/// share no factor with `pooled`: then no bin edge `i · width / pooled` is a whole number
/// inside the box, where the wheel's division (not the source's arithmetic) decides which
/// side a floor lands on (`28 · 6/56` floors to 2 there).
fn roi_box(rng: &mut Rng, w: usize, h: usize, scale: f32, pooled: [usize; 2]) -> Input {
    let gcd = |mut a: i64, mut b: i64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a.abs()
    };
    loop {
        let mut uniform = |lo: f32, hi: f32| lo + (rng.next() + 1.0) * 0.5 * (hi - lo);
        let x1 = uniform(0.001, w as f32 - 2.001);
        let x2 = uniform(x1 + 1.001, w as f32 - 1.001);
        let y1 = uniform(0.001, h as f32 - 2.001);
        let y2 = uniform(x2 + 1.001, h as f32 - 1.001);
        let extent = |a: f32, b: f32| ((b * scale).round() - (a * scale).round()) as i64 + 1;
        let (rw, rh) = (extent(x1, x2).max(1), extent(y1, y2).max(1));
        if gcd(rw, pooled[0] as i64) == 1 && gcd(rh, pooled[1] as i64) == 1 {
            let mut b = random_mat(rng, "x", &[4], RANDOM);
            b.values = vec![x1, y1, x2, y2];
            return b;
        }
    }
}

/// test_roipooling.cpp and test_roialign.cpp (both versions, aligned or not, sampling ratios).
#[test]
fn ncnn_roipooling_and_roialign_tests() {
    let mut rng = Rng(815);
    let mut cases = Vec::new();
    let pooling = [
        (112, 16, 56, 56, 0.5),
        (56, 32, 28, 28, 0.25),
        (28, 64, 14, 14, 0.125),
        (14, 128, 27, 17, 0.0625),
        (7, 256, 3, 3, 0.03125),
    ];
    for (side, c, pw, ph, scale) in pooling {
        let map = random_mat(&mut rng, "x", &[side, side, c], RANDOM);
        let roi = roi_box(&mut rng, side, side, scale, [pw, ph]);
        let params = format!("0={pw} 1={ph} 2={scale:?}");
        cases.push(case_with("ROIPooling", params, vec![map, roi], vec![]));
    }
    let align = [
        (56, 1, 28, 0.5, 0, 0, 0),
        (28, 3, 14, 0.25, 1, 1, 1),
        (14, 4, 7, 0.125, 2, 0, 1),
        (14, 8, 7, 0.0625, 3, 1, 0),
        (7, 12, 3, 0.03125, 4, 0, 0),
        (7, 16, 3, 0.03125, 4, 1, 1),
    ];
    for (side, c, pooled, scale, ratio, aligned, version) in align {
        let map = random_mat(&mut rng, "x", &[side, side, c], RANDOM);
        let roi = roi_box(&mut rng, side, side, scale, [pooled, pooled]);
        let params = format!("0={pooled} 1={pooled} 2={scale:?} 3={ratio} 4={aligned} 5={version}");
        cases.push(case_with("ROIAlign", params, vec![map, roi], vec![]));
    }
    check_suite_cpu_only(cases);
}
