//! Every extension function in every class, on buffers and images, and shared memory past the device's limit.

use super::*;

pub(crate) static BUFFER_FUNCTIONS: &ShaderModule = shader!(
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

pub(crate) static IMAGE_FUNCTIONS: [&ShaderModule; 3] = [
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
                    _ => wgpu::TextureFormat::R32Float,
                };
                let c4 = match StorageFormat::of(ran, 4) {
                    StorageFormat::Fp16 => wgpu::TextureFormat::Rgba16Float,
                    _ => wgpu::TextureFormat::Rgba32Float,
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
