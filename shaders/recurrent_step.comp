// One time step of RNN, LSTM or GRU across the device, pack1 buffers: a dispatch per step (the
// steps depend on each other; a dispatch boundary is the device-wide barrier Vulkan has), each
// workgroup UNITS units of one direction (y): the previous state staged in shared memory, their
// gate rows' W_hc · h sums, LANES invocations a row reading consecutive weights (coalesced;
// eight units of eight lanes a workgroup took 19 µs a step of a 512-unit LSTM on an H200, with
// a quarter of the workgroups and each lane's loads in a chain four times as long), then the
// units' cell updates from those sums, the input's
// sums (one GEMM before every step: xs [T][directions · rows]) and the previous state. The
// state lives in fp32 buffers: h read from one and written to the other of a pair (the next
// step swaps them), LSTM's c in place (each unit's own). Stage 1 (LSTM with a projection) is a
// second dispatch per step: the outputs from all units, W_hr · units.
// Dispatch [256 · ⌈hidden / UNITS⌉, directions, 1] (stage 1: ⌈num_output / UNITS⌉ groups).
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int cell = 0;
layout (constant_id = 1) const int num_output = 1;
layout (constant_id = 2) const int hidden = 1;
layout (constant_id = 3) const int direction = 0;
layout (constant_id = 4) const int stage = 0;

#define UNITS 2
#define LANES 32
#define MAX_UNITS 512
layout (local_size_x = 256) in;

layout (binding = 0) readonly buffer xs_blob { sfp xs_data[]; };
layout (binding = 1) readonly buffer hc_blob { sfp hc_data[]; };
layout (binding = 2) readonly buffer bias_blob { sfp bias_data[]; };
layout (binding = 3) readonly buffer h_prev_blob { float h_prev[]; };
layout (binding = 4) writeonly buffer h_next_blob { float h_next[]; };
layout (binding = 5) buffer c_blob { float c_data[]; };
layout (binding = 6) writeonly buffer top_blob { sfp top_blob_data[]; };
layout (binding = 7) writeonly buffer final_h_blob { sfp final_h_data[]; };
layout (binding = 8) writeonly buffer final_c_blob { sfp final_c_data[]; };
layout (binding = 9) readonly buffer init_h_blob { sfp init_h_data[]; };
layout (binding = 10) readonly buffer init_c_blob { sfp init_c_data[]; };
layout (binding = 11) buffer units_blob { float units_data[]; };
layout (binding = 12) readonly buffer hr_blob { sfp hr_data[]; };

layout (push_constant) uniform parameter
{
    // the step (0 first), the steps, whether the initial states are given, whether this step
    // writes the final states
    int t, steps, has_init, last;
} p;

shared float sums[256];
shared float staged[MAX_UNITS];

float sigmoid(float x)
{
    return 1.f / (1.f + exp(-x));
}

// the previous hidden state's value i of direction d
float h_at(int d, int i)
{
    if (p.t == 0)
        return p.has_init == 1 ? float(buffer_ld1(init_h_data, d * num_output + i)) : 0.f;
    return h_prev[d * num_output + i];
}

void main()
{
    const int lid = int(gl_LocalInvocationID.x);
    const int block = int(gl_WorkGroupID.x);
    const int d = int(gl_WorkGroupID.y);
    const int dirs = direction == 2 ? 2 : 1;
    const bool reverse = direction == 1 || d == 1;
    const int ti = reverse ? p.steps - 1 - p.t : p.t;
    const int gate_count = cell == 0 ? 1 : (cell == 1 ? 4 : 3);
    const int rows = gate_count * hidden;
    const int r_local = lid / LANES;
    const int lane = lid % LANES;

    if (stage == 1)
    {
        // LSTM's projection: output o of the block from every unit
        for (int i = lid; i < hidden; i += 256)
            staged[i] = units_data[d * hidden + i];
        barrier();
        const int o = block * UNITS + r_local % UNITS;
        float s = 0.f;
        if (r_local < UNITS && o < num_output)
        {
            for (int i = lane; i < hidden; i += LANES)
                s += float(buffer_ld1(hr_data, (d * num_output + o) * hidden + i)) * staged[i];
        }
        sums[lid] = s;
        barrier();
        if (lid < UNITS && block * UNITS + lid < num_output)
        {
            const int oo = block * UNITS + lid;
            float v = 0.f;
            for (int l = 0; l < LANES; l++)
                v += sums[lid * LANES + l];
            h_next[d * num_output + oo] = v;
            buffer_st1(top_blob_data, (ti * dirs + d) * num_output + oo, afp(v));
            if (p.last == 1)
                buffer_st1(final_h_data, d * num_output + oo, afp(v));
        }
        return;
    }

    for (int i = lid; i < num_output; i += 256)
        staged[i] = h_at(d, i);
    barrier();

    // gate k of unit u: row k · hidden + u
    const int k = r_local / UNITS;
    const int u = block * UNITS + r_local % UNITS;
    float s = 0.f;
    if (k < gate_count && u < hidden)
    {
        const int base = (d * rows + k * hidden + u) * num_output;
        for (int i = lane; i < num_output; i += LANES)
            s += float(buffer_ld1(hc_data, base + i)) * staged[i];
    }
    sums[lid] = s;
    barrier();

    if (lid >= UNITS)
        return;
    const int q = block * UNITS + lid;
    if (q >= hidden)
        return;
    // the hidden state's sum of gate g for this unit
    float hs[4];
    for (int g = 0; g < 4; g++)
    {
        float v = 0.f;
        for (int l = 0; l < LANES; l++)
            v += g < gate_count ? sums[(g * UNITS + lid) * LANES + l] : 0.f;
        hs[g] = v;
    }
    const int xrow = (ti * dirs + d) * rows;
    float h_new;
    if (cell == 0)
    {
        h_new = tanh(float(buffer_ld1(xs_data, xrow + q)) + hs[0]);
    }
    else if (cell == 1)
    {
        const float ig = sigmoid(float(buffer_ld1(xs_data, xrow + q)) + hs[0]);
        const float fg = sigmoid(float(buffer_ld1(xs_data, xrow + hidden + q)) + hs[1]);
        const float og = sigmoid(float(buffer_ld1(xs_data, xrow + 2 * hidden + q)) + hs[2]);
        const float gg = tanh(float(buffer_ld1(xs_data, xrow + 3 * hidden + q)) + hs[3]);
        const float c_prev = p.t == 0 ? (p.has_init == 1 ? float(buffer_ld1(init_c_data, d * hidden + q)) : 0.f) : c_data[d * hidden + q];
        const float c_new = fg * c_prev + ig * gg;
        c_data[d * hidden + q] = c_new;
        if (p.last == 1)
            buffer_st1(final_c_data, d * hidden + q, afp(c_new));
        h_new = og * tanh(c_new);
    }
    else
    {
        const float rg = sigmoid(float(buffer_ld1(xs_data, xrow + q)) + hs[0]);
        const float ug = sigmoid(float(buffer_ld1(xs_data, xrow + hidden + q)) + hs[1]);
        const float hn = hs[2] + float(buffer_ld1(bias_data, (d * 4 + 3) * hidden + q));
        const float ng = tanh(float(buffer_ld1(xs_data, xrow + 2 * hidden + q)) + rg * hn);
        h_new = (1.f - ug) * ng + ug * staged[q];
    }
    if (cell == 1 && num_output != hidden)
    {
        // projected in stage 1
        units_data[d * hidden + q] = h_new;
        return;
    }
    h_next[d * num_output + q] = h_new;
    buffer_st1(top_blob_data, (ti * dirs + d) * num_output + q, afp(h_new));
    if (p.last == 1)
        buffer_st1(final_h_data, d * num_output + q, afp(h_new));
}
