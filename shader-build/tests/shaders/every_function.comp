#version 450
// Uses every type and function of the ncnn GLSL extension reference, so that each compiles in every
// option class. Both buffers and images are declared whatever NCNN_image_shader says.

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif

layout (constant_id = 0) const int n = 0;

layout (binding = 0) buffer b1 { sfp b1_data[]; };
layout (binding = 1) buffer b2 { sfpvec2 b2_data[]; };
layout (binding = 2) buffer b4 { sfpvec4 b4_data[]; };
layout (binding = 3) buffer b8 { sfpvec8 b8_data[]; };
layout (binding = 4) buffer bm { sfpmat4 bm_data[]; };

layout (binding = 5) uniform unfp sampler1D s1;
layout (binding = 6) uniform unfp sampler2D s2;
layout (binding = 7) uniform unfp sampler3D s3;
layout (binding = 8, imfmtc1) writeonly uniform unfp image1D i1c1;
layout (binding = 9, imfmtc4) writeonly uniform unfp image1D i1;
layout (binding = 10, imfmt4) writeonly uniform unfp image2D i2;
layout (binding = 11, imfmtc4) writeonly uniform unfp image3D i3;
layout (binding = 12, imfmt1) writeonly uniform unfp image2D i2c1;

layout (push_constant) uniform parameter
{
    int n;
} p;

shared lfp tmp_1[16];
shared lfpvec4 tmp_4[16];

void main()
{
    const int i = int(gl_GlobalInvocationID.x);
    const int count = psc(n);
    if (i >= count)
        return;

#if NCNN_moltenvk
    const int j = i + 1;
#else
    const int j = i + 2;
#endif

    // buffer loads and stores
    afp a1 = buffer_ld1(b1_data, i);
    afpvec2 a2 = buffer_ld2(b2_data, i);
    afpvec4 a4 = buffer_ld4(b4_data, i);
    afpvec8 a8 = buffer_ld8(b8_data, i);
    buffer_st1(b1_data, j, a1 * afp(2.f));
    buffer_st2(b2_data, j, a2 + afpvec2(1.f));
    buffer_st4(b4_data, j, a4 * a1);
    buffer_st8(b8_data, j, a8);

    // copies
    buffer_cp1(b1_data, j + 1, b1_data, i);
    buffer_cp2(b2_data, j + 1, b2_data, i);
    buffer_cp4(b4_data, j + 1, b4_data, i);
    buffer_cp8(b8_data, j + 1, b8_data, i);
    buffer_cp1to4(b4_data, j + 2, b1_data, ivec4(i, i + 1, i + 2, i + 3));
    buffer_cp1to8(b8_data, j + 2, b1_data, ivec4(i, i + 1, i + 2, i + 3), ivec4(i + 4, i + 5, i + 6, i + 7));
    buffer_cp4to8(b8_data, j + 3, b4_data, ivec2(i, i + 1));
    buffer_cp4to1(b1_data, ivec4(j, j + 1, j + 2, j + 3), b4_data, i);
    buffer_cp8to1(b1_data, ivec4(j, j + 1, j + 2, j + 3), ivec4(j + 4, j + 5, j + 6, j + 7), b8_data, i);
    buffer_cp8to4(b4_data, ivec2(j, j + 1), b8_data, i);

    // storage matrices
    afpmat4 m = sfp2afpmat4(bm_data[i]);
    m = m * afp(0.5f);
    bm_data[j] = afp2sfpmat4(m);

    // images, 1d / 2d / 3d
    afp t1 = image1d_ld1(s1, i) + image2d_ld1(s2, ivec2(i, 0)) + image3d_ld1(s3, ivec3(i, 0, 0));
    afpvec4 t4 = image1d_ld4(s1, i) + image2d_ld4(s2, ivec2(i, 0)) + image3d_ld4(s3, ivec3(i, 0, 0));
    afpvec8 t8 = image1d_ld8(s1, i);
    t8[0] += image2d_ld8(s2, ivec2(i, 0))[0];
    t8[1] += image3d_ld8(s3, ivec3(i, 0, 0))[1];
    image1d_st1(i1c1, i, t1);
    image2d_st1(i2c1, ivec2(i, 0), t1);
    image3d_st1(i3, ivec3(i, 0, 0), t1);
    image1d_st4(i1, i, t4);
    image2d_st4(i2, ivec2(i, 0), t4);
    image3d_st4(i3, ivec3(i, 1, 0), t4);
    image1d_st8(i1, i + 8, t8);
    image2d_st8(i2, ivec2(i, 1), t8);
    image3d_st8(i3, ivec3(i, 2, 0), t8);
    image1d_cp1(i1c1, j, s1, i);
    image2d_cp1(i2c1, ivec2(j, 0), s2, ivec2(i, 0));
    image3d_cp1(i3, ivec3(j, 0, 0), s3, ivec3(i, 0, 0));
    image1d_cp4(i1, j, s1, i);
    image2d_cp4(i2, ivec2(j, 0), s2, ivec2(i, 0));
    image3d_cp4(i3, ivec3(j, 0, 0), s3, ivec3(i, 0, 0));
    image1d_cp8(i1, j, s1, i);
    image2d_cp8(i2, ivec2(j, 0), s2, ivec2(i, 0));
    image3d_cp8(i3, ivec3(j, 0, 0), s3, ivec3(i, 0, 0));

    // local memory
    const int l = int(gl_LocalInvocationID.x) % 16;
    tmp_1[l] = sfp2lfp(b1_data[i]);
    tmp_4[l] = sfp2lfpvec4(b4_data[i]);
    barrier();
    afp la1 = lfp2afp(tmp_1[15 - l]);
    afpvec4 la4 = lfp2afpvec4(tmp_4[15 - l]);
    buffer_st1(b1_data, i, la1);
    buffer_st4(b4_data, i, la4);
}
