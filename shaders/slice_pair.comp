// Slice along channels: two adjacent parts of the input copied out in one dispatch (shufflenet's
// blocks spent one per part), pack1 buffer blobs; packed blobs come as their scalar views (a
// pack's values side by side along w), their channels being packs.
#version 450

#include "prelude.comp"

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer a_blob { sfp a_data[]; };
layout (binding = 2) writeonly buffer b_blob { sfp b_data[]; };

layout (push_constant) uniform parameter
{
    // a row's values and the rows of a channel, the same on every side
    int w, rows, cstep, ac, acstep, bc, bcstep;
    // the input channel the first part starts at
    int start;
} p;

void main()
{
    GLOBAL_XYZ;

    if (gx >= p.w || gy >= p.rows || gz >= p.ac + p.bc)
        return;

    const int from = (p.start + gz) * p.cstep + gy * p.w + gx;
    if (gz < p.ac)
    {
        buffer_cp1(a_data, gz * p.acstep + gy * p.w + gx, bottom_blob_data, from);
    }
    else
    {
        buffer_cp1(b_data, (gz - p.ac) * p.bcstep + gy * p.w + gx, bottom_blob_data, from);
    }
}
