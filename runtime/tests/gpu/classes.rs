//! Built-in shaders in every option class and packing, image variants, push-constant fallbacks and broadcasts.

use super::*;

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
