// Convolution, direct, pack4 buffer blobs in and out, one invocation per output element (four
// output channels), in fp32. kind 1 (dense, or groups of whole blocks of 4): per input block
// of 4 and kernel position, four weight rows, one per output lane. kind 2 (depthwise): per
// kernel position, one weight per lane. (Four outputs along x per invocation ran slower on an
// H200: fewer invocations, more registers.)
#version 450

#include "prelude.comp"

#define IN_PACK 4
#define OUT_PACK 4
#include "convolution_head.comp"
#include "convolution_residual.comp"

#include "convolution_dense4.comp"

// one output element (four output channels) of block oz at (ox, oy)
void dense(int ox, int oy, int oz)
{
    const vec4 sum = dense_sum4(ox, oy, oz);
    const int index = oz * psc(outcstep) + oy * psc(outw) + ox;
    const afpvec4 res = activation_afpvec4(afpvec4(sum + residual_at(index)), activation_type, activation_param_0, activation_param_1);
    buffer_st4(top_blob_data, index, afpvec4(fake_quant4(vec4(res), quant_out)));
}

void main()
{
    GLOBAL_XYZ;

    if (gx >= psc(outw) || gy >= psc(outh) || gz >= psc(outc))
        return;

    if (kind == 1)
    {
        dense(gx, gy, gz);
        return;
    }

    const int x0 = gx * stride_w - p.pad_left;
    const int y0 = gy * stride_h - p.pad_top;
    const vec4 pad = fake_quant4(vec4(p.pad_value), quant_in);

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
                const vec4 v = inside ? fake_quant4(vec4(buffer_ld4(bottom_blob_data, base + y * psc(w) + x)), quant_in) : pad;
                sum += v * vec4(buffer_ld4(weight_data, wi));
            }
        }
    }

    const int index = gz * psc(outcstep) + gy * psc(outw) + gx;
    const afpvec4 res = activation_afpvec4(afpvec4(sum + residual_at(index)), activation_type, activation_param_0, activation_param_1);
    buffer_st4(top_blob_data, index, afpvec4(fake_quant4(vec4(res), quant_out)));
}
