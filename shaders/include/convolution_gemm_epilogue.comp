// The implicit GEMM's epilogue, shared by its two engines and the pass that adds split
// slices: an output element's fp32 sum, plus the bias, plus the residual where the net folded
// one in, through the activation, stored. The residual is the other addend of an Eltwise or
// BinaryOp sum that reads this convolution's output alone (resnet's shortcut), read at the
// output's own index: that blob has the output's shape and layout (the runtime checks).
// Without one (0) the binding is still declared, and the runtime binds a stand-in.
layout (constant_id = 16) const int residual = 0;
layout (binding = 5) readonly buffer residual_blob { sfpvec4 residual_data[]; };

// output block om's sum s stored at `index` of the output
void store_output(vec4 s, int om, int index)
{
    const vec4 b = bias_term == 1 ? vec4(buffer_ld4(bias_data, om)) : vec4(0.f);
    const vec4 r = residual == 1 ? vec4(buffer_ld4(residual_data, index)) : vec4(0.f);
    const afpvec4 res = activation_afpvec4(afpvec4(s + b + r), activation_type, activation_param_0, activation_param_1);
    buffer_st4(top_blob_data, index, res);
}
