// deconvolution_taps.comp for a pack1 output (output channels not a multiple of 4, as an
// upscaler's RGB): the GEMM's products come in blocks of 4 outputs (the last block's lanes past
// the channels zero, their bias too); each invocation places one position of one block, the
// lanes that are channels.
#version 450

#include "prelude.comp"

#include "convolution_head.comp"

layout (binding = 0) readonly buffer m_blob { sfpvec4 m_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
layout (binding = 2) readonly buffer bias_blob { sfpvec4 bias_data[]; };

#include "deconvolution_taps_sum.comp"

void main()
{
    GLOBAL_XYZ;
    // the output's channels (a pack1 blob's c)
    const int outch = psc(outc);

    if (gx >= psc(outw) || gy >= psc(outh) || gz * 4 >= outch)
        return;

    vec4 v = tap_sum(gx + p.pad_left, gy + p.pad_top, gz, (outch + 3) / 4);
    if (bias_term == 1)
        v += vec4(buffer_ld4(bias_data, gz));
    const afpvec4 res = activation_afpvec4(afpvec4(v), activation_type, activation_param_0, activation_param_1);
    const int at = gy * psc(outw) + gx;
    for (int l = 0; l < 4; l++)
    {
        if (gz * 4 + l < outch)
            buffer_st1(top_blob_data, (gz * 4 + l) * psc(outcstep) + at, res[l]);
    }
}
