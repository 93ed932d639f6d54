//! Compute-only VGFs run on the GPU against a CPU reference.

use super::*;

pub(crate) fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytemuck::pod_collect_to_vec(bytes)
}

#[test]
fn compute_only_vgfs_run_on_the_gpu() {
    let a: Vec<f32> = (0..64).map(|i| (i as f32 - 30.0) / 7.0).collect();
    let b: Vec<f32> = (0..64).map(|i| (i as f32 * 0.37).sin()).collect();
    let bytes = |v: &[f32]| bytemuck::cast_slice::<f32, u8>(v).to_vec();
    let all = cases();
    type Reference<'a> = Box<dyn Fn(usize) -> f32 + 'a>;
    let checks: Vec<(usize, Reference)> = vec![
        (1, Box::new(|i| (a[i].abs() * 2.0 + b[i]).exp())),
        (2, Box::new(|i| (a[i] * 2.0 + b[i]) * 2.0 + b[i])),
        (
            3,
            Box::new(|i| {
                let s = a[i] * 2.0 + b[i];
                s.abs() + s.exp()
            }),
        ),
        (4, Box::new(|i| a[i] * 2.0 + 0.5)),
        (5, Box::new(|i| a[i] * 3.0)),
        (6, Box::new(|i| b[i] * 2.0 + a[i])),
    ];
    for ctx in common::gpu_contexts() {
        for (case, want) in &checks {
            let (name, mlir, _) = &all[*case];
            let file = vgf::write(&compute_only(&tosa::mlir::parse(name, mlir).unwrap()));
            let model = unsafe { VgfModel::load(&ctx, &file, &Default::default()) }.unwrap();
            let inputs: Vec<Vec<u8>> = [&a, &b][..model.input_names().len()]
                .iter()
                .map(|v| bytes(v))
                .collect();
            let views: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
            let got = f32s(&model.run(&ctx, &views).unwrap()[0]);
            let want: Vec<f32> = (0..64).map(want).collect();
            common::assert_close(&got, &want, 1e-5, &format!("{name} on {}", ctx.describe()));
        }
        // a placeholder runs with the shader supplied by operator name
        let (name, mlir, _) = &all[7];
        let model = compute_only(&tosa::mlir::parse(name, mlir).unwrap());
        assert!(matches!(model.modules[0].code, vgf::ModuleCode::None));
        let file = vgf::write(&model);
        let err = unsafe { VgfModel::load(&ctx, &file, &Default::default()) }
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("placeholder"), "{err}");
        let spirv = compiler()
            .compile_str("axpy", GLSL_AXPY, Default::default())
            .unwrap();
        let shaders = [("axpy".to_string(), spirv)].into_iter().collect();
        let model = unsafe { VgfModel::load(&ctx, &file, &shaders) }.unwrap();
        let got = f32s(&model.run(&ctx, &[&bytes(&a), &bytes(&b)]).unwrap()[0]);
        let want: Vec<f32> = (0..64).map(|i| a[i] * 2.0 + b[i]).collect();
        common::assert_close(&got, &want, 1e-5, "placeholder");
        // wrong input sizes are an error, not a panic
        let err = model
            .run(&ctx, &[&bytes(&a[..10]), &bytes(&b)])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("40 bytes given"), "{err}");
    }
}
