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

#[test]
fn relu_in_every_class_and_packing_on_both_paths() {
    for ctx in contexts() {
        for (module, pack) in [(RELU, 1), (RELU_PACK4, 4), (RELU_PACK8, 8)] {
            for class in CLASSES {
                let shape = Shape { w: 13, h: 5, c: 3 };
                let (ran, input, out) = run_unary(
                    &ctx,
                    module,
                    pack,
                    &shape,
                    opts(class),
                    &[(0, SpecValue::F32(0.1))],
                    true,
                );
                let want: Vec<f32> = input
                    .iter()
                    .map(|x| if *x < 0.0 { x * 0.1 } else { *x })
                    .collect();
                let what = format!(
                    "{} {} ran {} on {}",
                    module.name,
                    class,
                    ran.name(),
                    ctx.describe()
                );
                assert_close(&out, &want, tolerance(ran), &what);
                assert!(is_expected_variant(&ctx, opts(class), ran), "{what}");
            }
        }
    }
}

/// ncnn's relu and sigmoid image variants (`sampler3D` in, `image3D` out, pack 1/4/8) on
/// image-backed mats, in every float class, on every context that allows images.
#[test]
fn builtin_image_variants_run_on_image_mats() {
    for ctx in contexts() {
        if !ctx.allowed_options().contains(fpshader::Opt::Image) {
            eprintln!("{}: no image variants allowed, skipped", ctx.describe());
            continue;
        }
        for (module, pack, sigmoid) in [
            (RELU, 1, false),
            (RELU_PACK4, 4, false),
            (RELU_PACK8, 8, false),
            (SIGMOID, 1, true),
            (SIGMOID_PACK4, 4, true),
        ] {
            for class in CLASSES {
                let requested = opts(class).with(fpshader::Opt::Image);
                let spec = Specialization::default();
                let pipeline = ctx.pipeline(module, requested, &spec).unwrap();
                let ran = pipeline.options;
                let what = format!(
                    "{} {class} ran {} on {}",
                    module.name,
                    ran.name(),
                    ctx.describe()
                );
                assert!(ran.contains(fpshader::Opt::Image), "{what}");
                let (w, h, c) = (7, 3, 2);
                let mut input = fpshader::Mat::new_3d(w, h, c, pack).unwrap();
                let format = StorageFormat::of(ran, pack);
                input.data = fpshader::MatData::F32(storable(&random(input.data.len(), 5), format));
                let a = GpuMat::upload(&ctx, &input, ran).unwrap();
                let b = GpuMat::upload(&ctx, &fpshader::Mat::new_3d(w, h, c, pack).unwrap(), ran)
                    .unwrap();
                assert!(a.buffer().is_none(), "{what}: image-backed");
                let shape = [w as u32, h as u32, c as u32, input.cstep as u32];
                let mut rec = ctx.recorder();
                rec.dispatch(&pipeline, &[&a, &b], &shape, [shape[0], shape[1], shape[2]])
                    .unwrap();
                rec.submit_and_wait().unwrap();
                let got = b.download(&ctx).unwrap();
                // a buffer for an image binding, or an image of the wrong format: errors
                let buffer = ctx.storage_buffer(64).unwrap();
                let bad = ctx
                    .recorder()
                    .dispatch(&pipeline, &[&buffer, &buffer], &shape, [1; 3]);
                assert!(
                    matches!(
                        bad,
                        Err(Error::Dispatch(DispatchError::Binding { binding: 0, .. }))
                    ),
                    "{what}: {bad:?}"
                );
                let other = if pack == 1 { 4 } else { 1 };
                let wrong =
                    GpuMat::upload(&ctx, &fpshader::Mat::new_3d(w, h, c, other).unwrap(), ran)
                        .unwrap();
                let bad = ctx
                    .recorder()
                    .dispatch(&pipeline, &[&a, &wrong], &shape, [1; 3]);
                assert!(
                    matches!(
                        bad,
                        Err(Error::Dispatch(DispatchError::Binding { binding: 1, .. }))
                    ),
                    "{what}: {bad:?}"
                );
                let f = |x: f32| {
                    if sigmoid {
                        1.0 / (1.0 + (-x).exp())
                    } else {
                        x.max(0.0)
                    }
                };
                let n = w * h * pack;
                for q in 0..c {
                    let at = q * input.cstep * pack;
                    let want: Vec<f32> = input.f32().unwrap()[at..at + n]
                        .iter()
                        .map(|x| f(*x))
                        .collect();
                    assert_close(
                        &got.f32().unwrap()[at..at + n],
                        &want,
                        tolerance(ran),
                        &what,
                    );
                }
            }
        }
    }
}

#[test]
fn psc_uses_push_constants_when_specialization_is_zero() {
    for ctx in contexts() {
        for class in ["", "fp16s,fp16a"] {
            for module in [SIGMOID, SIGMOID_PACK4] {
                let pack = if module.name.ends_with("pack4") { 4 } else { 1 };
                let shape = Shape { w: 9, h: 4, c: 2 };
                let (ran_s, input_s, out_s) =
                    run_unary(&ctx, module, pack, &shape, opts(class), &[], true);
                let (ran_p, input_p, out_p) =
                    run_unary(&ctx, module, pack, &shape, opts(class), &[], false);
                assert_eq!(ran_s, ran_p);
                assert_eq!(input_s, input_p);
                let want: Vec<f32> = input_s.iter().map(|x| 1.0 / (1.0 + (-x).exp())).collect();
                let what = format!("{} {class} {}", module.name, ctx.describe());
                assert_close(&out_s, &want, tolerance(ran_s), &format!("{what} spec"));
                assert_close(&out_p, &want, tolerance(ran_p), &format!("{what} push"));
            }
        }
    }
}

#[test]
fn binaryop_broadcasts_per_channel() {
    for ctx in contexts() {
        for (shader, pack) in [
            (Shader::Binaryop, 1),
            (Shader::BinaryopPack4, 4),
            (Shader::BinaryopPack8, 8),
        ] {
            for class in CLASSES {
                let (w, h, c) = (7u32, 3u32, 4u32);
                // op 2 = mul, b broadcast over w and h
                let spec = Specialization {
                    values: vec![(0, SpecValue::I32(2))],
                    local_size: Some([8, 2, 1]),
                };
                let pipeline = ctx.pipeline(shader.module(), opts(class), &spec).unwrap();
                let format = StorageFormat::of(pipeline.options, pack);
                let n = (w * h * c) as usize * pack;
                let a = storable(&random(n, 1), format);
                let b = storable(&random(c as usize * pack, 2), format);
                let (ba, bb) = (
                    ctx.upload(&format.encode(&a)).unwrap(),
                    ctx.upload(&format.encode(&b)).unwrap(),
                );
                let out = ctx.storage_buffer((n * format.size()) as u64).unwrap();
                let push = [w, h, c, w * h, 1, 1, c, 1, w, h, c, w * h];
                let mut rec = ctx.recorder();
                rec.dispatch(&pipeline, &[&ba, &bb, &out], &push, [w, h, c])
                    .unwrap();
                rec.submit_and_wait().unwrap();
                let got = format.decode(&ctx.download(&out).unwrap(), n);
                let plane = (w * h) as usize;
                let want: Vec<f32> = a
                    .iter()
                    .enumerate()
                    .map(|(j, x)| x * b[(j / pack / plane) * pack + j % pack])
                    .collect();
                let what = format!(
                    "{} {class} ran {} {}",
                    shader.module().name,
                    pipeline.options.name(),
                    ctx.describe()
                );
                assert_close(&got, &want, tolerance(pipeline.options), &what);
            }
        }
    }
}

static GAPPED: &ShaderModule = shader!(
    src: "#version 450
layout (binding = 0) readonly buffer a { float a_data[]; };
layout (binding = 3) writeonly buffer b { float b_data[]; };
layout (push_constant) uniform parameter { int n; } p;
void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i < p.n)
        b_data[i] = a_data[i] * 2.0 + 1.0;
}
"
);

#[test]
fn binding_gaps_bind_the_right_buffers() {
    for ctx in contexts() {
        let pipeline = ctx
            .pipeline(GAPPED, OptionSet::FP32, &Specialization::default())
            .unwrap();
        let n = 100u32;
        let input = random(n as usize, 5);
        let a = ctx.upload(&StorageFormat::Fp32.encode(&input)).unwrap();
        let b = ctx.storage_buffer(u64::from(n) * 4).unwrap();
        let mut rec = ctx.recorder();
        rec.dispatch(&pipeline, &[&a, &b], &[n], [n, 1, 1]).unwrap();
        rec.submit_and_wait().unwrap();
        let got = StorageFormat::Fp32.decode(&ctx.download(&b).unwrap(), n as usize);
        let want: Vec<f32> = input.iter().map(|x| x * 2.0 + 1.0).collect();
        assert_close(
            &got,
            &want,
            0.001,
            &format!("gapped bindings on {}", ctx.describe()),
        );
    }
}

static REMAINDER: &ShaderModule = shader!(
    src: "#version 450
layout (binding = 0) readonly buffer a { ivec2 a_data[]; };
layout (binding = 1) writeonly buffer b { ivec2 b_data[]; };
layout (push_constant) uniform parameter { int n; } p;
void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i < p.n)
    {
        const int x = a_data[i].x;
        const int y = a_data[i].y;
        b_data[i] = ivec2(x % y, (x % y + y) % y);
    }
}
"
);

/// GLSL's `%` on signed integers (SPIR-V `OpSMod`) is exact on both paths: naga's reader makes it
/// float arithmetic (wrong past 2^24 everywhere, and at exact multiples on the NVIDIA driver),
/// so the naga path rewrites it in integers first.
#[test]
fn signed_remainder_is_exact_on_both_paths() {
    // GLSL leaves `%` of negative operands undefined (lavapipe truncates where SPIR-V floors)
    let mut pairs: Vec<[i32; 2]> = vec![[6, 3], [33_554_431, 2], [100_000_007, 3]];
    for x in (0..4000).step_by(7) {
        for y in [1, 2, 3, 5, 7, 33, 495] {
            pairs.push([x, y]);
            pairs.push([x * 9973 + 16_777_216, y]);
        }
    }
    let n = pairs.len() as u32;
    let words: Vec<u32> = pairs.iter().flatten().map(|v| *v as u32).collect();
    let want: Vec<i32> = pairs.iter().flat_map(|&[x, y]| [x % y; 2]).collect();
    for ctx in contexts() {
        let pipeline = ctx
            .pipeline(REMAINDER, OptionSet::FP32, &Specialization::default())
            .unwrap();
        let a = ctx.upload(bytemuck::cast_slice(&words)).unwrap();
        let b = ctx.storage_buffer(u64::from(n) * 8).unwrap();
        let mut rec = ctx.recorder();
        rec.dispatch(&pipeline, &[&a, &b], &[n], [n, 1, 1]).unwrap();
        rec.submit_and_wait().unwrap();
        let bytes = ctx.download(&b).unwrap();
        let got: &[i32] = bytemuck::cast_slice(&bytes);
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            let [x, y] = pairs[k / 2];
            assert_eq!(g, w, "{x} % {y} (form {}) on {}", k % 2, ctx.describe());
        }
    }
}

/// The fp32 ReLU pipeline with slope 0.5 (local size 32).
fn leaky_relu(ctx: &Context) -> std::sync::Arc<fpshader::Pipeline> {
    let spec = Specialization {
        values: vec![(0, SpecValue::F32(0.5))],
        local_size: Some([32, 1, 1]),
    };
    ctx.pipeline(RELU, OptionSet::FP32, &spec).unwrap()
}

#[test]
fn several_dispatches_in_one_submission() {
    for ctx in contexts() {
        let pipeline = leaky_relu(&ctx);
        let n = 1000u32;
        let input = random(n as usize, 9);
        let a = ctx.upload(&StorageFormat::Fp32.encode(&input)).unwrap();
        let b = ctx.storage_buffer(u64::from(n) * 4).unwrap();
        let c = ctx.storage_buffer(u64::from(n) * 4).unwrap();
        let push = [n, 1, 1, n];
        let mut rec = ctx.recorder();
        rec.dispatch(&pipeline, &[&a, &b], &push, [n, 1, 1])
            .unwrap();
        rec.dispatch(&pipeline, &[&b, &c], &push, [n, 1, 1])
            .unwrap();
        assert_eq!(rec.len(), 2);
        rec.submit_and_wait().unwrap();
        let got = StorageFormat::Fp32.decode(&ctx.download(&c).unwrap(), n as usize);
        let want: Vec<f32> = input
            .iter()
            .map(|x| if *x < 0.0 { x * 0.25 } else { *x })
            .collect();
        assert_close(&got, &want, 0.001, "two relus");
    }
}

/// A recording longer than a chunk goes to the queue in pieces while it is recorded; the
/// pieces run in order, buffers dropped mid-recording are reused by later dispatches, and an
/// upload while unsubmitted work still reads a dropped buffer gets a buffer of its own.
#[test]
fn long_recordings_run_in_chunks_in_order() {
    for ctx in contexts() {
        let pipeline = leaky_relu(&ctx);
        let n = 1000u32;
        let bytes = u64::from(n) * 4;
        let input = random(n as usize, 10);
        let marked = random(n as usize, 11);
        let push = [n, 1, 1, n];
        let before = ctx.submission_stats();
        let mut rec = ctx.recorder();
        let mut prev = ctx.upload(&StorageFormat::Fp32.encode(&input)).unwrap();
        let mut side = None;
        const STEPS: usize = 40;
        for step in 0..STEPS {
            let next = ctx.storage_buffer(bytes).unwrap();
            rec.dispatch(&pipeline, &[&prev, &next], &push, [n, 1, 1])
                .unwrap();
            // `prev` goes back to the pool while the dispatch that reads it is unsubmitted
            prev = next;
            if step == 20 {
                let up = ctx.upload(&StorageFormat::Fp32.encode(&marked)).unwrap();
                let out = ctx.storage_buffer(bytes).unwrap();
                rec.dispatch(&pipeline, &[&up, &out], &push, [n, 1, 1])
                    .unwrap();
                side = Some(out);
            }
        }
        assert_eq!(rec.len(), STEPS + 1);
        rec.submit_and_wait().unwrap();
        let d = ctx.submission_stats() - before;
        assert!(d.submissions >= 3, "{} submissions", d.submissions);
        let leaky = |x: f32, times: i32| if x < 0.0 { x * 0.5f32.powi(times) } else { x };
        let got = StorageFormat::Fp32.decode(&ctx.download(&prev).unwrap(), n as usize);
        let want: Vec<f32> = input.iter().map(|x| leaky(*x, STEPS as i32)).collect();
        assert_close(&got, &want, 1e-6, &format!("{STEPS} chained relus"));
        let side = side.unwrap();
        let got = StorageFormat::Fp32.decode(&ctx.download(&side).unwrap(), n as usize);
        let want: Vec<f32> = marked.iter().map(|x| leaky(*x, 1)).collect();
        assert_close(&got, &want, 1e-6, "an upload made mid-recording");
    }
}

static NEEDS_INT8: &ShaderModule = shader!(
    src: "#version 450
#extension GL_EXT_shader_8bit_storage : require
layout (binding = 0) buffer a { int8_t a_data[]; };
void main() { a_data[0] = a_data[1]; }
"
);

#[test]
fn bad_use_is_an_error_not_a_panic() {
    for ctx in contexts() {
        let spec = Specialization::default();
        let pipeline = ctx.pipeline(RELU, OptionSet::FP32, &spec).unwrap();
        let a = ctx.storage_buffer(64).unwrap();
        let mut rec = ctx.recorder();
        assert!(matches!(
            rec.dispatch(&pipeline, &[&a], &[1, 1, 1, 1], [1, 1, 1]),
            Err(Error::Dispatch(DispatchError::Binding { .. }))
        ));
        assert!(matches!(
            rec.dispatch(&pipeline, &[&a, &a], &[1, 1], [1, 1, 1]),
            Err(Error::Dispatch(DispatchError::PushConstants { .. }))
        ));
        let limit = ctx.limits().max_compute_workgroups_per_dimension;
        assert!(matches!(
            rec.dispatch(
                &pipeline,
                &[&a, &a],
                &[1, 1, 1, 1],
                [1, 1, (limit + 1) * pipeline.local_size[2]]
            ),
            Err(Error::Dispatch(DispatchError::TooLarge { .. }))
        ));
        let err = ctx
            .pipeline(NEEDS_INT8, OptionSet::FP32, &spec)
            .unwrap_err();
        assert!(
            matches!(err, Error::Pipeline(PipelineError::NoVariant { .. })),
            "{err}"
        );
        assert!(err.to_string().contains("fp32"), "{err}");
        let unknown = Specialization {
            values: vec![(42, SpecValue::I32(1))],
            local_size: None,
        };
        assert!(matches!(
            ctx.pipeline(RELU, OptionSet::FP32, &unknown),
            Err(Error::Pipeline(PipelineError::Specialize(_)))
        ));
    }
}

#[test]
fn elempack_round_trips_and_fp16_casts_on_the_gpu() {
    for ctx in contexts() {
        for class in [
            "",
            "fp16p",
            "fp16s",
            "fp16s,fp16a",
            "image",
            "fp16p,image",
            "fp16s,image",
            "fp16s,fp16a,image",
        ] {
            let options = OptionSet::from_bits(opts(class).bits() & ctx.allowed_options().bits());
            let (w, h, c) = (5, 3, 16);
            let values = random(w * h * c, 11);
            let pack1 = fpshader::Mat::from_values(w, h, c, &values).unwrap();
            let what = format!("{class} on {}", ctx.describe());
            let eps = tolerance(options.canonicalize().unwrap());
            let check = |got: &fpshader::Mat, want: &fpshader::Mat, step: &str| {
                assert_eq!(
                    (got.c, got.elempack),
                    (want.c, want.elempack),
                    "{what} {step}"
                );
                let n = got.w * got.h;
                let pick = |m: &fpshader::Mat| -> Vec<f32> {
                    (0..m.c)
                        .flat_map(|q| {
                            (0..n).flat_map(move |i| (0..m.elempack).map(move |k| (q, i, k)))
                        })
                        .map(|(q, i, k)| m.at(q, i, k))
                        .collect()
                };
                assert_close(&pick(got), &pick(want), eps, &format!("{what} {step}"));
            };
            let g1 = GpuMat::upload(&ctx, &pack1, options).unwrap();
            check(&g1.download(&ctx).unwrap(), &pack1, "upload/download pack1");
            // (source step, target elempack, label): 1->4->8->4->1, and 1->8 through 4
            let steps = [
                (0, 4, "1->4"),
                (1, 8, "4->8"),
                (2, 4, "8->4"),
                (3, 1, "4->1"),
                (0, 8, "1->8"),
            ];
            let mut mats = vec![g1];
            for (from, pack, label) in steps {
                let next = mats[from].convert_packing(&ctx, pack).unwrap();
                let want = if pack == 1 {
                    pack1.clone()
                } else {
                    pack1.to_packing(pack).unwrap()
                };
                check(&next.download(&ctx).unwrap(), &want, label);
                mats.push(next);
            }
            assert!(matches!(
                GpuMat::upload(
                    &ctx,
                    &fpshader::Mat::from_values(2, 1, 3, &[0.0; 6]).unwrap(),
                    options
                )
                .unwrap()
                .convert_packing(&ctx, 4),
                Err(Error::Tensor(TensorError::Packing { .. }))
            ));
        }
    }
}

#[cfg(feature = "runtime-compile")]
#[test]
fn shaders_compiled_at_run_time_run() {
    const GLSL: &str = "#version 450
#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif
layout (constant_id = 0) const int n = 0;
layout (binding = 0) readonly buffer a { sfpvec4 a_data[]; };
layout (binding = 1) writeonly buffer b { sfpvec4 b_data[]; };
layout (push_constant) uniform parameter { int n; } p;
void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i >= psc(n)) return;
    buffer_st4(b_data, i, buffer_ld4(a_data, i) * afp(3) - afp(1));
}
";
    for ctx in contexts() {
        let module = ctx
            .compile_module(
                "triple",
                GLSL,
                opts("fp16p,fp16s,fp16a"),
                Default::default(),
            )
            .unwrap();
        assert_eq!(module.variants.len(), 5);
        for class in ["", "fp16s"] {
            let pipeline = ctx
                .pipeline(module, opts(class), &Specialization::default())
                .unwrap();
            let format = StorageFormat::of(pipeline.options, 4);
            let n = 64u32;
            let input = storable(&random(n as usize * 4, 3), format);
            let a = ctx.upload(&format.encode(&input)).unwrap();
            let b = ctx
                .storage_buffer(u64::from(n) * 4 * format.size() as u64)
                .unwrap();
            let mut rec = ctx.recorder();
            rec.dispatch(&pipeline, &[&a, &b], &[n], [n, 1, 1]).unwrap();
            rec.submit_and_wait().unwrap();
            let got = format.decode(&ctx.download(&b).unwrap(), input.len());
            let want: Vec<f32> = input.iter().map(|x| x * 3.0 - 1.0).collect();
            assert_close(
                &got,
                &want,
                tolerance(pipeline.options),
                &format!("run-time {class} {}", ctx.describe()),
            );
        }
        let err = ctx
            .compile_module(
                "bad",
                "#version 450\nvoid main() { nope(); }\n",
                OptionSet::FP32,
                Default::default(),
            )
            .unwrap_err();
        assert!(
            matches!(err, Error::Pipeline(PipelineError::Compile(_))),
            "{err}"
        );
        assert!(err.to_string().contains("bad:2:"), "{err}");
    }
}

static BUFFER_FUNCTIONS: &ShaderModule = shader!(
    "tests/shaders/buffer_functions.comp",
    fp16p,
    fp16s,
    fp16a,
    fp16u,
);

/// Every buffer, local-memory and matrix function of the extension, executed in every float class
/// and compared value by value with the CPU.
#[test]
fn every_buffer_function_in_every_class() {
    const N: usize = 64;
    for ctx in contexts() {
        for class in CLASSES {
            let spec = Specialization {
                values: vec![],
                local_size: Some([N as u32, 1, 1]),
            };
            let pipeline = ctx.pipeline(BUFFER_FUNCTIONS, opts(class), &spec).unwrap();
            let ran = pipeline.options;
            let f1 = StorageFormat::of(ran, 1);
            let fv = StorageFormat::of(ran, 4);
            // values exactly representable in fp16, so every class must reproduce them exactly
            let half = |n: usize, seed: u64| storable(&random(n, seed), StorageFormat::Fp16);
            let (s1, s2, s4, s8, sm) = (
                half(8 * N, 1),
                half(2 * N, 2),
                half(8 * N, 3),
                half(8 * N, 4),
                half(16 * N, 5),
            );
            let bufs_in = [
                ctx.upload(&f1.encode(&s1)).unwrap(),
                ctx.upload(&fv.encode(&s2)).unwrap(),
                ctx.upload(&fv.encode(&s4)).unwrap(),
                ctx.upload(&fv.encode(&s8)).unwrap(),
                ctx.upload(&fv.encode(&sm)).unwrap(),
            ];
            let sizes = [
                (15 * N, f1),
                (2 * N * 2, fv),
                (6 * N * 4, fv),
                (4 * N * 8, fv),
                (16 * N, fv),
            ];
            let bufs_out: Vec<_> = sizes
                .iter()
                .map(|(n, f)| ctx.storage_buffer((n * f.size()) as u64).unwrap())
                .collect();
            let all: Vec<&wgpu::Buffer> = bufs_in
                .iter()
                .chain(bufs_out.iter())
                .map(|b| b.raw())
                .collect();
            let mut rec = ctx.recorder();
            rec.dispatch(&pipeline, &all, &[], [N as u32, 1, 1])
                .unwrap();
            rec.submit_and_wait().unwrap();
            let got: Vec<Vec<f32>> = bufs_out
                .iter()
                .zip(sizes)
                .map(|(b, (n, f))| f.decode(&ctx.download(b).unwrap(), n))
                .collect();

            let twice = |v: &[f32]| v.iter().map(|x| x * 2.0).collect::<Vec<f32>>();
            let mut o1 = twice(&s1[..N]);
            o1.extend_from_slice(&s1[..N]); // cp1
            o1.extend_from_slice(&s4[..4 * N]); // cp4to1: vec4 i to 4i..4i+3
            o1.extend_from_slice(&s8[..8 * N]); // cp8to1
            o1.extend((0..N).map(|i| s1[N - 1 - i])); // lfp round trip
            let mut o2 = twice(&s2[..2 * N]);
            o2.extend_from_slice(&s2[..2 * N]);
            let mut o4 = twice(&s4[..4 * N]);
            o4.extend_from_slice(&s4[..4 * N]); // cp4
            o4.extend_from_slice(&s1[..4 * N]); // cp1to4
            o4.extend_from_slice(&s8[..8 * N]); // cp8to4
            o4.extend((0..N).flat_map(|i| s4[4 * (N - 1 - i)..4 * (N - i)].to_vec())); // lfpvec4
            let mut o8 = twice(&s8[..8 * N]);
            o8.extend_from_slice(&s8[..8 * N]); // cp8
            o8.extend_from_slice(&s1[..8 * N]); // cp1to8
            o8.extend_from_slice(&s4[..8 * N]); // cp4to8
            let om = twice(&sm);
            let what = |name: &str| {
                format!(
                    "{name} in {class} (ran {}) on {}",
                    ran.name(),
                    ctx.describe()
                )
            };
            let eps = tolerance(ran);
            assert_close(&got[0], &o1, eps, &what("sfp results"));
            assert_close(&got[1], &o2, eps, &what("sfpvec2 results"));
            assert_close(&got[2], &o4, eps, &what("sfpvec4 results"));
            assert_close(&got[3], &o8, eps, &what("sfpvec8 results"));
            assert_close(&got[4], &om, eps, &what("sfpmat4 results"));
            // the copies never pass through arithmetic types: exact in every class
            assert_eq!(
                &got[0][N..14 * N],
                &o1[N..14 * N],
                "{}",
                what("scalar copies")
            );
            assert_eq!(
                &got[2][4 * N..20 * N],
                &o4[4 * N..20 * N],
                "{}",
                what("vec4 copies")
            );
            assert_eq!(&got[3][8 * N..], &o8[8 * N..], "{}", what("vec8 copies"));
        }
    }
}

/// `image_functions.comp` for one dimensionality, in every float class with images.
macro_rules! image_functions {
    ($dim:literal) => {
        shader!(
            "tests/shaders/image_functions.comp",
            fp16p,
            fp16s,
            fp16a,
            fp16u,
            image,
            define: [("DIM", $dim)],
        )
    };
}

static IMAGE_FUNCTIONS: [&ShaderModule; 3] = [
    image_functions!("1"),
    image_functions!("2"),
    image_functions!("3"),
];

/// Every image function of the extension (`image{1,2,3}d_{ld,st,cp}{1,4,8}`), executed in every
/// float class through sampled textures and storage images, compared texel by texel with the CPU.
#[test]
fn every_image_function_in_every_class() {
    const N: usize = 64;
    for ctx in contexts() {
        for (dim, module) in IMAGE_FUNCTIONS.iter().enumerate() {
            // wgpu 30's GL backend reads and writes zeros through 1-D images, and binds 3-D
            // storage images as their first layer only (why GL contexts allow no image variants)
            if dim != 1 && ctx.adapter_info.backend == wgpu::Backend::Gl {
                continue;
            }
            let (dimension, extent) = match dim {
                0 => (wgpu::TextureDimension::D1, [N as u32, 1, 1]),
                1 => (wgpu::TextureDimension::D2, [8, 8, 1]),
                _ => (wgpu::TextureDimension::D3, [4, 4, 4]),
            };
            // the last axis doubled (outputs: stores, then copies), x doubled (pack8)
            let size = |wide: bool, twice: bool| {
                let mut e = extent;
                if wide {
                    e[0] *= 2;
                }
                if twice {
                    e[dim] *= 2;
                }
                wgpu::Extent3d {
                    width: e[0],
                    height: e[1],
                    depth_or_array_layers: e[2],
                }
            };
            for class in CLASSES {
                let spec = Specialization {
                    values: vec![],
                    local_size: Some([N as u32, 1, 1]),
                };
                let requested = opts(class).with(fpshader::Opt::Image);
                let pipeline = ctx.pipeline(module, requested, &spec).unwrap();
                let ran = pipeline.options;
                // the extension's imfmtc1 / imfmtc4 for the class that ran
                let c1 = match StorageFormat::of(ran, 1) {
                    StorageFormat::Fp16 => wgpu::TextureFormat::R16Float,
                    StorageFormat::Fp32 => wgpu::TextureFormat::R32Float,
                };
                let c4 = match StorageFormat::of(ran, 4) {
                    StorageFormat::Fp16 => wgpu::TextureFormat::Rgba16Float,
                    StorageFormat::Fp32 => wgpu::TextureFormat::Rgba32Float,
                };
                let half = |n: usize, seed: u64| storable(&random(n, seed), StorageFormat::Fp16);
                let (s1, s4, s8) = (half(N, 21), half(4 * N, 22), half(8 * N, 23));
                let tex = |wide, twice, format, values: &[f32]| {
                    fpshader::tensor::upload_texture(
                        &ctx,
                        dimension,
                        size(wide, twice),
                        format,
                        values,
                    )
                    .unwrap()
                };
                let inputs = [
                    tex(false, false, c1, &s1),
                    tex(false, false, c4, &s4),
                    tex(true, false, c4, &s8),
                ];
                let outputs = [
                    tex(false, true, c1, &[]),
                    tex(false, true, c4, &[]),
                    tex(true, true, c4, &[]),
                ];
                let views: Vec<&wgpu::TextureView> =
                    inputs.iter().chain(&outputs).map(|(_, v)| v).collect();
                let mut rec = ctx.recorder();
                rec.dispatch(&pipeline, &views, &[], [N as u32, 1, 1])
                    .unwrap();
                rec.submit_and_wait().unwrap();
                let what = |name: &str| {
                    format!(
                        "image{}d {name} in {class} (ran {}) on {}",
                        dim + 1,
                        ran.name(),
                        ctx.describe()
                    )
                };
                for ((texture, _), (want, name)) in
                    outputs.iter().zip([(&s1, "1"), (&s4, "4"), (&s8, "8")])
                {
                    let got = fpshader::tensor::download_texture(&ctx, texture).unwrap();
                    let mut expected: Vec<f32> = want.iter().map(|v| v * 2.0).collect();
                    expected.extend_from_slice(want);
                    assert_close(
                        &got,
                        &expected,
                        tolerance(ran),
                        &what(&format!("ld{name}/st{name}")),
                    );
                    // copies never pass through arithmetic types: exact in every class
                    assert_eq!(
                        &got[want.len()..],
                        &want[..],
                        "{}",
                        what(&format!("cp{name}"))
                    );
                }
            }
        }
    }
}

/// A shader declaring more workgroup memory than the device allows is refused when its
/// pipeline is made, with both sizes, on every path (a driver may hang on such a pipeline
/// instead of failing); one within the bound is made.
#[test]
fn shared_memory_over_the_device_limit_is_a_typed_error() {
    let compiler = fpshader_build::Compiler::new(fpshader_build::Settings::default()).unwrap();
    let shader = |floats: u32| {
        let glsl = format!(
            "#version 450\nlayout(local_size_x = 64) in;\n\
             layout(binding = 0) buffer B {{ float b[]; }};\n\
             shared float big[{floats}];\nshared vec4 small[4];\n\
             void main() {{ uint i = gl_LocalInvocationID.x; big[i] = b[i]; small[i % 4u] = vec4(1.0);\n\
             barrier(); b[i] = big[63u - i] + small[0].x; }}\n"
        );
        compiler
            .compile_str("shared", &glsl, Default::default())
            .unwrap()
    };
    for ctx in contexts() {
        let limit = ctx.limits().max_compute_workgroup_storage_size;
        let floats = limit / 4 + 1;
        // SAFETY: glslang wrote both modules (`shader`)
        let err = unsafe { ctx.pipeline_from_spirv("too_big", &shader(floats)) }
            .err()
            .unwrap()
            .to_string();
        let want = format!(
            "it declares {} bytes of workgroup memory; the device allows {limit}",
            u64::from(floats) * 4 + 64
        );
        assert!(err.contains(&want), "{}: {err}", ctx.describe());
        unsafe { ctx.pipeline_from_spirv("fits", &shader(64)) }.unwrap();
    }
}
