// What the int8 convolution shaders share (convolution_gemm_int8_body, convolution_gemm_int8_cm,
// convolution_gemm_int8_sum), after convolution_head: levels as ints, four levels packed in an
// int, and an output block's finish from its int32 sums.

// ncnn's float2int8 (convolution_head's int8_levels) as ints
ivec4 level4(vec4 x)
{
    return ivec4(int8_levels(x));
}

#include "int8_dot.comp"

// an output block's sums dequantized (one fused multiply-add with its descales and bias, as
// the CPU), activated, and where output_scale is not 0 requantized to its levels over it
afpvec4 int8_finish(ivec4 sums, vec4 descale, vec4 bias, float output_scale)
{
    const vec4 v = fma(vec4(sums), descale, bias);
    vec4 res = vec4(activation_afpvec4(afpvec4(v), activation_type, activation_param_0, activation_param_1));
    if (output_scale != 0.f)
        res = vec4(level4(res * output_scale)) * (1.f / output_scale);
    return afpvec4(res);
}
