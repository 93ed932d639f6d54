//! Blobs past a buffer of the device: a layer whose input or output would not fit one buffer
//! runs on the device in bands of rows (a window with fixed padding, an integral upscale, an
//! elementwise function) and computes what the CPU does; any other runs on the CPU. So does a
//! grid past the workgroups per dimension along the rows. On lavapipe devices opened with low
//! limits (1 MiB buffers, 64 workgroups), so that small maps pass them.

use super::limits::small_device;
use super::*;
use fpshader::net::{Placed, RunRecord};

/// The packed fp32 options (1e-3 against the CPU) and ncnn's fp16 storage with fp32
/// arithmetic (2e-2: rounding at each layer's output only; fp16 sums through a chain of
/// convolutions drift past ncnn's 5e-2 for one layer, banded or not).
fn options() -> [(RunOptions, f32); 2] {
    let packed = RunOptions {
        use_packing_layout: true,
        ..RunOptions::fp32()
    };
    let fp16 = RunOptions {
        use_fp16_arithmetic: false,
        ..RunOptions::default()
    };
    [(packed, 1e-3), (fp16, 2e-2)]
}

/// A chain of layers as a model: `(type, params, weights)` each reading the one before, the
/// first reading `data`; blob `bN` is layer N's output.
fn chain(layers: &[(&str, String, usize)], rng: &mut Rng) -> (String, Vec<u8>) {
    let mut param = format!(
        "7767517\n{} {}\nInput in 0 1 data\n",
        layers.len() + 1,
        layers.len() + 1
    );
    let mut weights = Vec::new();
    for (n, (kind, params, count)) in layers.iter().enumerate() {
        let bottom = if n == 0 {
            "data".to_string()
        } else {
            format!("b{}", n - 1)
        };
        param += &format!("{kind} l{n} 1 1 {bottom} b{n} {params}\n");
        if *count > 0 {
            // weights, then a bias of the outputs (param 0) where bias_term
            let outputs: usize = params
                .split_whitespace()
                .find_map(|p| p.strip_prefix("0="))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            // scaled by the fan-in, so that values keep their size through the chain
            let fan_in = (*count / outputs.max(1)).max(1) as f32;
            let w: Vec<f32> = rng
                .vec(*count)
                .iter()
                .map(|v| v * (3.0 / fan_in).sqrt())
                .collect();
            weights.extend(bin(&[(&w, true), (&rng.vec(outputs), false)]));
        }
    }
    (param, weights)
}

/// Where each layer of a chain went (chain layer `n` is the net's layer `n + 1`, after
/// the input).
fn placed(record: &RunRecord, layers: usize) -> Vec<Option<Placed>> {
    (1..=layers)
        .map(|i| record.layers.iter().find(|(l, _)| *l == i).map(|(_, p)| *p))
        .collect()
}

/// Real-ESRGAN's tail and more: upscales (nearest, bilinear, bicubic) whose outputs pass a
/// buffer, convolutions padded, strided and dilated, an activation and a pooling, each on
/// bands of a banded blob or of one that fits, outputs put together where they fit again.
#[test]
fn a_net_past_a_buffer_runs_in_bands_and_matches_the_cpu() {
    let Some(ctx) = small_device(65535, 1 << 20, None) else {
        return;
    };
    let mut rng = Rng(71);
    let conv = |c: usize, o: usize, extra: &str| {
        (
            "Convolution",
            format!("0={o} 1=3 4=1 5=1 6={} 9=2 -23310=1,0.2 {extra}", 9 * c * o),
            9 * c * o,
        )
    };
    let layers = [
        conv(3, 16, ""),
        ("Interp", "0=1 1=2.0 2=2.0".into(), 0),
        conv(16, 16, ""),
        ("Interp", "0=2 1=2.0 2=2.0".into(), 0),
        (
            "ConvolutionDepthWise",
            "0=16 1=3 4=1 5=1 6=144 7=16".into(),
            144,
        ),
        ("ReLU", "0=0.1".into(), 0),
        ("Pooling", "0=0 1=3 2=2 3=1".into(), 0),
        conv(16, 16, "3=2 2=2 4=2"),
        ("Interp", "0=3 1=2.0 2=2.0".into(), 0),
        conv(16, 3, ""),
    ];
    let (param, weights) = chain(&layers, &mut rng);
    let x = Input::new(&mut rng, "data", 3, [96, 96, 1, 3]);
    let inputs = std::slice::from_ref(&x);
    let last = format!("b{}", layers.len() - 1);
    let want = run_net(&param, &weights, inputs, &last, RunOptions::fp32(), None).unwrap();
    // the pooling's tail pad makes 193 rows of 384
    assert_eq!(want.shape(), [194, 194, 1, 3]);
    for (opt, eps) in options() {
        let (got, record) =
            run_net_recorded(&param, &weights, inputs, &last, opt, Some(ctx.clone()))
                .unwrap_or_else(|e| panic!("{}", e.report()));
        let placed = placed(&record, layers.len());
        // 192² × 16 channels and more pass 1 MiB: every layer writing or reading such a map
        // ran in bands, the first one whole
        let banded = [1, 2, 3, 4, 5, 6, 7, 8, 9];
        for (n, p) in placed.iter().enumerate() {
            assert_eq!(
                matches!(p, Some(Placed::GpuBands(b)) if *b > 1),
                banded.contains(&n),
                "layer {n}: {placed:?}"
            );
        }
        assert!(record.cpu_layers().is_empty(), "{placed:?}");
        assert_close(&got.to_values(), &want.to_values(), eps, "banded chain");
    }
}

/// An input on the host past one binding is uploaded band by band; a banded blob asked for
/// itself, or read by a layer without a row map (Softmax over the rows, a BinaryOp of two
/// blobs), comes to the host whole.
#[test]
fn banded_blobs_reach_the_host_whole() {
    let Some(ctx) = small_device(65535, 1 << 20, None) else {
        return;
    };
    let mut rng = Rng(72);
    let layers = [
        ("Convolution", "0=16 1=3 4=1 5=1 6=432".to_string(), 432),
        ("Sigmoid", String::new(), 0),
        ("Softmax", "0=1 1=1".into(), 0),
    ];
    let (param, weights) = chain(&layers, &mut rng);
    // 300² × 3 fp32 (1.1 MB) does not fit one binding of 1 MiB
    let x = Input::new(&mut rng, "data", 3, [300, 300, 1, 3]);
    let inputs = std::slice::from_ref(&x);
    for blob in ["b0", "b1", "b2"] {
        let want = run_net(&param, &weights, inputs, blob, RunOptions::fp32(), None).unwrap();
        for (opt, eps) in options() {
            let (got, record) =
                run_net_recorded(&param, &weights, inputs, blob, opt, Some(ctx.clone()))
                    .unwrap_or_else(|e| panic!("{blob}: {}", e.report()));
            let placed = placed(&record, layers.len());
            assert!(
                matches!(placed[0], Some(Placed::GpuBands(_))),
                "{blob}: {placed:?}"
            );
            if blob == "b2" {
                assert_eq!(placed[2], Some(Placed::Cpu), "{placed:?}");
            }
            assert_close(&got.to_values(), &want.to_values(), eps, blob);
        }
    }
}

/// A layer whose output would not fit a buffer and that has no row map for its input (a
/// resize with aligned corners, a "same"-padded convolution, whose steps or padding depend
/// on the height) runs on the CPU; one that has runs in bands. Both compute what the CPU
/// does.
#[test]
fn layers_past_a_buffer_run_in_bands_or_on_the_cpu() {
    let Some(ctx) = small_device(65535, 1 << 20, None) else {
        return;
    };
    let mut rng = Rng(5);
    let conv_weights = bin(&[(&rng.vec(16 * 27), true), (&rng.vec(16), false)]);
    let cases = [
        (
            one_layer("ReLU", &["data"], ""),
            Vec::new(),
            [512, 512, 1, 4],
            true,
        ),
        (
            one_layer("Interp", &["data"], "0=1 1=4.0 2=4.0"),
            Vec::new(),
            [128, 128, 1, 4],
            true,
        ),
        (
            one_layer("Interp", &["data"], "0=2 1=4.0 2=4.0 6=1"),
            Vec::new(),
            [128, 128, 1, 4],
            false,
        ),
        (
            one_layer("Convolution", &["data"], "0=16 1=3 4=1 5=1 6=432"),
            conv_weights.clone(),
            [130, 130, 1, 3],
            true,
        ),
        (
            one_layer("Convolution", &["data"], "0=16 1=3 4=-233 5=1 6=432"),
            conv_weights,
            [130, 130, 1, 3],
            false,
        ),
    ];
    let packed = options()[0].0;
    for (param, weights, shape, bands) in cases {
        let x = Input::new(&mut rng, "data", 3, shape);
        let inputs = std::slice::from_ref(&x);
        let want = run_net(&param, &weights, inputs, "out", RunOptions::fp32(), None).unwrap();
        let (got, record) =
            run_net_recorded(&param, &weights, inputs, "out", packed, Some(ctx.clone()))
                .unwrap_or_else(|e| panic!("{param}: {}", e.report()));
        assert_eq!(
            record.banded_layers().len(),
            usize::from(bands),
            "{param}: {record:?}"
        );
        assert_eq!(
            record.cpu_layers().len(),
            usize::from(!bands),
            "{param}: {record:?}"
        );
        assert_close(&got.to_values(), &want.to_values(), 1e-4, &param);
    }
}

/// A layer whose grid would pass the workgroups a dimension may have along the rows (an
/// upscale's 4000 output rows on a device of 64 workgroups per dimension, where the shader
/// does not fold its grid) runs in bands low enough for it; one past the limit along the
/// width, which bands cannot split, runs on the CPU.
#[test]
fn grids_past_the_workgroup_limit_along_the_rows_run_in_bands() {
    let Some(ctx) = small_device(64, 1 << 27, None) else {
        return;
    };
    let mut rng = Rng(73);
    let param = one_layer("Interp", &["data"], "0=2 1=2.0 2=2.0");
    for (shape, bands) in [([16, 2000, 1, 4], true), ([20000, 4, 1, 4], false)] {
        let x = Input::new(&mut rng, "data", 3, shape);
        let inputs = std::slice::from_ref(&x);
        let want = run_net(&param, &[], inputs, "out", RunOptions::fp32(), None).unwrap();
        let (got, record) = run_net_recorded(
            &param,
            &[],
            inputs,
            "out",
            options()[0].0,
            Some(ctx.clone()),
        )
        .unwrap_or_else(|e| panic!("{shape:?}: {}", e.report()));
        assert_eq!(
            record.banded_layers().len(),
            usize::from(bands),
            "{shape:?}: {record:?}"
        );
        assert_eq!(
            record.cpu_layers().len(),
            usize::from(!bands),
            "{shape:?}: {record:?}"
        );
        assert_close(&got.to_values(), &want.to_values(), 1e-4, "interp");
    }
}
