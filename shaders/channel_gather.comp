// Whole channels moved from up to four inputs to up to four outputs in one dispatch: what a
// chain of Concat, ShuffleChannel and Slice along the channels comes to (shufflenet's blocks
// spent three dispatches on it). Buffer blobs of any elempack, all holding scalars alike (fp32,
// or fp16 storage), with the same channel plane (w * h * d values). Output o's scalar channel c
// copies scalar channel (e & 0xffffff) of input (e >> 24), e = table[toff_o + c].
// One invocation per output value: x runs over a packed channel's plane values times the
// output's elempack (consecutive invocations write consecutive values), y over the output's
// packed channels, z over the outputs.
#version 450

#include "prelude.comp"

layout (binding = 0) readonly buffer in0_blob { sfp in0_data[]; };
layout (binding = 1) readonly buffer in1_blob { sfp in1_data[]; };
layout (binding = 2) readonly buffer in2_blob { sfp in2_data[]; };
layout (binding = 3) readonly buffer in3_blob { sfp in3_data[]; };
layout (binding = 4) writeonly buffer out0_blob { sfp out0_data[]; };
layout (binding = 5) writeonly buffer out1_blob { sfp out1_data[]; };
layout (binding = 6) writeonly buffer out2_blob { sfp out2_data[]; };
layout (binding = 7) writeonly buffer out3_blob { sfp out3_data[]; };
layout (binding = 8) readonly buffer table_blob { uint table[]; };

layout (push_constant) uniform parameter
{
    // per input: channel step and elempack
    ivec4 in_cstep;
    ivec4 in_pack;
    // per output: channel step, elempack, packed channels, first table entry
    ivec4 out_cstep;
    ivec4 out_pack;
    ivec4 out_c;
    ivec4 out_table;
    // values of one channel, the same on every side
    int plane, outputs;
} p;

void main()
{
    GLOBAL_XYZ;

    if (gz >= p.outputs)
        return;
    const int po = p.out_pack[gz];
    if (gx >= p.plane * po || gy >= p.out_c[gz])
        return;

    // the output's scalar channel, and where it comes from
    const int x = gx / po;
    const uint e = table[p.out_table[gz] + gy * po + gx % po];
    const int i = int(e >> 24);
    const int s = int(e & 0xffffffu);
    const int pi = p.in_pack[i];
    const int from = ((s / pi) * p.in_cstep[i] + x) * pi + s % pi;
    const int to = gy * p.out_cstep[gz] * po + gx;

    afp v;
    if (i == 0)
        v = buffer_ld1(in0_data, from);
    else if (i == 1)
        v = buffer_ld1(in1_data, from);
    else if (i == 2)
        v = buffer_ld1(in2_data, from);
    else
        v = buffer_ld1(in3_data, from);

    // (buffer_st1 is a block: braces keep the else chain whole)
    if (gz == 0)
    {
        buffer_st1(out0_data, to, v);
    }
    else if (gz == 1)
    {
        buffer_st1(out1_data, to, v);
    }
    else if (gz == 2)
    {
        buffer_st1(out2_data, to, v);
    }
    else
    {
        buffer_st1(out3_data, to, v);
    }
}
