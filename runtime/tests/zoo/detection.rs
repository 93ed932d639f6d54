//! A detection model (an SSD or YOLO backbone and its head) against ncnn's wheel on the CPU:
//! the head's inputs and its detections; then on every GPU context in fp32 and fp16: the
//! backbone on the GPU (every layer but the head, which runs on the CPU as in ncnn, after one
//! download) within the zoo's tolerances of the CPU, and in fp32 the same detections.

use super::common::*;
use fpshader::layer::RunOptions;

/// A blob's numpy shape and values.
type Blob = (Vec<usize>, Vec<f32>);

/// The bottoms of the layer whose top is `out`: the head's inputs.
fn head_inputs(param: &str, out: &str) -> Vec<String> {
    param
        .lines()
        .skip(2)
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() > 4 && f[4..].contains(&out))
        .map(|f| {
            let bottoms: usize = f[2].parse().unwrap();
            f[4..4 + bottoms].iter().map(|b| b.to_string()).collect()
        })
        .unwrap_or_default()
}

/// The blobs `names` of one run (`ctx` for the GPU), with the layers that ran on the CPU.
fn extract(
    (param, weights): (&str, &[u8]),
    x: &Input,
    names: &[&str],
    opt: RunOptions,
    ctx: Option<std::sync::Arc<fpshader::Context>>,
) -> (Vec<Blob>, Vec<String>) {
    let net = load_net(param, weights, opt, ctx).unwrap_or_else(|e| panic!("load: {e}"));
    let mut ex = net.create_extractor().unwrap();
    ex.input(x.name, x.mat()).unwrap();
    let blobs = names
        .iter()
        .map(|n| {
            let m = ex
                .extract(n)
                .unwrap_or_else(|e| panic!("{n}: {}", e.report()));
            (m.numpy_shape(), m.to_values())
        })
        .collect();
    // the types of the layers that ran on the CPU (a layer's index is its line's)
    let kinds: Vec<&str> = param
        .lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let cpu = (ex.record().cpu_layers().iter())
        .map(|&i| {
            kinds
                .get(i)
                .map_or_else(|| format!("layer {i}"), |k| k.to_string())
        })
        .collect();
    (blobs, cpu)
}

/// [`extract`]'s detections, rows of 6, at least one (the comparison is of boxes, not of two
/// empty outputs), in an order of their own: by label, then corners. Two runs whose scores
/// differ by rounding may rank near-equal boxes the other way round; the boxes are the same.
fn detections(what: &str, (shape, values): &Blob) -> Vec<f32> {
    assert!(
        shape.len() == 2 && shape[0] > 0 && shape[1] == 6,
        "{what}: detections of shape {shape:?}"
    );
    let mut rows: Vec<&[f32]> = values.chunks(6).collect();
    rows.sort_by(|a, b| {
        let key = |r: &[f32]| [r[0], r[2], r[3], r[4], r[5], r[1]];
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    rows.concat()
}

/// The layers a detection net may run on the CPU: its heads, and the layers that read only
/// what CPU layers wrote (the Concat of PriorBox's outputs): the types of `param`'s layers
/// whose inputs all come from them.
fn host_side(param: &str) -> Vec<String> {
    let heads = [
        "DetectionOutput",
        "YoloDetectionOutput",
        "Yolov3DetectionOutput",
        "PriorBox",
    ];
    let mut host_blobs: Vec<String> = Vec::new();
    let mut kinds = Vec::new();
    for line in param.lines().skip(2) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(kind), Some(n)) = (f.first(), f.get(2).and_then(|n| n.parse::<usize>().ok()))
        else {
            continue;
        };
        let tops: usize = f[3].parse().unwrap_or(0);
        let bottoms = &f[4..4 + n];
        let host = heads.contains(kind)
            || (n > 0 && bottoms.iter().all(|b| host_blobs.iter().any(|h| h == b)));
        if host {
            host_blobs.extend(f[4 + n..4 + n + tops].iter().map(|t| t.to_string()));
            kinds.push(kind.to_string());
        }
    }
    kinds
}

/// fp16's check of a head input: every value within `eps` of the blob's largest magnitude of
/// `want`. Random weights without normalization grow a YOLO backbone's raw outputs (to 70 in
/// yolo-fastest): fp16's relative rounding then moves the small ones by more than ncnn's
/// per-value tolerance, though the values as a whole keep fp16's three digits.
fn within_range(got: &[f32], want: &[f32], eps: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: value count");
    let range = want.iter().fold(0f32, |m, v| m.max(v.abs()));
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert!(
            (a - b).abs() <= eps * range,
            "{what}: value {i}: {a}, CPU {b} (range {range})"
        );
    }
}

/// A detection model (with `int8`, an int8 one run as int8: on the CPU only, its int8 layers
/// having no GPU path yet) against the wheel, then on every GPU context.
pub fn check(name: &str, model: (&str, &[u8]), x: &Input, out: &str, int8: bool) {
    let head = head_inputs(model.0, out);
    let mut names: Vec<&str> = head.iter().map(String::as_str).collect();
    names.push(out);
    let opt = RunOptions {
        use_int8_inference: int8,
        ..RunOptions::fp32()
    };
    let (cpu, _) = extract(model, x, &names, opt, None);
    let what = |how: &str| format!("{name}, {how}");
    if let Some((values, shapes)) = ncnn_outputs_shaped(
        ("m.param", model.0.as_bytes()),
        model.1,
        std::slice::from_ref(x),
        &names,
    ) {
        for (k, n) in names.iter().enumerate() {
            let how = what(&format!("CPU fp32 `{n}` against ncnn"));
            assert_eq!(cpu[k].0, shapes[k], "{how}: shape");
            if k == names.len() - 1 && shapes[k].len() == 2 {
                let want = detections(&how, &(shapes[k].clone(), values[k].clone()));
                assert_close(&detections(&how, &cpu[k]), &want, 1e-3, &how);
            } else {
                assert_close(&cpu[k].1, &values[k], 1e-3, &how);
            }
        }
    }
    let last = names.len() - 1;
    let boxes = detections(&what("CPU"), &cpu[last]);
    if int8 {
        return;
    }
    let host = host_side(model.0);
    for ctx in &gpu_contexts() {
        let fp32 = RunOptions {
            use_packing_layout: true,
            ..RunOptions::fp32()
        };
        for (class, opt, eps) in [("fp32", fp32, 1e-3), ("fp16", RunOptions::default(), 1e-2)] {
            let how = what(&format!("GPU {class}, {}", ctx.describe()));
            let (got, cpu_layers) = extract(model, x, &names, opt, Some(ctx.clone()));
            // the head alone on the CPU (PriorBox too, and what reads only its outputs)
            assert!(
                cpu_layers.iter().all(|l| host.contains(l)),
                "{how}: on the CPU: {cpu_layers:?}"
            );
            for (k, n) in names[..last].iter().enumerate() {
                let what = format!("{how}: `{n}`");
                match class {
                    "fp32" => assert_close(&got[k].1, &cpu[k].1, eps, &what),
                    _ => within_range(&got[k].1, &cpu[k].1, eps, &what),
                }
            }
            if class == "fp32" {
                let got = detections(&how, &got[last]);
                assert_close(&got, &boxes, 1e-3, &format!("{how}: detections"));
            }
        }
    }
}
