// The body of InnerProduct's int8 inference on one flat input (innerproduct_int8 with the
// device's int8 dot products, innerproduct_int8_exact with sign-extended bytes), ncnn's
// forward_int8 for one row: each input vec4 quantized as it is loaded (level(x · input_scale))
// and packed into one int of four levels, the same four inputs each weight int holds; the
// products of levels sum exactly in int32, per invocation then across the workgroup; the sum
// is dequantized (1 / (input scale · weight scale), the bias in the same fused multiply-add,
// as the CPU), activated, and where the layer requantizes, taken to its levels over the
// output scale. One workgroup per output (along y), as innerproduct, and per input row (along
// x: a layer given several rows of `w` vec4s, ncnn's gemm path, writes rows of `outw`).
//
// Weights, from the host: per output, one int per four inputs, the first in the low byte.

// constants 4 and 5 are the scales below
#define shape_constant_id_offset 6
#include "innerproduct_head.comp"

// the input's scale, and the output's where the layer requantizes (0: it does not)
layout (constant_id = 4) const float input_scale = 1.f;
layout (constant_id = 5) const float output_scale = 0.f;

layout (binding = 2) readonly buffer weight_blob { int weight_data[]; };
// each output's 1 / (input scale · weight scale), fp32 in every variant
layout (binding = 4) readonly buffer descale_blob { float descale_data[]; };

#include "int8_levels.comp"
#include "int8_dot.comp"

shared int partial[LANES];

void main()
{
    const int lx = int(gl_LocalInvocationID.x);
    const int o = workgroup_output();
    // a folded grid's last rows lie past the outputs: the whole workgroup leaves
    if (o >= psc(outw))
        return;
    const int row = o * psc(w);
    const int r = int(gl_WorkGroupID.x);
    const int first = r * psc(w);

    int acc = 0;
    for (int k = lx; k < psc(w); k += LANES)
    {
        const vec4 x = vec4(buffer_ld4(bottom_blob_data, first + k));
        const int levels = pack_levels(ivec4(int8_levels(x * input_scale)));
        acc += DOT4(levels, weight_data[row + k]);
    }
    partial[lx] = acc;
    barrier();

    for (int s = LANES / 2; s > 0; s >>= 1)
    {
        if (lx < s)
            partial[lx] += partial[lx + s];
        barrier();
    }

    if (lx != 0)
        return;

    const float bias = bias_term == 1 ? float(buffer_ld1(bias_data, o)) : 0.f;
    float v = fma(float(partial[0]), descale_data[o], bias);
    v = float(activation_afp(afp(v), activation_type, activation_param_0, activation_param_1));
    if (output_scale != 0.f)
        v = int8_levels(vec4(v * output_scale)).x * (1.f / output_scale);
    buffer_st1(top_blob_data, r * psc(outw) + o, afp(v));
}
