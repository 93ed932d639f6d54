// Convolution, direct, a pack4 buffer blob in and a pack1 one out (output channels not a multiple
// of 4, as an upscaler's RGB output), dense (one group): one invocation per PX output positions
// along x and block of 4 output channels (the last block's lanes past the channels have zero
// weights and bias and are not written), so that each input vec4 serves four outputs and each
// weight load PX positions. Weights as convolution_pack4.comp's dense ones over the channels
// rounded up to blocks of 4: per input block and kernel position, four rows (one per output
// lane) of four input weights. (Staging the weights in shared memory as fp32 took an upscaler's
// 64 → 3 layer at 1024² from 385 to 659 us on an H200; four positions per invocation, to 284.)
// Dispatch: global [ceil(outw / PX), outh, output blocks].
#version 450

#include "prelude.comp"

#define IN_PACK 4
#define OUT_PACK 1
#include "convolution_head.comp"

// output positions per invocation, along x: each weight load serves all of them
#define PX 4

void main()
{
    const int gx = int(gl_GlobalInvocationID.x) * PX;
    const int gy = int(gl_GlobalInvocationID.y);
    const int oz = int(gl_GlobalInvocationID.z);
    // the output's channels (a pack1 blob's c)
    const int outch = psc(outc);

    if (gx >= psc(outw) || gy >= psc(outh) || oz * 4 >= outch)
        return;

    const vec4 bias = bias_term == 1 ? vec4(buffer_ld4(bias_data, oz)) : vec4(0.f);
    vec4 sum[PX];
    for (int q = 0; q < PX; q++)
        sum[q] = bias;
    const int y0 = gy * stride_h - p.pad_top;
    int wi = oz * psc(c) * kernel_h * kernel_w * 4;
    for (int ci = 0; ci < psc(c); ci++)
    {
        const int base = ci * psc(cstep);
        for (int ky = 0; ky < kernel_h; ky++)
        {
            const int y = y0 + ky * dilation_h;
            const bool row_in = y >= 0 && y < psc(h);
            for (int kx = 0; kx < kernel_w; kx++, wi += 4)
            {
                const vec4 w0 = vec4(buffer_ld4(weight_data, wi));
                const vec4 w1 = vec4(buffer_ld4(weight_data, wi + 1));
                const vec4 w2 = vec4(buffer_ld4(weight_data, wi + 2));
                const vec4 w3 = vec4(buffer_ld4(weight_data, wi + 3));
                for (int q = 0; q < PX; q++)
                {
                    const int x = (gx + q) * stride_w - p.pad_left + kx * dilation_w;
                    const bool inside = row_in && x >= 0 && x < psc(w);
                    const vec4 v = fake_quant4(inside ? vec4(buffer_ld4(bottom_blob_data, base + y * psc(w) + x)) : vec4(p.pad_value), quant_in);
                    sum[q] += vec4(dot(v, w0), dot(v, w1), dot(v, w2), dot(v, w3));
                }
            }
        }
    }

    for (int q = 0; q < PX; q++)
    {
        if (gx + q >= psc(outw))
            break;
        const afpvec4 res = afpvec4(fake_quant4(vec4(activation_afpvec4(afpvec4(sum[q]), activation_type, activation_param_0, activation_param_1)), quant_out));
        const int at = gy * psc(outw) + gx + q;
        for (int l = 0; l < 4; l++)
        {
            if (oz * 4 + l < outch)
                buffer_st1(top_blob_data, (oz * 4 + l) * psc(outcstep) + at, res[l]);
        }
    }
}
