// Einsum over pack1 buffer blobs: each invocation makes one output value, the sum over every
// index of the summed letters of the product of the operands' values there. Where each
// operand's value lies is two offsets added (the runtime's tables, binding 4, in stored
// positions: channels cstep apart): one for the output index, one for the summed index, so a
// letter repeated within an operand (a diagonal) is a stride like any other. Table layout:
// the output's own positions (n_out), then per operand its output-index offsets (n_out
// each), then per operand its summed-index offsets (n_sum each). Unused operand bindings
// repeat the first. Products and sums in fp32.
// Dispatch: global [a row of up to 65535 workgroups, rows, 1] over n_out.
#version 450

#include "prelude.comp"

layout (local_size_x = 64) in;

layout (binding = 0) readonly buffer a_blob { sfp a_data[]; };
layout (binding = 1) readonly buffer b_blob { sfp b_data[]; };
layout (binding = 2) readonly buffer c_blob { sfp c_data[]; };
layout (binding = 3) readonly buffer d_blob { sfp d_data[]; };
layout (binding = 4) readonly buffer table_blob { int table[]; };
layout (binding = 5) writeonly buffer top_blob { sfp top_data[]; };

layout (push_constant) uniform parameter
{
    int n_out, n_sum, n_ops;
} p;

void main()
{
    const int o = int(gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x);
    if (o >= p.n_out)
        return;

    // operand k's offset at output index o, and where its summed offsets start
    const int out_at = p.n_out + o;
    const int sum_at = p.n_out * (1 + p.n_ops);
    const int a0 = table[out_at];
    const int b0 = p.n_ops > 1 ? table[out_at + p.n_out] : 0;
    const int c0 = p.n_ops > 2 ? table[out_at + 2 * p.n_out] : 0;
    const int d0 = p.n_ops > 3 ? table[out_at + 3 * p.n_out] : 0;

    float sum = 0.0;
    for (int r = 0; r < p.n_sum; r++)
    {
        float v = float(buffer_ld1(a_data, a0 + table[sum_at + r]));
        if (p.n_ops > 1)
            v *= float(buffer_ld1(b_data, b0 + table[sum_at + p.n_sum + r]));
        if (p.n_ops > 2)
            v *= float(buffer_ld1(c_data, c0 + table[sum_at + 2 * p.n_sum + r]));
        if (p.n_ops > 3)
            v *= float(buffer_ld1(d_data, d0 + table[sum_at + 3 * p.n_sum + r]));
        sum += v;
    }
    buffer_st1(top_data, table[o], afp(sum));
}
