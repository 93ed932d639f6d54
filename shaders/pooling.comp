// 2D pooling on a pack4 blob: max or average over kernel_w x kernel_h windows with stride and
// leading padding; padded positions are skipped (the average divides by the count of real ones).
// pooling_type: 0 max, 1 average.
#version 450

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif

layout (constant_id = 0) const int pooling_type = 0;
layout (constant_id = 1) const int kernel_w = 1;
layout (constant_id = 2) const int kernel_h = 1;
layout (constant_id = 3) const int stride_w = 1;
layout (constant_id = 4) const int stride_h = 1;
layout (constant_id = 5) const int pad_left = 0;
layout (constant_id = 6) const int pad_top = 0;

#define shape_constant_id_offset 7
layout (constant_id = shape_constant_id_offset + 0) const int w = 0;
layout (constant_id = shape_constant_id_offset + 1) const int h = 0;
layout (constant_id = shape_constant_id_offset + 2) const int c = 0;
layout (constant_id = shape_constant_id_offset + 3) const int cstep = 0;
layout (constant_id = shape_constant_id_offset + 4) const int outw = 0;
layout (constant_id = shape_constant_id_offset + 5) const int outh = 0;
layout (constant_id = shape_constant_id_offset + 6) const int outc = 0;
layout (constant_id = shape_constant_id_offset + 7) const int outcstep = 0;

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler3D bottom_blob;
layout (binding = 1, imfmtc4) writeonly uniform unfp image3D top_blob;
#else
layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
#endif

layout (push_constant) uniform parameter
{
    int w;
    int h;
    int c;
    int cstep;
    int outw;
    int outh;
    int outc;
    int outcstep;
} p;

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int gz = int(gl_GlobalInvocationID.z);

    if (gx >= psc(outw) || gy >= psc(outh) || gz >= psc(outc))
        return;

    // fp16 cannot hold fp32's lowest value; the first real element seeds the maximum instead
    afpvec4 res = afpvec4(0.f);
    bool seeded = false;
    int count = 0;

    const int sx0 = gx * stride_w - pad_left;
    const int sy0 = gy * stride_h - pad_top;

    for (int y = 0; y < kernel_h; y++)
    {
        const int sy = sy0 + y;
        if (sy < 0 || sy >= psc(h))
            continue;

        for (int x = 0; x < kernel_w; x++)
        {
            const int sx = sx0 + x;
            if (sx < 0 || sx >= psc(w))
                continue;

#if NCNN_image_shader
            afpvec4 v = image3d_ld4(bottom_blob, ivec3(sx, sy, gz));
#else
            afpvec4 v = buffer_ld4(bottom_blob_data, gz * psc(cstep) + sy * psc(w) + sx);
#endif
            if (pooling_type == 0)
                res = seeded ? max(res, v) : v;
            else
                res += v;
            seeded = true;
            count++;
        }
    }

    if (pooling_type == 1 && count > 0)
        res /= afp(count);

#if NCNN_image_shader
    image3d_st4(top_blob, ivec3(gx, gy, gz), res);
#else
    buffer_st4(top_blob_data, gz * psc(outcstep) + gy * psc(outw) + gx, res);
#endif
}
