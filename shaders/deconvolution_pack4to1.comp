// Deconvolution (transposed convolution), direct, a pack4 buffer blob in and a pack1 one out
// (output channels not a multiple of 4, as an upscaler's RGB output), dense (one group): one
// invocation per output position and block of 4 output channels, as deconvolution_pack4.comp
// per block, the last block's lanes past the channels with zero weights and bias and not
// written (kernels of more than 16 taps: smaller ones go through the GEMM and
// deconvolution_taps_pack4to1). Weights: per output block, input block and tap, four rows (one
// per output lane) of a vec4 over the input lanes.
#version 450

#include "prelude.comp"

#define IN_PACK 4
#define OUT_PACK 1
#include "convolution_head.comp"

// the output's channels (a pack1 blob's c)
#define BLOCK_SETUP const int outch = psc(outc);
#define BLOCK_PAST_OUTPUT(z) (z * 4 >= outch)
#define STORE_BLOCK(x, y, z, v) \
    const int at = y * psc(outw) + x; \
    for (int l = 0; l < 4; l++) \
    { \
        if (z * 4 + l < outch) \
            buffer_st1(top_blob_data, (z * 4 + l) * psc(outcstep) + at, v[l]); \
    }
#include "deconvolution_pack4_body.comp"
