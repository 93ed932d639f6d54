// Deconvolution (transposed convolution), direct, pack4 buffer blobs in and out, dense (one
// group): one invocation per output element (four output channels), gathering the inputs
// whose strided kernel footprint covers it, as deconvolution.comp does for pack1. Per input
// block of 4 and kernel tap, four weight rows, one per output lane: [outc / 4][c / 4][kernel_h]
// [kernel_w][4 rows] of vec4 over the input lanes.
#version 450

#include "prelude.comp"

#define IN_PACK 4
#define OUT_PACK 4
#include "convolution_head.comp"

#define BLOCK_SETUP
#define BLOCK_PAST_OUTPUT(z) (z >= psc(outc))
#define STORE_BLOCK(x, y, z, v) buffer_st4(top_blob_data, z * psc(outcstep) + y * psc(outw) + x, v)
#include "deconvolution_pack4_body.comp"
