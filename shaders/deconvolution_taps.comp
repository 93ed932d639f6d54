// Deconvolution whose kernel is its stride (no two taps of one input meet: a 2×2 stride-2
// upsampler), pack4 in and out, dense, step 2 of 2: its taps' products come from the batched
// implicit GEMM (one 1×1 product per tap over the input's positions, pack4 [taps][output
// blocks][w · h]); each invocation places one output element's product, adds the bias and
// applies the activation. Outputs past the full result (output pads) hold the bias alone, as
// ncnn's do.
#version 450

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif

#include "convolution_head.comp"

layout (binding = 0) readonly buffer m_blob { sfpvec4 m_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
layout (binding = 2) readonly buffer bias_blob { sfpvec4 bias_data[]; };

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int gz = int(gl_GlobalInvocationID.z);

    if (gx >= psc(outw) || gy >= psc(outh) || gz >= psc(outc))
        return;

    // the full result's coordinate, its input position and tap
    const int fx = gx + p.pad_left;
    const int fy = gy + p.pad_top;
    const int ix = fx / stride_w;
    const int iy = fy / stride_h;
    vec4 v = bias_term == 1 ? vec4(buffer_ld4(bias_data, gz)) : vec4(0.f);
    if (ix < psc(w) && iy < psc(h))
    {
        const int tap = (fy - iy * stride_h) * kernel_w + fx - ix * stride_w;
        const int positions = psc(w) * psc(h);
        v += vec4(buffer_ld4(m_data, (tap * psc(outc) + gz) * positions + iy * psc(w) + ix));
    }
    const afpvec4 res = activation_afpvec4(afpvec4(v), activation_type, activation_param_0, activation_param_1);
    buffer_st4(top_blob_data, gz * psc(outcstep) + gy * psc(outw) + gx, res);
}
