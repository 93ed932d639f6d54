//! Two-stage detectors' layers and SPP on the CPU against ncnn's wheel (ncnn runs them on the
//! CPU only): Proposal (both tops), PSROIPooling over boxes as test_roipooling.cpp draws them,
//! and SPP against the same pyramid in layers the wheel has.

use super::suite::*;
use super::*;

/// Proposal over an RPN's outputs: 18 score channels (the second nine the foreground's), 36
/// delta channels, the image's height, width and scale; the boxes and their scores.
#[test]
fn proposal_matches_ncnn() {
    let mut rng = Rng(821);
    let mut cases = Vec::new();
    // (map w, h, image h, w, scale, params)
    let sets = [
        (12, 9, 144.0, 192.0, 1.0, "0=16 1=16 2=300 3=40 4=0.7 5=16"),
        (
            20,
            15,
            240.0,
            320.0,
            0.5,
            "0=16 1=16 2=6000 3=300 4=0.6 5=8",
        ),
        (7, 11, 88.0, 56.0, 2.0, "0=8 1=8 2=50 3=10 4=0.5 5=4"),
    ];
    for (w, h, im_h, im_w, scale, params) in sets {
        let sizes: [&[usize]; 3] = [&[w, h, 18], &[w, h, 36], &[3]];
        let mut case = case_of(&mut rng, "Proposal", params.into(), &sizes, (-0.6, 0.6), 2);
        case.inputs[2].values = vec![im_h, im_w, scale];
        cases.push(case);
    }
    let outputs = check_suite_cpu_only(cases);
    // boxes `4 × 1 × n` with `1 × 1 × n` scores, and something kept in each set
    for pair in outputs.chunks(2) {
        let (boxes, scores) = (&pair[0].0, &pair[1].0);
        assert!(
            boxes.len() == 3 && boxes[0] > 0 && boxes[2] == 4,
            "{boxes:?}"
        );
        assert_eq!(scores, &[boxes[0], 1, 1]);
    }
}

/// PSROIPooling: maps of `output_dim × pooled²` channels, a box in each.
#[test]
fn psroipooling_matches_ncnn() {
    let mut rng = Rng(822);
    let mut cases = Vec::new();
    for (side, output_dim, pooled, scale) in [
        (56, 2, 7, 0.25f32),
        (28, 4, 3, 0.125),
        (14, 1, 5, 0.0625),
        (20, 3, 2, 0.5),
    ] {
        let map = random_mat(
            &mut rng,
            "x",
            &[side, side, output_dim * pooled * pooled],
            RANDOM,
        );
        let scale_up = 1.0 / scale;
        let roi = roi_box(&mut rng, side * scale_up as usize, scale);
        let params = format!("0={pooled} 1={pooled} 2={scale:?} 3={output_dim}");
        cases.push(case_with("PSROIPooling", params, vec![map, roi], vec![]));
    }
    check_suite_cpu_only(cases);
}

/// A box in an image of `side` (the map's side over `scale`) with its corners drawn so that,
/// rounded and scaled, none lies on a whole position (where the wheel's arithmetic and this
/// one's may floor either way).
fn roi_box(rng: &mut Rng, side: usize, scale: f32) -> Input {
    loop {
        let mut uniform = |lo: f32, hi: f32| lo + (rng.next() + 1.0) * 0.5 * (hi - lo);
        let (x1, y1) = (
            uniform(0.0, side as f32 * 0.6),
            uniform(0.0, side as f32 * 0.6),
        );
        let (x2, y2) = (
            uniform(x1 + 4.0, side as f32),
            uniform(y1 + 4.0, side as f32),
        );
        let corners = [
            x1.round(),
            y1.round(),
            (x2 + 1.0).round(),
            (y2 + 1.0).round(),
        ];
        if corners.iter().all(|c| (c * scale).fract() != 0.0) {
            let mut b = random_mat(rng, "x", &[4], RANDOM);
            b.values = vec![x1, y1, x2, y2];
            return b;
        }
    }
}

/// SPP against the same pyramid spelled in layers ncnn's wheel has (its SPP is built `OFF`, and
/// its source sizes the output for two channels): per level a zero Padding by half the
/// remainder before, a Pooling of windows as large as their stride, a Reshape to one row, and a
/// Concat of the levels.
#[test]
fn spp_matches_ncnn_padding_pooling_and_concat() {
    let mut rng = Rng(823);
    for (w, h, c, pooling, height) in [
        (13, 13, 3, 0, 3),
        (10, 7, 2, 1, 2),
        (6, 9, 4, 0, 1),
        (5, 5, 2, 1, 3),
        (3, 2, 2, 0, 3),
    ] {
        let map = random_mat(&mut rng, "x", &[w, h, c], (-1.2, -0.1));
        let x = std::slice::from_ref(&map);
        let spp = format!("7767517\n2 2\nInput in 0 1 x\nSPP spp 1 1 x y 0={pooling} 1={height}\n");
        let got = run_net(&spp, &[], x, "y", RunOptions::fp32(), None)
            .unwrap_or_else(|e| panic!("SPP {w}×{h}×{c}: {}", e.report()))
            .to_values();
        let mut layers = vec![format!(
            "Split split 1 {height} x {}",
            (0..height)
                .map(|p| format!("x{p}"))
                .collect::<Vec<_>>()
                .join(" ")
        )];
        for p in 0..height {
            let bins = 1usize << p;
            let (kw, kh) = (w.div_ceil(bins), h.div_ceil(bins));
            let (pw, ph) = ((kw * bins - w).div_ceil(2), (kh * bins - h).div_ceil(2));
            // the far side only as far as the last window reaches (a map narrower than the
            // bins pads more than the windows take)
            let (pb, pr) = (kh * bins - h - ph, kw * bins - w - pw);
            layers.push(format!(
                "Padding pad{p} 1 1 x{p} a{p} 0={ph} 1={pb} 2={pw} 3={pr}"
            ));
            layers.push(format!(
                "Pooling pool{p} 1 1 a{p} b{p} 0={pooling} 1={kw} 11={kh} 2={kw} 12={kh} 5=1"
            ));
            layers.push(format!("Reshape flat{p} 1 1 b{p} c{p} 0=-1"));
        }
        let parts: Vec<String> = (0..height).map(|p| format!("c{p}")).collect();
        layers.push(format!("Concat cat {height} 1 {} y", parts.join(" ")));
        let blobs = 2 + height * 4;
        let reference = format!(
            "7767517\n{} {blobs}\nInput in 0 1 x\n{}\n",
            layers.len() + 1,
            layers.join("\n")
        );
        let Some(want) = ncnn(&reference, &[], x, "y") else {
            continue; // no wheel here
        };
        let what = format!("SPP 0={pooling} 1={height} on {w}×{h}×{c}");
        assert_close(&got, &want, 1e-6, &what);
    }
}

/// Inputs the layers' parameters do not fit are typed errors naming the layer.
#[test]
fn proposal_layers_refuse_what_does_not_fit_them() {
    let report = layer_error(
        "Proposal",
        "",
        &[("s", &[10, 8, 8]), ("d", &[36, 8, 8]), ("i", &[3])],
    );
    assert!(report.contains("Proposal's scores"), "{report}");
    let report = layer_error(
        "PSROIPooling",
        "0=3 1=3 3=2",
        &[("m", &[17, 8, 8]), ("r", &[4])],
    );
    assert!(report.contains("PSROIPooling"), "{report}");
    let report = load_error("SPP", &["x"], "0=2");
    assert!(report.contains("param 0 = 2"), "{report}");
}
