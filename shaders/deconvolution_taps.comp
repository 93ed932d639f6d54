// Deconvolution through the batched implicit GEMM, dense, pack4 in and out, step 2 of 2: the
// GEMM made one 1×1 product per kernel tap over the input's positions; each invocation sums the
// taps' products that reach one output element (one for a kernel that is its stride, as a 2×2
// stride-2 upsampler's), adds the bias and applies the activation. Outputs past the full result
// (output pads) hold the bias alone, as ncnn's do.
#version 450

#include "prelude.comp"

#include "convolution_head.comp"

layout (binding = 0) readonly buffer m_blob { sfpvec4 m_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
layout (binding = 2) readonly buffer bias_blob { sfpvec4 bias_data[]; };

#include "deconvolution_taps_sum.comp"

void main()
{
    GLOBAL_XYZ;

    if (gx >= psc(outw) || gy >= psc(outh) || gz >= psc(outc))
        return;

    vec4 v = tap_sum(gx + p.pad_left, gy + p.pad_top, gz, psc(outc));
    if (bias_term == 1)
        v += vec4(buffer_ld4(bias_data, gz));
    const afpvec4 res = activation_afpvec4(afpvec4(v), activation_type, activation_param_0, activation_param_1);
    buffer_st4(top_blob_data, gz * psc(outcstep) + gy * psc(outw) + gx, res);
}
