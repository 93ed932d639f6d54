// The concat shaders' body, for the including file's PACK (include/packed_names.comp). Copies two
// inputs a and b that lie next to each other along axis `at` (0 w, 1 h, 2 c) of the output
// (a's extents w x h x c, b's bw x bh x bc, channels cstep apart) into the output from
// (offset_w, offset_h, offset_c) on: one dispatch per pair of inputs (b of extent 0 along the
// axis for an odd one out), as shufflenet's blocks spent a dispatch per input.

#include "packed_names.comp"

layout (binding = 0) readonly buffer a_blob { sfpN a_data[]; };
layout (binding = 1) readonly buffer b_blob { sfpN b_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfpN top_blob_data[]; };

#define T afpN
#define LOAD(data, i) buffer_ldN(data, i)
#define STORE(i, v) buffer_stN(top_blob_data, i, v)

layout (push_constant) uniform parameter
{
    int w, h, c, cstep, bw, bh, bc, bcstep, outw, outcstep, offset_w, offset_h, offset_c, at;
} p;

void main()
{
    ivec3 g = ivec3(gl_GlobalInvocationID);
    const ivec3 ea = ivec3(p.w, p.h, p.c);
    const ivec3 o = g + ivec3(p.offset_w, p.offset_h, p.offset_c);
    T v;
    if (g[p.at] < ea[p.at])
    {
        if (any(greaterThanEqual(g, ea)))
            return;
        v = LOAD(a_data, g.z * p.cstep + g.y * p.w + g.x);
    }
    else
    {
        g[p.at] -= ea[p.at];
        if (any(greaterThanEqual(g, ivec3(p.bw, p.bh, p.bc))))
            return;
        v = LOAD(b_data, g.z * p.bcstep + g.y * p.bw + g.x);
    }
    STORE(o.z * p.outcstep + o.y * p.outw + o.x, v);
}
