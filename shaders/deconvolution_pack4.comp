// Deconvolution (transposed convolution), direct, pack4 buffer blobs in and out, dense (one
// group): one invocation per output element (four output channels), gathering the inputs
// whose strided kernel footprint covers it, as deconvolution.comp does for pack1. Per input
// block of 4 and kernel tap, four weight rows, one per output lane: [outc / 4][c / 4][kernel_h]
// [kernel_w][4 rows] of vec4 over the input lanes.
#version 450

#include "fp16_extensions.comp"

#include "convolution_head.comp"

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
layout (binding = 2) readonly buffer weight_blob { sfpvec4 weight_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfpvec4 bias_data[]; };

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int gz = int(gl_GlobalInvocationID.z);

    if (gx >= psc(outw) || gy >= psc(outh) || gz >= psc(outc))
        return;

    const int bx = gx + p.pad_left;
    const int by = gy + p.pad_top;
    const int taps = kernel_h * kernel_w;

    vec4 sum = bias_term == 1 ? vec4(buffer_ld4(bias_data, gz)) : vec4(0.f);
    for (int ky = 0; ky < kernel_h; ky++)
    {
        const int ty = by - ky * dilation_h;
        if (ty < 0 || ty % stride_h != 0)
            continue;
        const int i = ty / stride_h;
        if (i >= psc(h))
            continue;
        for (int kx = 0; kx < kernel_w; kx++)
        {
            const int tx = bx - kx * dilation_w;
            if (tx < 0 || tx % stride_w != 0)
                continue;
            const int j = tx / stride_w;
            if (j >= psc(w))
                continue;
            int wi = (gz * psc(c) * taps + ky * kernel_w + kx) * 4;
            int bi = i * psc(w) + j;
            for (int q = 0; q < psc(c); q++)
            {
                const vec4 v = vec4(buffer_ld4(bottom_blob_data, bi));
                sum.x += dot(v, vec4(buffer_ld4(weight_data, wi)));
                sum.y += dot(v, vec4(buffer_ld4(weight_data, wi + 1)));
                sum.z += dot(v, vec4(buffer_ld4(weight_data, wi + 2)));
                sum.w += dot(v, vec4(buffer_ld4(weight_data, wi + 3)));
                bi += psc(cstep);
                wi += taps * 4;
            }
        }
    }

    const afpvec4 res = activation_afpvec4(afpvec4(sum), activation_type, activation_param_0, activation_param_1);
    buffer_st4(top_blob_data, gz * psc(outcstep) + gy * psc(outw) + gx, res);
}
