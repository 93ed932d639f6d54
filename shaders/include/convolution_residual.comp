// A residual sum the net folded into a convolution's epilogue: the other addend of the
// Eltwise or BinaryOp sum that reads this convolution's output alone (resnet's and
// shufflenet's shortcuts), read at the output's own index (that blob has the output's shape
// and layout: the runtime checks) and added before the activation. Without one (0) the
// binding is still declared, and the runtime binds a stand-in.
layout (constant_id = 16) const int residual = 0;
layout (binding = 5) readonly buffer residual_blob { sfpvec4 residual_data[]; };

// the residual at output index `index`, or 0
vec4 residual_at(int index)
{
    return residual == 1 ? vec4(buffer_ld4(residual_data, index)) : vec4(0.f);
}
