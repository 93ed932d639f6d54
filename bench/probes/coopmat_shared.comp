// The multiply-adds with their fragments loaded from shared memory every step, as a GEMM
// does: ELEM is the shared array's element type, PER_ELEM halves each (uvec4 8, f16vec4 4,
// float16_t 1), rows of 32 halves padded by 16 bytes. examples/coopmat_peak.rs times it.
#version 450
#extension GL_EXT_shader_16bit_storage: require
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#extension GL_KHR_memory_scope_semantics: require
#extension GL_KHR_cooperative_matrix: require
#extension GL_KHR_shader_subgroup_basic: require
#extension GL_EXT_control_flow_attributes: require

layout (local_size_x = 256) in;

layout (binding = 0) readonly buffer a_blob { float16_t a_data[]; };
layout (binding = 1) writeonly buffer c_blob { float c_data[]; };

layout (push_constant) uniform parameter { int iters; } p;

#define FRAG_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FRAG_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define FRAG_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

// a staged row: 32 halves and 8 of padding, in elements
#define LD (40 / PER_ELEM)
shared ELEM tile[128 * LD];

void main()
{
    for (uint i = gl_LocalInvocationID.x; i < 128 * LD; i += 256)
        tile[i] = ELEM(0);
    barrier();
    const int sg = int(gl_SubgroupID);
    FRAG_C acc[FA * FB];
    [[unroll]] for (int i = 0; i < FA * FB; i++)
        acc[i] = FRAG_C(0.0);
    for (int it = 0; it < p.iters; it++)
    {
        [[unroll]] for (int kh = 0; kh < 2; kh++)
        {
            FRAG_A fa[FA];
            FRAG_B fb[FB];
            [[unroll]] for (int i = 0; i < FA; i++)
                coopMatLoad(fa[i], tile, ((sg % 2) * 64 + 16 * i) * LD + kh * 16 / PER_ELEM, LD, gl_CooperativeMatrixLayoutRowMajor);
            [[unroll]] for (int j = 0; j < FB; j++)
                coopMatLoad(fb[j], tile, ((sg / 2) * 32 + 16 * j) * LD + kh * 16 / PER_ELEM, LD, gl_CooperativeMatrixLayoutColumnMajor);
            [[unroll]] for (int i = 0; i < FA; i++)
                [[unroll]] for (int j = 0; j < FB; j++)
                    acc[i * FB + j] = coopMatMulAdd(fa[i], fb[j], acc[i * FB + j]);
        }
    }
    const uint g = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    [[unroll]] for (int i = 0; i < FA * FB; i++)
        coopMatStore(acc[i], c_data, (g * FA * FB + i) * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}
