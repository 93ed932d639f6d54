// Convolution, direct, pack1 buffer blobs, any groups (dense, grouped, depthwise): one
// invocation per output value, summing its group's input channels over the window in fp32.
// Weights as ncnn stores them: [outc][c / group][kernel_d][kernel_h][kernel_w] (3-D windows
// over 4-D blobs through the head's depth constants).
#version 450

#include "prelude.comp"

#define IN_PACK 1
#define OUT_PACK 1
#include "convolution_head.comp"

void main()
{
    GLOBAL_XYZ;

    if (gx >= psc(outw) || gy >= psc(outh) || gz >= psc(outc))
        return;

    const int cin_g = psc(c) / group;
    const int g = gz / (psc(outc) / group);
    // gy runs over the output's rows, its depth slabs' rows one after another
    const ivec3 o = window_origin(gy * psc(outw) + gx);

    float sum = bias_term == 1 ? float(buffer_ld1(bias_data, gz)) : 0.f;
    int wi = gz * cin_g * kernel_d * kernel_h * kernel_w;
    for (int ci = 0; ci < cin_g; ci++)
    {
        const int base = (g * cin_g + ci) * psc(cstep);
        for (int kz = 0; kz < kernel_d; kz++)
        {
            const int z = o.z + kz * dilation_d;
            for (int ky = 0; ky < kernel_h; ky++)
            {
                const int y = o.y + ky * dilation_h;
                for (int kx = 0; kx < kernel_w; kx++, wi++)
                {
                    const int x = o.x + kx * dilation_w;
                    const bool inside = x >= 0 && x < psc(w) && y >= 0 && y < slab_h() && z >= 0 && z < depth;
                    const float v = fake_quant1(inside ? float(buffer_ld1(bottom_blob_data, base + (z * slab_h() + y) * psc(w) + x)) : p.pad_value, quant_in);
                    sum += v * float(buffer_ld1(weight_data, wi));
                }
            }
        }
    }

    const afp res = activation_afp(afp(sum), activation_type, activation_param_0, activation_param_1);
    buffer_st1(top_blob_data, gz * psc(outcstep) + gy * psc(outw) + gx, afp(fake_quant1(float(res), quant_out)));
}
