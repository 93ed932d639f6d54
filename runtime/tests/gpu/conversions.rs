//! Elempack and fp16 conversions on the device, shaders compiled at run time.

use super::*;

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

/// A 1-D blob's (and a one-column 2-D blob's) packings are the same bytes: repacking hands
/// back a view of its buffer where the storage format stays, a repacked copy elsewhere.
#[test]
fn one_value_channels_repack_as_views_of_their_buffer() {
    for ctx in contexts() {
        for class in ["", "fp16p", "fp16s", "fp16s,fp16a"] {
            let options = OptionSet::from_bits(opts(class).bits() & ctx.allowed_options().bits());
            let values = random(24, 5);
            for host in [
                fpshader::Mat::from_shape_values(1, [24, 1, 1, 1], &values).unwrap(),
                fpshader::Mat::from_shape_values(2, [1, 24, 1, 1], &values).unwrap(),
            ] {
                let what = format!("{class} {}-D on {}", host.dims, ctx.describe());
                let g1 = GpuMat::upload(&ctx, &host, options).unwrap();
                for pack in [4, 8] {
                    let same = StorageFormat::of(g1.options, pack) == g1.format;
                    let g = g1.convert_packing(&ctx, pack).unwrap();
                    assert_eq!((g.c, g.elempack), (24 / pack, pack), "{what}");
                    assert_eq!(
                        g.buffer_is_shared(),
                        same,
                        "{what}: a view exactly where the format stays"
                    );
                    let back = g.convert_packing(&ctx, 1).unwrap().download(&ctx).unwrap();
                    assert_close(
                        &back.to_values(),
                        &host.to_values(),
                        tolerance(g.options),
                        &what,
                    );
                    let want = host.to_packing(pack).unwrap().to_values();
                    assert_close(
                        &g.download(&ctx).unwrap().to_values(),
                        &want,
                        tolerance(g.options),
                        &what,
                    );
                }
            }
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
