// RNN, LSTM and GRU over a whole sequence in one dispatch, pack1 buffers: one workgroup per
// direction steps through time, the state in shared memory, a barrier between the stages of a
// step. The input's gate sums for every step, with their bias, come from one GEMM before
// (`xs`: [T][directions · rows], rows = gates · hidden); per step each invocation takes rows
// of W_hc · h, then units of the cell update, then (LSTM with a projection) outputs of
// W_hr · units. Cells: 0 RNN (h = tanh(s)), 1 LSTM (gates i f o g, c = f c + i g, h = o tanh c),
// 2 GRU (r, u = σ(s), n = tanh(x_n + r · (W_hn h + b_hn)), h = (1 - u) n + u h).
// Dispatch [256 · directions, 1, 1].
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int cell = 0;
layout (constant_id = 1) const int num_output = 1;
layout (constant_id = 2) const int hidden = 1;
// 0 forward, 1 reverse, 2 both (the second workgroup reverse)
layout (constant_id = 3) const int direction = 0;
// initial states given (hidden; LSTM's cell too)
layout (constant_id = 4) const int has_init = 0;

#define MAX_UNITS 512
layout (local_size_x = 256) in;

layout (binding = 0) readonly buffer xs_blob { sfp xs_data[]; };
layout (binding = 1) readonly buffer hc_blob { sfp hc_data[]; };
layout (binding = 2) readonly buffer hr_blob { sfp hr_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfp bias_data[]; };
layout (binding = 4) readonly buffer init_h_blob { sfp init_h_data[]; };
layout (binding = 5) readonly buffer init_c_blob { sfp init_c_data[]; };
layout (binding = 6) writeonly buffer top_blob { sfp top_blob_data[]; };
// the final states, [direction][num_output] and [direction][hidden]
layout (binding = 7) writeonly buffer final_h_blob { sfp final_h_data[]; };
layout (binding = 8) writeonly buffer final_c_blob { sfp final_c_data[]; };

layout (push_constant) uniform parameter
{
    int steps, write_final;
} p;

shared float h[MAX_UNITS];
shared float c[MAX_UNITS];
shared float units[MAX_UNITS];
shared float gates[4 * MAX_UNITS];

float sigmoid(float x)
{
    return 1.f / (1.f + exp(-x));
}

void main()
{
    const int lid = int(gl_LocalInvocationID.x);
    const int d = int(gl_WorkGroupID.x);
    const int gate_count = cell == 0 ? 1 : (cell == 1 ? 4 : 3);
    const int rows = gate_count * hidden;
    const int dirs = direction == 2 ? 2 : 1;
    const bool reverse = direction == 1 || d == 1;
    const int bias_rows = cell == 0 ? 1 : 4;

    for (int i = lid; i < num_output; i += 256)
        h[i] = has_init == 1 ? float(buffer_ld1(init_h_data, d * num_output + i)) : 0.f;
    for (int i = lid; i < hidden; i += 256)
        c[i] = has_init == 1 && cell == 1 ? float(buffer_ld1(init_c_data, d * hidden + i)) : 0.f;
    barrier();

    for (int t = 0; t < p.steps; t++)
    {
        const int ti = reverse ? p.steps - 1 - t : t;
        // the hidden state's sums
        for (int r = lid; r < rows; r += 256)
        {
            const int base = (d * rows + r) * num_output;
            float s = 0.f;
            for (int i = 0; i < num_output; i++)
                s += float(buffer_ld1(hc_data, base + i)) * h[i];
            gates[r] = s;
        }
        barrier();

        // the cell update per unit
        const int xrow = (ti * dirs + d) * rows;
        for (int q = lid; q < hidden; q += 256)
        {
            if (cell == 0)
            {
                units[q] = tanh(float(buffer_ld1(xs_data, xrow + q)) + gates[q]);
            }
            else if (cell == 1)
            {
                const float ig = sigmoid(float(buffer_ld1(xs_data, xrow + q)) + gates[q]);
                const float fg = sigmoid(float(buffer_ld1(xs_data, xrow + hidden + q)) + gates[hidden + q]);
                const float og = sigmoid(float(buffer_ld1(xs_data, xrow + 2 * hidden + q)) + gates[2 * hidden + q]);
                const float gg = tanh(float(buffer_ld1(xs_data, xrow + 3 * hidden + q)) + gates[3 * hidden + q]);
                c[q] = fg * c[q] + ig * gg;
                units[q] = og * tanh(c[q]);
            }
            else
            {
                const float rg = sigmoid(float(buffer_ld1(xs_data, xrow + q)) + gates[q]);
                const float ug = sigmoid(float(buffer_ld1(xs_data, xrow + hidden + q)) + gates[hidden + q]);
                const float hn = gates[2 * hidden + q] + float(buffer_ld1(bias_data, (d * bias_rows + 3) * hidden + q));
                const float ng = tanh(float(buffer_ld1(xs_data, xrow + 2 * hidden + q)) + rg * hn);
                units[q] = (1.f - ug) * ng + ug * h[q];
            }
        }
        barrier();

        // the new hidden state (LSTM's projected), and the output row
        const bool projected = cell == 1 && num_output != hidden;
        for (int o = lid; o < num_output; o += 256)
        {
            float v = units[o];
            if (projected)
            {
                v = 0.f;
                for (int i = 0; i < hidden; i++)
                    v += float(buffer_ld1(hr_data, (d * num_output + o) * hidden + i)) * units[i];
            }
            h[o] = v;
            buffer_st1(top_blob_data, ti * dirs * num_output + d * num_output + o, afp(v));
        }
        barrier();
    }

    if (p.write_final == 1)
    {
        for (int i = lid; i < num_output; i += 256)
            buffer_st1(final_h_data, d * num_output + i, afp(h[i]));
        for (int i = lid; i < hidden; i += 256)
            buffer_st1(final_c_data, d * hidden + i, afp(c[i]));
    }
}
