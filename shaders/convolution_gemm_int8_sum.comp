// The second pass of a convolution_gemm_int8_cm whose steps were split: per output element
// (four output channels at one position), the slices' int32 sums added, dequantized, biased,
// activated and (requantizing) taken to their levels over the output scale, or written as
// levels where the output is int8 storage.
#version 450

#include "prelude.comp"

#include "convolution_head.comp"

layout (binding = 0) readonly buffer partial_blob { ivec4 partial_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
layout (binding = 2) readonly buffer bias_blob { sfpvec4 bias_data[]; };
layout (binding = 3) readonly buffer descale_blob { vec4 descale_data[]; };
// int8 storage (constant 15, bit 1): the output's levels, four channels an int
layout (binding = 4) writeonly buffer top_int8_blob { int top_int8_data[]; };

#include "convolution_int8_epilogue.comp"

layout (constant_id = 13) const float output_scale = 0.f;
layout (constant_id = 14) const int splits = 1;

void main()
{
    const int on = int(gl_GlobalInvocationID.x);
    const int om = int(gl_GlobalInvocationID.y);
    const int N = psc(outw) * psc(outh);
    if (on >= N || om >= psc(outc))
        return;

    ivec4 s = ivec4(0);
    for (int i = 0; i < splits; i++)
        s += partial_data[(i * psc(outc) + om) * N + on];
    const vec4 b = bias_term == 1 ? vec4(buffer_ld4(bias_data, om)) : vec4(0.f);
    int8_store(om * psc(outcstep) + on, s, descale_data[om], b, output_scale);
}
