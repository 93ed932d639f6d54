//! Shapes against the device's limits and faults of the device: a grid past the workgroups a
//! dimension may have is folded and computes what the CPU does; a buffer past a limit or a
//! budget, an absurd host shape, and a lost device are typed errors, never a panic or a hang.

use std::time::Instant;

use super::*;
use fpshader::{Context, ContextOptions, DeviceError, Memory};

/// A lavapipe context whose device allows `groups` workgroups per dimension and buffers of
/// `buffer` bytes (what a smaller device has), and `budget` bytes of memory.
pub(crate) fn small_device(groups: u32, buffer: u64, budget: Option<u64>) -> Option<Arc<Context>> {
    if std::env::var_os("FPSHADER_SKIP_GPU").is_some() {
        return None;
    }
    let full = gpu_contexts().into_iter().next()?;
    let limits = wgpu::Limits {
        max_compute_workgroups_per_dimension: groups,
        max_buffer_size: buffer.min(full.limits().max_buffer_size),
        max_storage_buffer_binding_size: (full.limits().max_storage_buffer_binding_size)
            .min(buffer as _),
        ..full.limits().clone()
    };
    let ctx = Context::new(ContextOptions {
        backends: Some(wgpu::Backends::VULKAN),
        allow_cpu_adapter: true,
        limits: Some(limits),
        memory_budget: budget,
        ..Default::default()
    })
    .expect("a device with lower limits");
    assert_eq!(ctx.limits().max_compute_workgroups_per_dimension, groups);
    Some(Arc::new(ctx))
}

/// A layer whose grid passes a device's 512 workgroups per dimension (InnerProduct's 1000
/// outputs along y; a 5×5 convolution's 400 × 400 positions, 2500 GEMM tiles along x; a 3×3
/// one's Winograd transforms over 800 × 660, 33000 tiles of 64 invocations' workgroups) folds
/// it, or runs it in bands of rows, and computes what the CPU does, in fp32 and fp16 (within
/// 0.1 for Winograd, whose fp16 products reach 20 here).
#[test]
fn grids_past_the_workgroup_limit_fold() {
    let Some(ctx) = small_device(512, 1 << 27, None) else {
        return;
    };
    let mut rng = Rng(65);
    let cases = [
        (
            "InnerProduct 1000 outputs",
            one_layer("InnerProduct", &["data"], "0=1000 1=1 2=64000"),
            bin(&[(&rng.vec(64_000), true), (&rng.vec(1000), false)]),
            [64, 1, 1, 1],
            "innerproduct",
        ),
        (
            "Convolution 3x3 at 800x660",
            one_layer("Convolution", &["data"], "0=16 1=3 4=1 5=1 6=2304"),
            bin(&[(&rng.vec(2304), true), (&rng.vec(16), false)]),
            [800, 660, 1, 16],
            "convolution_winograd43_input",
        ),
        (
            "Convolution 5x5 at 400x400",
            one_layer("Convolution", &["data"], "0=16 1=5 4=2 5=1 6=6400"),
            bin(&[(&rng.vec(6400), true), (&rng.vec(16), false)]),
            [400, 400, 1, 16],
            "convolution_gemm",
        ),
    ];
    for (what, param, weights, shape, shader) in cases {
        let x = Input::new(&mut rng, "data", if shape[1] == 1 { 1 } else { 3 }, shape);
        let x = Input {
            shape: if shape[1] == 1 { [64, 1, 1, 1] } else { shape },
            ..x
        };
        let inputs = std::slice::from_ref(&x);
        let cpu = run_net(&param, &weights, inputs, "out", RunOptions::fp32(), None).unwrap();
        let packed = RunOptions {
            use_packing_layout: true,
            ..RunOptions::fp32()
        };
        let eps16 = if shader.starts_with("convolution_winograd") {
            0.1
        } else {
            5e-2
        };
        for (opt, eps) in [(packed, 1e-3), (RunOptions::default(), eps16)] {
            ctx.set_timing(true);
            let got = run_net(&param, &weights, inputs, "out", opt, Some(ctx.clone()))
                .unwrap_or_else(|e| panic!("{what}: {}", e.report()));
            let ran: Vec<String> = ctx.take_timings().into_iter().map(|t| t.shader).collect();
            ctx.set_timing(false);
            assert!(
                ran.iter().any(|s| s.starts_with(shader)),
                "{what}: {shader} did not run ({ran:?})"
            );
            assert_close(&got.to_values(), &cpu.to_values(), eps, what);
        }
    }
}

/// A 3-D layer whose Winograd transforms (400 × 330 over 2 slabs: 8300 tiles, up to 779
/// workgroups of 64) or products (160 × 128 over 32 slabs: 40960 positions a product, 640
/// workgroups of the smallest tile, 64 positions) would pass the grid's limit of 512 takes the
/// implicit GEMM, whose grid folds, and computes what the CPU does.
#[test]
fn three_d_winograd_past_the_limit_takes_the_gemm() {
    let Some(ctx) = small_device(512, 1 << 27, None) else {
        return;
    };
    let mut rng = Rng(66);
    let param = one_layer("Convolution3D", &["data"], "0=16 1=3 4=1 5=1 6=6912");
    let weights = bin(&[(&rng.vec(6912), true), (&rng.vec(16), false)]);
    let packed = RunOptions {
        use_packing_layout: true,
        ..RunOptions::fp32()
    };
    for [w, h, d] in [[400, 330, 2], [160, 128, 32]] {
        let x = [Input::new(&mut rng, "data", 4, [w, h, d, 16])];
        let cpu = run_net(&param, &weights, &x, "out", RunOptions::fp32(), None).unwrap();
        let what = format!("Convolution3D at {w} × {h} × {d}");
        ctx.set_timing(true);
        let got = run_net(&param, &weights, &x, "out", packed, Some(ctx.clone()))
            .unwrap_or_else(|e| panic!("{what}: {}", e.report()));
        let ran: Vec<String> = ctx.take_timings().into_iter().map(|t| t.shader).collect();
        ctx.set_timing(false);
        assert!(
            ran.iter().any(|s| s == "convolution_gemm"),
            "{what}: {ran:?}"
        );
        let winograd = ran.iter().any(|s| s.starts_with("convolution_winograd"));
        assert!(!winograd, "{what}: {ran:?}");
        assert_close(&got.to_values(), &cpu.to_values(), 1e-3, &what);
    }
}

/// A 3-D layer whose Winograd buffers would pass the memory budget where its implicit GEMM
/// does not (16 channels at 64 × 64 × 8 in 10 MiB: 2 MiB in and out, 4.5 MiB of transformed
/// values each side) takes the GEMM on the device, not the CPU, and computes what the CPU
/// does.
#[test]
fn three_d_winograd_past_the_budget_takes_the_gemm() {
    let Some(ctx) = small_device(65535, 1 << 27, Some(10 << 20)) else {
        return;
    };
    let mut rng = Rng(67);
    let param = one_layer("Convolution3D", &["data"], "0=16 1=3 4=1 5=1 6=6912");
    let weights = bin(&[(&rng.vec(6912), true), (&rng.vec(16), false)]);
    let x = [Input::new(&mut rng, "data", 4, [64, 64, 8, 16])];
    let cpu = run_net(&param, &weights, &x, "out", RunOptions::fp32(), None).unwrap();
    let packed = RunOptions {
        use_packing_layout: true,
        ..RunOptions::fp32()
    };
    ctx.set_timing(true);
    let (got, record) = run_net_recorded(&param, &weights, &x, "out", packed, Some(ctx.clone()))
        .unwrap_or_else(|e| panic!("{}", e.report()));
    let ran: Vec<String> = ctx.take_timings().into_iter().map(|t| t.shader).collect();
    ctx.set_timing(false);
    let layers = &record.layers;
    assert!(
        ran.iter().any(|s| s == "convolution_gemm"),
        "{ran:?} {layers:?}"
    );
    assert!(
        !ran.iter().any(|s| s.starts_with("convolution_winograd")),
        "{ran:?}"
    );
    let what = "Convolution3D at 64 × 64 × 8 in 10 MiB";
    assert_close(&got.to_values(), &cpu.to_values(), 1e-3, what);
}

/// Past the context's memory budget the net's answer is a typed error naming the layer and
/// the sizes; the context goes on working after it.
#[test]
fn memory_past_the_budget_is_a_typed_error() {
    let Some(ctx) = small_device(65535, 1 << 27, Some(1 << 20)) else {
        return;
    };
    let relu = one_layer("ReLU", &["data"], "");
    // 4 MiB in against a 1 MiB budget
    let big = Input::new(&mut Rng(1), "data", 3, [512, 512, 1, 4]);
    let small = Input::new(&mut Rng(2), "data", 3, [8, 8, 1, 4]);
    let inputs = std::slice::from_ref(&big);
    let e = run_net(
        &relu,
        &[],
        inputs,
        "out",
        RunOptions::fp32(),
        Some(ctx.clone()),
    )
    .unwrap_err();
    let report = e.report();
    assert!(report.contains("out of device memory"), "{report}");
    assert!(
        matches!(e, Error::Layer { ref layer, .. } if layer == "layer"),
        "{report}"
    );
    let inputs = std::slice::from_ref(&small);
    let ok = run_net(&relu, &[], inputs, "out", RunOptions::fp32(), Some(ctx)).unwrap();
    let relu_values: Vec<f32> = small.values.iter().map(|v| v.max(0.0)).collect();
    assert_eq!(ok.to_values(), relu_values);
}

/// A shape no host can hold is refused at once, before anything is allocated or filled.
#[test]
fn an_absurd_host_shape_is_refused_at_once() {
    let started = Instant::now();
    // 12 TB (120 GB fit the 128 GiB of the H200 machines, which then filled them)
    let e = Mat::zeros(3, [1_000_000, 1_000_000, 1, 3], 1, ElemType::F32).unwrap_err();
    assert!(
        matches!(e, Error::OutOfMemory { memory: Memory::Host, needed, .. } if needed == 12_000_000_000_000),
        "{e}"
    );
    let e = Mat::zeros(4, [1 << 20, 1 << 20, 1 << 20, 1 << 20], 1, ElemType::F32).unwrap_err();
    assert!(matches!(e, Error::Tensor(_)), "{e}");
    assert!(
        started.elapsed().as_secs_f64() < 1.0,
        "{:?}",
        started.elapsed()
    );
}

/// A device lost while a net holds it (`Device::destroy`, as a driver reset would) makes
/// every later extract a typed error, on every thread, instead of a panic or a hang.
#[test]
fn a_lost_device_is_a_typed_error() {
    let Some(ctx) = small_device(65535, 1 << 27, None) else {
        return;
    };
    let param = one_layer("ReLU", &["data"], "");
    let x = Input::new(&mut Rng(3), "data", 3, [8, 8, 1, 4]);
    let net = Arc::new(load_net(&param, &[], RunOptions::fp32(), Some(ctx.clone())).unwrap());
    let extract = |net: &Net| {
        let mut ex = net.create_extractor()?;
        ex.input("data", x.mat())?;
        ex.extract("out")
    };
    extract(&net).unwrap();
    ctx.device.destroy();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let e = extract(&net).unwrap_err();
                assert!(e.report().contains("lost"), "{}", e.report());
            });
        }
    });
    assert!(ctx.is_lost());
    let e = ctx.check_device().unwrap_err();
    assert!(matches!(e, Error::Device(DeviceError::Lost { .. })), "{e}");
}
