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
