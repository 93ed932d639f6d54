//! Misuse of the API as typed errors.

use super::*;

pub(crate) static NEEDS_INT8: &ShaderModule = shader!(
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

/// Asking for VK_NV_cooperative_matrix2 (`workgroup_matrices`) where the adapter lacks it
/// (lavapipe in CI) opens the device as wgpu alone would, and it runs; asking for none never
/// takes it, wherever it is offered.
#[test]
fn workgroup_matrices_are_taken_only_where_offered() {
    if std::env::var_os("FPSHADER_SKIP_GPU").is_some() {
        return;
    }
    for want in [true, false] {
        let ctx = Context::new(ContextOptions {
            backends: Some(wgpu::Backends::VULKAN),
            path: Some(ShaderPath::Passthrough),
            allow_cpu_adapter: true,
            workgroup_matrices: Some(want),
            ..Default::default()
        })
        .unwrap();
        let what = ctx.describe();
        assert!(want || !ctx.workgroup_matrices(), "{what}");
        assert!(
            !ctx.workgroup_matrices() || ctx.cooperative_matrix(),
            "{what}"
        );
        if ctx.adapter_info.device_type == wgpu::DeviceType::Cpu {
            assert!(!ctx.workgroup_matrices(), "{what}");
        }
        assert_eq!(
            what.contains("workgroup cooperative matrices"),
            ctx.workgroup_matrices()
        );
        // the device runs
        let spec = Specialization::default();
        let pipeline = ctx.pipeline(RELU, OptionSet::FP32, &spec).unwrap();
        let (a, b) = (
            ctx.storage_buffer(64).unwrap(),
            ctx.storage_buffer(64).unwrap(),
        );
        let mut rec = ctx.recorder();
        rec.dispatch(&pipeline, &[&a, &b], &[16, 1, 1, 1], [16, 1, 1])
            .unwrap();
        rec.submit_and_wait().unwrap();
    }
}
