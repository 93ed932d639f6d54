// Embed: output row q is the weight row of input value q (an index, clamped to the table),
// plus the bias when `bias_term`. Pack1 buffers; dispatch [num_output, words, 1].
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int bias_term = 0;

layout (local_size_x = 64, local_size_y = 4) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
layout (binding = 2) readonly buffer weight_blob { sfp weight_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfp bias_data[]; };

layout (push_constant) uniform parameter
{
    int num_output, words, input_dim;
} p;

void main()
{
    const int x = int(gl_GlobalInvocationID.x);
    const int q = int(gl_GlobalInvocationID.y);
    if (x >= p.num_output || q >= p.words)
        return;

    const int index = clamp(int(round(float(buffer_ld1(bottom_blob_data, q)))), 0, p.input_dim - 1);
    afp v = buffer_ld1(weight_data, index * p.num_output + x);
    if (bias_term == 1)
        v += buffer_ld1(bias_data, x);
    buffer_st1(top_blob_data, q * p.num_output + x, v);
}
