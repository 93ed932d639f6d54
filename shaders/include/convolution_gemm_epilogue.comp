// The implicit GEMM's epilogue, shared by its two engines and the pass that adds split
// slices: an output element's fp32 sum, plus the bias, plus the residual where the net folded
// one in, through the activation, stored.
#include "convolution_residual.comp"

// output block om's sum s stored at `index` of the output
void store_output(vec4 s, int om, int index)
{
    const vec4 b = bias_term == 1 ? vec4(buffer_ld4(bias_data, om)) : vec4(0.f);
    const afpvec4 res = activation_afpvec4(afpvec4(s + b + residual_at(index)), activation_type, activation_param_0, activation_param_1);
    buffer_st4(top_blob_data, index, res);
}
