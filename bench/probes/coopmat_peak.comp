// The cooperative-matrix multiply-add alone: each subgroup holds FA × FB accumulators of
// 16 × 16 (ACC_T) and multiplies the same fragments into them `iters` times, so nothing but
// the multiply-adds and their dependences limit it. examples/coopmat_peak.rs times it.
#version 450
#extension GL_EXT_shader_16bit_storage: require
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#extension GL_KHR_memory_scope_semantics: require
#extension GL_KHR_cooperative_matrix: require
#extension GL_KHR_shader_subgroup_basic: require
#extension GL_EXT_control_flow_attributes: require

// UNROLL: `[[unroll]]` on the fragment loops, or nothing
#ifndef UNROLL
#define UNROLL
#endif

layout (local_size_x = 256) in;

layout (binding = 0) readonly buffer a_blob { float16_t a_data[]; };
layout (binding = 1) writeonly buffer c_blob { float c_data[]; };

layout (push_constant) uniform parameter { int iters; } p;

#define FRAG_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FRAG_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define FRAG_C coopmat<ACC_T, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

void main()
{
    FRAG_A fa[FA];
    FRAG_B fb[FB];
    UNROLL for (int i = 0; i < FA; i++)
        coopMatLoad(fa[i], a_data, i * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    UNROLL for (int j = 0; j < FB; j++)
        coopMatLoad(fb[j], a_data, (FA + j) * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    FRAG_C acc[FA * FB];
    UNROLL for (int i = 0; i < FA * FB; i++)
        acc[i] = FRAG_C(0.0);
    for (int it = 0; it < p.iters; it++)
        UNROLL for (int i = 0; i < FA; i++)
            UNROLL for (int j = 0; j < FB; j++)
                acc[i * FB + j] = coopMatMulAdd(fa[i], fb[j], acc[i * FB + j]);
    const uint sg = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    UNROLL for (int i = 0; i < FA * FB; i++)
    {
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> r = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(acc[i]);
        coopMatStore(r, c_data, (sg * FA * FB + i) * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    }
}
