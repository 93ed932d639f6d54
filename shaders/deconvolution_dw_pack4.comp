// DeconvolutionDepthWise (each output channel its input channel's), direct, pack4 buffer
// blobs in and out: one invocation per output position and block of 4 channels, gathering the
// input positions whose strided kernel footprint covers it (deconvolution.comp's walk). Per
// block and kernel tap, a vec4 of the block's four weights: [c / 4][kernel_h][kernel_w].
#version 450

#include "prelude.comp"

#define IN_PACK 4
#define OUT_PACK 4
#include "convolution_head.comp"
#include "deconvolution_source.comp"

void main()
{
    GLOBAL_XYZ;

    if (gx >= psc(outw) || gy >= psc(outh) || gz >= psc(outc))
        return;

    const int bx = gx + p.pad_left;
    const int by = gy + p.pad_top;
    const int wi = gz * kernel_h * kernel_w;
    const int bi = gz * psc(cstep);

    vec4 sum = bias_term == 1 ? vec4(buffer_ld4(bias_data, gz)) : vec4(0.f);
    for (int ky = 0; ky < kernel_h; ky++)
    {
        const int i = deconvolution_source(by, ky, dilation_h, stride_h, psc(h));
        if (i < 0)
            continue;
        for (int kx = 0; kx < kernel_w; kx++)
        {
            const int j = deconvolution_source(bx, kx, dilation_w, stride_w, psc(w));
            if (j < 0)
                continue;
            const vec4 v = vec4(buffer_ld4(bottom_blob_data, bi + i * psc(w) + j));
            sum += v * vec4(buffer_ld4(weight_data, wi + ky * kernel_w + kx));
        }
    }

    const afpvec4 res = activation_afpvec4(afpvec4(sum), activation_type, activation_param_0, activation_param_1);
    buffer_st4(top_blob_data, gz * psc(outcstep) + gy * psc(outw) + gx, res);
}
