// Convolution, direct, pack4 buffer blobs in and out, in fp32. kind 1 (dense, or groups of
// whole blocks of 4): one
// invocation per four outputs along x (four output channels each), so that each weight load
// serves four positions and four sums run independently; per input block of 4 and kernel
// position, four weight rows, one per output lane. kind 2 (depthwise): one invocation per
// output element; per kernel position, one weight per lane.
#version 450

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif

#include "convolution_head.comp"

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
layout (binding = 2) readonly buffer weight_blob { sfpvec4 weight_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfpvec4 bias_data[]; };

vec4 load_or_pad(int base, int x, int y)
{
    const bool inside = x >= 0 && x < p.w && y >= 0 && y < p.h;
    return inside ? vec4(buffer_ld4(bottom_blob_data, base + y * p.w + x)) : vec4(p.pad_value);
}

// four outputs at (ox0 .. ox0 + 3, oy) of output block oz
void dense4(int ox0, int oy, int oz)
{
    const vec4 b = bias_term == 1 ? vec4(buffer_ld4(bias_data, oz)) : vec4(0.f);
    vec4 s0 = b;
    vec4 s1 = b;
    vec4 s2 = b;
    vec4 s3 = b;
    const int x0 = ox0 * stride_w - p.pad_left;
    const int y0 = oy * stride_h - p.pad_top;
    const int step = stride_w;
    // the output block's group: its input blocks, and its weights over them
    const int cin4_g = p.c / group;
    const int g = oz / (p.outc / group);
    int wi = oz * cin4_g * kernel_h * kernel_w * 4;
    for (int ci = g * cin4_g; ci < (g + 1) * cin4_g; ci++)
    {
        const int base = ci * p.cstep;
        for (int ky = 0; ky < kernel_h; ky++)
        {
            const int y = y0 + ky * dilation_h;
            for (int kx = 0; kx < kernel_w; kx++, wi += 4)
            {
                const int x = x0 + kx * dilation_w;
                const vec4 w0 = vec4(buffer_ld4(weight_data, wi));
                const vec4 w1 = vec4(buffer_ld4(weight_data, wi + 1));
                const vec4 w2 = vec4(buffer_ld4(weight_data, wi + 2));
                const vec4 w3 = vec4(buffer_ld4(weight_data, wi + 3));
                const vec4 v0 = load_or_pad(base, x, y);
                const vec4 v1 = load_or_pad(base, x + step, y);
                const vec4 v2 = load_or_pad(base, x + 2 * step, y);
                const vec4 v3 = load_or_pad(base, x + 3 * step, y);
                s0 += vec4(dot(v0, w0), dot(v0, w1), dot(v0, w2), dot(v0, w3));
                s1 += vec4(dot(v1, w0), dot(v1, w1), dot(v1, w2), dot(v1, w3));
                s2 += vec4(dot(v2, w0), dot(v2, w1), dot(v2, w2), dot(v2, w3));
                s3 += vec4(dot(v3, w0), dot(v3, w1), dot(v3, w2), dot(v3, w3));
            }
        }
    }
    const int row = oz * p.outcstep + oy * p.outw;
    buffer_st4(top_blob_data, row + ox0, activation_afpvec4(afpvec4(s0), activation_type, activation_param_0, activation_param_1));
    if (ox0 + 1 < p.outw)
        buffer_st4(top_blob_data, row + ox0 + 1, activation_afpvec4(afpvec4(s1), activation_type, activation_param_0, activation_param_1));
    if (ox0 + 2 < p.outw)
        buffer_st4(top_blob_data, row + ox0 + 2, activation_afpvec4(afpvec4(s2), activation_type, activation_param_0, activation_param_1));
    if (ox0 + 3 < p.outw)
        buffer_st4(top_blob_data, row + ox0 + 3, activation_afpvec4(afpvec4(s3), activation_type, activation_param_0, activation_param_1));
}

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int gz = int(gl_GlobalInvocationID.z);

    if (kind == 1)
    {
        if (gx * 4 >= p.outw || gy >= p.outh || gz >= p.outc)
            return;
        dense4(gx * 4, gy, gz);
        return;
    }

    if (gx >= p.outw || gy >= p.outh || gz >= p.outc)
        return;

    const int x0 = gx * stride_w - p.pad_left;
    const int y0 = gy * stride_h - p.pad_top;
    const vec4 pad = vec4(p.pad_value);

    // depthwise
    vec4 sum = bias_term == 1 ? vec4(buffer_ld4(bias_data, gz)) : vec4(0.f);
    {
        const int base = gz * p.cstep;
        int wi = gz * kernel_h * kernel_w;
        for (int ky = 0; ky < kernel_h; ky++)
        {
            const int y = y0 + ky * dilation_h;
            for (int kx = 0; kx < kernel_w; kx++, wi++)
            {
                const int x = x0 + kx * dilation_w;
                const bool inside = x >= 0 && x < p.w && y >= 0 && y < p.h;
                const vec4 v = inside ? vec4(buffer_ld4(bottom_blob_data, base + y * p.w + x)) : pad;
                sum += v * vec4(buffer_ld4(weight_data, wi));
            }
        }
    }

    const afpvec4 res = activation_afpvec4(afpvec4(sum), activation_type, activation_param_0, activation_param_1);
    buffer_st4(top_blob_data, gz * p.outcstep + gy * p.outw + gx, res);
}
