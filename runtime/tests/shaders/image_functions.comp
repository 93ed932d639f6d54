#version 450
// Executes every image function of the extension for one dimensionality (DIM = 1, 2 or 3) once per
// invocation: loads scaled by 2 and stored into the first half of each output, copies into the
// second half (the last axis), so the test can compare every texel with the CPU.
// N = 64 invocations, one workgroup; element extents: 1D 64, 2D 8x8, 3D 4x4x4 (pack8 doubles x).

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif

#define N 64

#define IMAGE_FN_(d, name) image##d##d_##name
#define IMAGE_FN(d, name) IMAGE_FN_(d, name)
#define F(name) IMAGE_FN(DIM, name)

#if DIM == 1
#define SAMPLER sampler1D
#define IMAGE image1D
#define P(i, half) (int(i) + (half) * N)
#elif DIM == 2
#define SAMPLER sampler2D
#define IMAGE image2D
#define P(i, half) ivec2(int(i) % 8, int(i) / 8 + (half) * 8)
#else
#define SAMPLER sampler3D
#define IMAGE image3D
#define P(i, half) ivec3(int(i) % 4, (int(i) / 4) % 4, int(i) / 16 + (half) * 4)
#endif

layout (binding = 0) uniform unfp SAMPLER t1;
layout (binding = 1) uniform unfp SAMPLER t4;
layout (binding = 2) uniform unfp SAMPLER t8;
layout (binding = 3, imfmtc1) writeonly uniform unfp IMAGE o1;
layout (binding = 4, imfmtc4) writeonly uniform unfp IMAGE o4;
layout (binding = 5, imfmtc4) writeonly uniform unfp IMAGE o8;

void main()
{
    const int i = int(gl_GlobalInvocationID.x);

    afp v1 = F(ld1)(t1, P(i, 0));
    F(st1)(o1, P(i, 0), v1 * afp(2));
    F(cp1)(o1, P(i, 1), t1, P(i, 0));

    afpvec4 v4 = F(ld4)(t4, P(i, 0));
    F(st4)(o4, P(i, 0), v4 * afp(2));
    F(cp4)(o4, P(i, 1), t4, P(i, 0));

    afpvec8 v8 = F(ld8)(t8, P(i, 0));
    v8[0] = v8[0] * afp(2);
    v8[1] = v8[1] * afp(2);
    F(st8)(o8, P(i, 0), v8);
    F(cp8)(o8, P(i, 1), t8, P(i, 0));
}
