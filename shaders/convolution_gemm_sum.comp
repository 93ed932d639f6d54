// The second pass of a convolution_gemm whose steps were split: per output element (four
// output channels at one position), the slices' fp32 partial sums and the GEMM's epilogue.
#version 450

#include "prelude.comp"

#include "convolution_head.comp"

layout (binding = 0) readonly buffer partial_blob { vec4 partial_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
layout (binding = 2) readonly buffer bias_blob { sfpvec4 bias_data[]; };

#include "convolution_gemm_epilogue.comp"

layout (constant_id = 12) const int splits = 1;

void main()
{
    const int on = int(gl_GlobalInvocationID.x);
    const int om = int(gl_GlobalInvocationID.y);
    const int N = psc(outw) * psc(outh);
    if (on >= N || om >= psc(outc))
        return;

    vec4 s = vec4(0.f);
    for (int i = 0; i < splits; i++)
        s += partial_data[(i * psc(outc) + om) * N + on];
    store_output(s, om, om * psc(outcstep) + on);
}
