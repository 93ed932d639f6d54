#version 450
// Executes every buffer, local-memory and matrix function of the extension once per invocation,
// writing each result to its own region so the test can compare all of them with the CPU.
// N = 64 invocations, one workgroup.

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif

#define N 64

layout (binding = 0) readonly buffer in1 { sfp s1[]; };        // 8N
layout (binding = 1) readonly buffer in2 { sfpvec2 s2[]; };    // N
layout (binding = 2) readonly buffer in4 { sfpvec4 s4[]; };    // 2N
layout (binding = 3) readonly buffer in8 { sfpvec8 s8[]; };    // N
layout (binding = 4) readonly buffer inm { sfpmat4 sm[]; };    // N
layout (binding = 5) writeonly buffer out1 { sfp o1[]; };      // 15N
layout (binding = 6) writeonly buffer out2 { sfpvec2 o2[]; };  // 2N
layout (binding = 7) writeonly buffer out4 { sfpvec4 o4[]; };  // 6N
layout (binding = 8) writeonly buffer out8 { sfpvec8 o8[]; };  // 4N
layout (binding = 9) writeonly buffer outm { sfpmat4 om[]; };  // N

shared lfp tmp1[N];
shared lfpvec4 tmp4[N];

void main()
{
    const int i = int(gl_GlobalInvocationID.x);
    const int l = int(gl_LocalInvocationID.x);

    // loads and stores
    buffer_st1(o1, i, buffer_ld1(s1, i) * afp(2));
    buffer_st2(o2, i, buffer_ld2(s2, i) * afp(2));
    buffer_st4(o4, i, buffer_ld4(s4, i) * afp(2));
    afpvec8 v8 = buffer_ld8(s8, i);
    v8[0] = v8[0] * afp(2);
    v8[1] = v8[1] * afp(2);
    buffer_st8(o8, i, v8);

    // same-type copies
    buffer_cp1(o1, N + i, s1, i);
    buffer_cp2(o2, N + i, s2, i);
    buffer_cp4(o4, N + i, s4, i);
    buffer_cp8(o8, N + i, s8, i);

    // packing copies
    buffer_cp1to4(o4, 2 * N + i, s1, ivec4(4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3));
    buffer_cp1to8(o8, 2 * N + i, s1, ivec4(8 * i, 8 * i + 1, 8 * i + 2, 8 * i + 3), ivec4(8 * i + 4, 8 * i + 5, 8 * i + 6, 8 * i + 7));
    buffer_cp4to8(o8, 3 * N + i, s4, ivec2(2 * i, 2 * i + 1));

    // unpacking copies
    buffer_cp4to1(o1, 2 * N + 4 * i + ivec4(0, 1, 2, 3), s4, i);
    buffer_cp8to1(o1, 6 * N + 8 * i + ivec4(0, 1, 2, 3), 6 * N + 8 * i + ivec4(4, 5, 6, 7), s8, i);
    buffer_cp8to4(o4, 3 * N + 2 * i + ivec2(0, 1), s8, i);

    // local memory, read back from another invocation
    tmp1[l] = sfp2lfp(s1[i]);
    tmp4[l] = sfp2lfpvec4(s4[i]);
    barrier();
    buffer_st1(o1, 14 * N + i, lfp2afp(tmp1[N - 1 - l]));
    buffer_st4(o4, 5 * N + i, lfp2afpvec4(tmp4[N - 1 - l]));

    // storage matrices
    afpmat4 m = sfp2afpmat4(sm[i]);
    om[i] = afp2sfpmat4(m * afp(2));
}
