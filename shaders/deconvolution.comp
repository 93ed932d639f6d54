// Deconvolution (transposed convolution), direct, pack1 buffer blobs, any groups: one
// invocation per output value, gathering the inputs whose strided kernel footprint covers it:
// output (x, y) of the bordered result takes input (i, j) through kernel tap (kx, ky) when
// x = j * stride_w + kx * dilation_w and y = i * stride_h + ky * dilation_h. The output
// starts at (pad_left, pad_top) of the bordered result (ncnn cuts its pads after the fact).
// Weights as ncnn stores them: [outc][c / group][kernel_d][kernel_h][kernel_w] (3-D windows
// over 4-D blobs through the head's depth constants, the output starting at pad_front too).
#version 450

#include "prelude.comp"

#define IN_PACK 1
#define OUT_PACK 1
#include "convolution_head.comp"
#include "deconvolution_source.comp"

void main()
{
    GLOBAL_XYZ;

    if (gx >= p.outw || gy >= p.outh || gz >= p.outc)
        return;

    const int cin_g = p.c / group;
    const int g = gz / (p.outc / group);
    // gy runs over the output's rows, its depth slabs' rows one after another
    const int in_h = p.h / depth;
    const int out_h = p.outh / outdepth;
    const int bx = gx + p.pad_left;
    const int by = (outdepth == 1 ? gy : gy % out_h) + p.pad_top;
    const int bz = (outdepth == 1 ? 0 : gy / out_h) + pad_front;

    float sum = bias_term == 1 ? float(buffer_ld1(bias_data, gz)) : 0.f;
    for (int kz = 0; kz < kernel_d; kz++)
    {
        const int s = deconvolution_source(bz, kz, dilation_d, stride_d, depth);
        if (s < 0)
            continue;
        for (int ky = 0; ky < kernel_h; ky++)
        {
            const int i = deconvolution_source(by, ky, dilation_h, stride_h, in_h);
            if (i < 0)
                continue;
            for (int kx = 0; kx < kernel_w; kx++)
            {
                const int j = deconvolution_source(bx, kx, dilation_w, stride_w, p.w);
                if (j < 0)
                    continue;
                const int taps = kernel_d * kernel_h * kernel_w;
                int wi = gz * cin_g * taps + (kz * kernel_h + ky) * kernel_w + kx;
                int bi = g * cin_g * p.cstep + (s * in_h + i) * p.w + j;
                for (int q = 0; q < cin_g; q++)
                {
                    sum += float(buffer_ld1(bottom_blob_data, bi)) * float(buffer_ld1(weight_data, wi));
                    bi += p.cstep;
                    wi += taps;
                }
            }
        }
    }

    const afp res = activation_afp(afp(sum), activation_type, activation_param_0, activation_param_1);
    buffer_st1(top_blob_data, gz * p.outcstep + gy * p.outw + gx, res);
}
