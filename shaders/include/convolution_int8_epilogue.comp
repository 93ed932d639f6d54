// What the int8 convolution shaders share (convolution_gemm_int8_body, convolution_gemm_int8_cm,
// convolution_gemm_int8_sum), after convolution_head and their bindings: levels as ints, four
// levels packed in an int, int8 storage, and an output block's finish from its int32 sums
// (each declares top_blob_data and top_int8_data first).

// ncnn's float2int8 (convolution_head's int8_levels) as ints
ivec4 level4(vec4 x)
{
    return ivec4(int8_levels(x));
}

#include "int8_dot.comp"

// int8 storage between int8 layers: bit 0, the input is its levels (four channels' in an int,
// bottom_int8_data) at the input scale; bit 1, the output is written as its levels at the
// output scale (top_int8_data), not as values. A shader with no input or no output binding for
// it leaves the bit unset.
layout (constant_id = 15) const int int8_storage = 0;

// the values of four levels read from int8 storage (levels / scale; the levels themselves at
// a zero scale, whose levels are all 0), for the staging to quantize as it does a float input's
// (the same levels, exactly). Taking the loaded int straight into shared memory, or through
// arithmetic the compiler folds away (levels · (1 / scale) · scale), ran the int8 GEMM at half
// the speed on an H200 (vgg16_int8's conv1_2: 33 → 63 us); through this division it runs as on
// a float input.
vec4 int8_stored_values(int q, float scale)
{
    return vec4(ivec4(q << 24, q << 16, q << 8, q) >> 24) / (scale == 0.f ? 1.f : scale);
}

// an output block's sums dequantized (one fused multiply-add with its descales and bias, as
// the CPU), activated, and where output_scale is not 0 requantized: its levels
vec4 int8_values(ivec4 sums, vec4 descale, vec4 bias)
{
    const vec4 v = fma(vec4(sums), descale, bias);
    return vec4(activation_afpvec4(afpvec4(v), activation_type, activation_param_0, activation_param_1));
}

// output block gi written from its sums: its levels where the output is int8 storage, else
// its values (the levels over the output scale where the layer requantizes)
void int8_store(int gi, ivec4 sums, vec4 descale, vec4 bias, float output_scale)
{
    vec4 res = int8_values(sums, descale, bias);
    if ((int8_storage & 2) != 0)
    {
        top_int8_data[gi] = pack_levels(level4(res * output_scale));
        return;
    }
    if (output_scale != 0.f)
        res = vec4(level4(res * output_scale)) * (1.f / output_scale);
    buffer_st4(top_blob_data, gi, afpvec4(res));
}
