//! Built-in shaders run on a real device (lavapipe in CI) through both wgpu paths, compared with a
//! CPU reference using ncnn's tolerances. Without a device these tests fail, unless
//! `FPSHADER_SKIP_GPU=1` says to skip them.
#![cfg(not(fpshader_emulated))]

use fpshader::GpuMat;
use fpshader::meta::ShaderModule;
use fpshader::shaders::Shader;
use fpshader::specialize::{SpecValue, Specialization};
use fpshader::{
    Context, ContextOptions, DispatchError, Error, OptionSet, PipelineError, ShaderPath,
    StorageFormat, TensorError, wgpu,
};
use fpshader_macro::shader;

#[path = "common/example_shaders.rs"]
mod example_shaders;
use example_shaders::{RELU, RELU_PACK4, RELU_PACK8, SIGMOID, SIGMOID_PACK4};

/// Vulkan through both paths, and OpenGL (naga path), e.g. lavapipe and llvmpipe in CI.
/// `FPSHADER_SKIP_GPU=1` skips all, `FPSHADER_SKIP_GL=1` only OpenGL.
fn contexts() -> Vec<Context> {
    if std::env::var_os("FPSHADER_SKIP_GPU").is_some() {
        eprintln!("FPSHADER_SKIP_GPU set: skipping GPU tests");
        return Vec::new();
    }
    let mut configs = vec![
        (wgpu::Backends::VULKAN, ShaderPath::Passthrough),
        (wgpu::Backends::VULKAN, ShaderPath::Naga),
    ];
    if std::env::var_os("FPSHADER_SKIP_GL").is_none() {
        configs.push((wgpu::Backends::GL, ShaderPath::Naga));
    }
    configs
        .into_iter()
        .map(|(backends, path)| {
            Context::new(ContextOptions {
                backends: Some(backends),
                path: Some(path),
                // lavapipe and llvmpipe in CI
                allow_cpu_adapter: true,
                // ncnn's defaults plus images, so image variants can be asked for
                options: Some(fpshader::Options {
                    use_image_storage: true,
                    ..Default::default()
                }),
                ..Default::default()
            })
            .unwrap_or_else(|e| {
                panic!(
                    "no {backends:?} device for {path:?} ({e}); install lavapipe and llvmpipe \
                     (`cargo xtask deps`), or set FPSHADER_SKIP_GPU=1 / FPSHADER_SKIP_GL=1"
                )
            })
        })
        .collect()
}

/// Whether `ran` is the variant a context should pick for `requested`: what the context allows of
/// it, or on naga for fp16pa also fp16p (naga lacks `unpackFloat2x16`, which vector loads use).
fn is_expected_variant(ctx: &Context, requested: OptionSet, ran: OptionSet) -> bool {
    let set = OptionSet::from_bits(requested.bits() & ctx.allowed_options().bits())
        .canonicalize()
        .unwrap_or(OptionSet::FP32);
    ran == set
        || (ctx.path() == ShaderPath::Naga
            && set.float_class().name() == "fp16pa"
            && ran == set.without(fpshader::Opt::Fp16Arithmetic))
}

fn random(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 6.0 - 3.0
        })
        .collect()
}

fn opts(s: &str) -> OptionSet {
    OptionSet::parse(s).unwrap()
}

/// ncnn's comparison: |a-b| <= eps, or relative error < eps; eps by precision.
fn tolerance(options: OptionSet) -> f32 {
    let class = options.float_class();
    if class.arithmetic {
        1.0
    } else if class.storage != fpshader_build::Storage::Fp32 {
        0.1
    } else {
        0.001
    }
}

fn assert_close(got: &[f32], want: &[f32], eps: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let abs = (g - w).abs();
        let rel = abs / w.abs().max(f32::MIN_POSITIVE);
        assert!(abs <= eps || rel < eps, "{what}: [{i}] got {g}, want {w}");
    }
}

/// Inputs as the GPU will see them: rounded through fp16 when stored as fp16.
fn storable(values: &[f32], format: StorageFormat) -> Vec<f32> {
    format.decode(&format.encode(values), values.len())
}

struct Shape {
    w: u32,
    h: u32,
    c: u32,
}

/// Runs a unary elementwise built-in over a pack-`pack` blob and returns (variant, input, output).
fn run_unary(
    ctx: &Context,
    module: &'static ShaderModule,
    pack: usize,
    shape: &Shape,
    options: OptionSet,
    params: &[(u32, SpecValue)],
    use_spec_for_shape: bool,
) -> (OptionSet, Vec<f32>, Vec<f32>) {
    let Shape { w, h, c } = *shape;
    let cstep = w * h;
    let offset = params.len() as u32;
    let mut values = params.to_vec();
    if use_spec_for_shape {
        for (i, v) in [w, h, c, cstep].into_iter().enumerate() {
            values.push((offset + i as u32, SpecValue::I32(v as i32)));
        }
    }
    let spec = Specialization {
        values,
        local_size: None,
    };
    let pipeline = ctx.pipeline(module, options, &spec).unwrap();
    let format = StorageFormat::of(pipeline.options, pack);
    let n = (cstep * c) as usize * pack;
    let input = storable(&random(n, u64::from(w * 31 + h * 7 + c)), format);
    let a = ctx.upload(&format.encode(&input)).unwrap();
    let b = ctx.storage_buffer((n * format.size()) as u64).unwrap();
    let push = if use_spec_for_shape {
        vec![0; 4]
    } else {
        vec![w, h, c, cstep]
    };
    let mut rec = ctx.recorder();
    rec.dispatch(&pipeline, &[&a, &b], &push, [w, h, c])
        .unwrap();
    rec.submit_and_wait().unwrap();
    let out = format.decode(&ctx.download(&b).unwrap(), n);
    (pipeline.options, input, out)
}

const CLASSES: [&str; 6] = [
    "",
    "fp16p",
    "fp16p,fp16a",
    "fp16s",
    "fp16s,fp16a",
    "fp16s,fp16a,fp16u",
];

#[path = "gpu/bindings.rs"]
mod bindings;
#[path = "gpu/classes.rs"]
mod classes;
#[path = "gpu/conversions.rs"]
mod conversions;
#[path = "gpu/dump.rs"]
mod dump;
#[path = "gpu/functions.rs"]
mod functions;
#[path = "gpu/misuse.rs"]
mod misuse;
#[path = "gpu/submission.rs"]
mod submission;
