// Convolution, direct, pack4 buffer blobs in and out, one invocation per output element (four
// output channels), in fp32. kind 1 (dense, or groups of whole blocks of 4): per input block
// of 4 and kernel position, four weight rows, one per output lane. kind 2 (depthwise): per
// kernel position, one weight per lane. (Four outputs along x per invocation ran slower on an
// H200: fewer invocations, more registers.)
#version 450

#include "fp16_extensions.comp"

#include "convolution_head.comp"

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
layout (binding = 2) readonly buffer weight_blob { sfpvec4 weight_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfpvec4 bias_data[]; };

// one output element (four output channels) of block oz at (ox, oy): per input block of its
// group and kernel position, four weight rows
void dense(int ox, int oy, int oz)
{
    vec4 sum = bias_term == 1 ? vec4(buffer_ld4(bias_data, oz)) : vec4(0.f);
    const int x0 = ox * stride_w - p.pad_left;
    const int y0 = oy * stride_h - p.pad_top;
    // the output block's group: its input blocks, and its weights over them
    const int cin4_g = psc(c) / group;
    const int g = oz / (psc(outc) / group);
    int wi = oz * cin4_g * kernel_h * kernel_w * 4;
    for (int ci = g * cin4_g; ci < (g + 1) * cin4_g; ci++)
    {
        const int base = ci * psc(cstep);
        for (int ky = 0; ky < kernel_h; ky++)
        {
            const int y = y0 + ky * dilation_h;
            for (int kx = 0; kx < kernel_w; kx++, wi += 4)
            {
                const int x = x0 + kx * dilation_w;
                const bool inside = x >= 0 && x < psc(w) && y >= 0 && y < psc(h);
                const vec4 v = inside ? vec4(buffer_ld4(bottom_blob_data, base + y * psc(w) + x)) : vec4(p.pad_value);
                sum.x += dot(v, vec4(buffer_ld4(weight_data, wi)));
                sum.y += dot(v, vec4(buffer_ld4(weight_data, wi + 1)));
                sum.z += dot(v, vec4(buffer_ld4(weight_data, wi + 2)));
                sum.w += dot(v, vec4(buffer_ld4(weight_data, wi + 3)));
            }
        }
    }
    const afpvec4 res = activation_afpvec4(afpvec4(sum), activation_type, activation_param_0, activation_param_1);
    buffer_st4(top_blob_data, oz * psc(outcstep) + oy * psc(outw) + ox, res);
}

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int gz = int(gl_GlobalInvocationID.z);

    if (gx >= psc(outw) || gy >= psc(outh) || gz >= psc(outc))
        return;

    if (kind == 1)
    {
        dense(gx, gy, gz);
        return;
    }

    const int x0 = gx * stride_w - p.pad_left;
    const int y0 = gy * stride_h - p.pad_top;
    const vec4 pad = vec4(p.pad_value);

    // depthwise
    vec4 sum = bias_term == 1 ? vec4(buffer_ld4(bias_data, gz)) : vec4(0.f);
    {
        const int base = gz * psc(cstep);
        int wi = gz * kernel_h * kernel_w;
        for (int ky = 0; ky < kernel_h; ky++)
        {
            const int y = y0 + ky * dilation_h;
            for (int kx = 0; kx < kernel_w; kx++, wi++)
            {
                const int x = x0 + kx * dilation_w;
                const bool inside = x >= 0 && x < psc(w) && y >= 0 && y < psc(h);
                const vec4 v = inside ? vec4(buffer_ld4(bottom_blob_data, base + y * psc(w) + x)) : pad;
                sum += v * vec4(buffer_ld4(weight_data, wi));
            }
        }
    }

    const afpvec4 res = activation_afpvec4(afpvec4(sum), activation_type, activation_param_0, activation_param_1);
    buffer_st4(top_blob_data, gz * psc(outcstep) + gy * psc(outw) + gx, res);
}
