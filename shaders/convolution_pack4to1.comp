// Convolution, direct, a pack4 buffer blob in and a pack1 one out (output channels not a multiple
// of 4, as an upscaler's RGB output), dense (one group): one invocation per output position and
// block of 4 output channels (the last block's lanes past the channels have zero weights and
// bias and are not written), so that each input vec4 serves four outputs. Weights as
// convolution_pack4.comp's dense ones over the channels rounded up to blocks of 4: per input
// block and kernel position, four rows (one per output lane) of four input weights.
#version 450

#include "fp16_extensions.comp"

#include "convolution_head.comp"

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
layout (binding = 2) readonly buffer weight_blob { sfpvec4 weight_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfpvec4 bias_data[]; };

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int oz = int(gl_GlobalInvocationID.z);
    // the output's channels (a pack1 blob's c)
    const int outch = psc(outc);

    if (gx >= psc(outw) || gy >= psc(outh) || oz * 4 >= outch)
        return;

    vec4 sum = bias_term == 1 ? vec4(buffer_ld4(bias_data, oz)) : vec4(0.f);
    const int x0 = gx * stride_w - p.pad_left;
    const int y0 = gy * stride_h - p.pad_top;
    int wi = oz * psc(c) * kernel_h * kernel_w * 4;
    for (int ci = 0; ci < psc(c); ci++)
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
    const int at = gy * psc(outw) + gx;
    for (int l = 0; l < 4; l++)
    {
        if (oz * 4 + l < outch)
            buffer_st1(top_blob_data, (oz * 4 + l) * psc(outcstep) + at, res[l]);
    }
}
