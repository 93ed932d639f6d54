// Deconvolution (transposed convolution), direct, pack4 buffer blobs in and out, dense (one
// group): one invocation per output element (four output channels), gathering the inputs
// whose strided kernel footprint covers it, as deconvolution.comp does for pack1. Per input
// block of 4 and kernel tap, four weight rows, one per output lane: [outc / 4][c / 4][kernel_h]
// [kernel_w][4 rows] of vec4 over the input lanes.
#version 450

#include "fp16_extensions.comp"

#include "convolution_head.comp"

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
layout (binding = 2) readonly buffer weight_blob { sfpvec4 weight_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfpvec4 bias_data[]; };

#define BLOCK_SETUP
#define BLOCK_PAST_OUTPUT(z) (z >= psc(outc))
#define STORE_BLOCK(x, y, z, v) buffer_st4(top_blob_data, z * psc(outcstep) + y * psc(outw) + x, v)
#include "deconvolution_pack4_body.comp"
