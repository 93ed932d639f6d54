// Convolution, direct, a pack4 buffer blob in and a pack1 one out (output channels not a multiple
// of 4, as an upscaler's RGB output), dense (one group): one invocation per output position and
// block of 4 output channels (the last block's lanes past the channels have zero weights and
// bias and are not written), so that each input vec4 serves four outputs. Weights as
// convolution_pack4.comp's dense ones over the channels rounded up to blocks of 4: per input
// block and kernel position, four rows (one per output lane) of four input weights.
#version 450

#include "prelude.comp"

#define IN_PACK 4
#define OUT_PACK 1
#include "convolution_head.comp"

#include "convolution_dense4.comp"

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int oz = int(gl_GlobalInvocationID.z);
    // the output's channels (a pack1 blob's c)
    const int outch = psc(outc);

    if (gx >= psc(outw) || gy >= psc(outh) || oz * 4 >= outch)
        return;

    const vec4 sum = dense_sum4(gx, gy, oz);
    const afpvec4 res = afpvec4(fake_quant4(vec4(activation_afpvec4(afpvec4(sum), activation_type, activation_param_0, activation_param_1)), quant_out));
    const int at = gy * psc(outw) + gx;
    for (int l = 0; l < 4; l++)
    {
        if (oz * 4 + l < outch)
            buffer_st1(top_blob_data, (oz * 4 + l) * psc(outcstep) + at, res[l]);
    }
}
