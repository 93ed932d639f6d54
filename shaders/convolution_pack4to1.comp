// Convolution, direct, a pack4 buffer blob in and a pack1 one out (output channels not a multiple
// of 4, as an upscaler's RGB output), dense (one group): one invocation per output position and
// block of 4 output channels (the last block's lanes past the channels have zero weights and
// bias and are not written), so that each input vec4 serves four outputs. Weights as
// convolution_pack4.comp's dense ones over the channels rounded up to blocks of 4: per input
// block and kernel position, four rows (one per output lane) of four input weights.
// A workgroup (64 positions of one row, one output block) stages its block's weights in shared
// memory as fp32, up to 16 KiB at a time: read from the buffer, every invocation converted
// every fp16 weight itself, and an upscaler's last layer (64 to 3 channels at 1024²) took 385 us
// on an H200.
#version 450

#include "prelude.comp"

#define IN_PACK 4
#define OUT_PACK 1
#include "convolution_head.comp"

layout (local_size_x = 64) in;

// kernel positions, and the input blocks whose weights one stage holds (1024 vec4 at most,
// or one block's where that is more)
const int TAPS = kernel_w * kernel_h;
const int CHUNK = TAPS >= 256 ? 1 : 256 / TAPS;
shared vec4 staged[CHUNK * TAPS * 4];

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int oz = int(gl_GlobalInvocationID.z);
    const int tid = int(gl_LocalInvocationID.x);
    // the output's channels (a pack1 blob's c); every invocation takes part in the staging
    const int outch = psc(outc);
    const bool live = gx < psc(outw) && gy < psc(outh) && oz * 4 < outch;

    vec4 sum = bias_term == 1 && live ? vec4(buffer_ld4(bias_data, oz)) : vec4(0.f);
    const int x0 = gx * stride_w - p.pad_left;
    const int y0 = gy * stride_h - p.pad_top;
    const int cin4 = psc(c);
    const int w0 = oz * cin4 * TAPS * 4;
    for (int c0 = 0; c0 < cin4; c0 += CHUNK)
    {
        const int blocks = min(CHUNK, cin4 - c0);
        barrier();
        for (int i = tid; i < blocks * TAPS * 4; i += 64)
            staged[i] = oz * 4 < outch ? vec4(buffer_ld4(weight_data, w0 + c0 * TAPS * 4 + i)) : vec4(0.f);
        barrier();
        if (!live)
            continue;
        for (int b = 0; b < blocks; b++)
        {
            const int base = (c0 + b) * psc(cstep);
            for (int ky = 0; ky < kernel_h; ky++)
            {
                const int y = y0 + ky * dilation_h;
                for (int kx = 0; kx < kernel_w; kx++)
                {
                    const int x = x0 + kx * dilation_w;
                    const bool inside = x >= 0 && x < psc(w) && y >= 0 && y < psc(h);
                    const vec4 v = fake_quant4(inside ? vec4(buffer_ld4(bottom_blob_data, base + y * psc(w) + x)) : vec4(p.pad_value), quant_in);
                    const int wi = ((b * kernel_h + ky) * kernel_w + kx) * 4;
                    sum += vec4(dot(v, staged[wi]), dot(v, staged[wi + 1]), dot(v, staged[wi + 2]), dot(v, staged[wi + 3]));
                }
            }
        }
    }
    if (!live)
        return;

    const afpvec4 res = afpvec4(fake_quant4(vec4(activation_afpvec4(afpvec4(sum), activation_type, activation_param_0, activation_param_1)), quant_out));
    const int at = gy * psc(outw) + gx;
    for (int l = 0; l < 4; l++)
    {
        if (oz * 4 + l < outch)
            buffer_st1(top_blob_data, (oz * 4 + l) * psc(outcstep) + at, res[l]);
    }
}
