// Strided copies between pack1 buffer blobs (numpy's as_strided on both sides): PixelShuffle,
// Reorg, Tile, Flip, Diag, CopyTo, DeepCopy and GLU. Every value has a logical index, its place
// in the blob's numpy order; a 3-D blob keeps its channels cstep apart, so logical index L lies
// at (L / plane) * cstep + L % plane (1-D and 2-D blobs: plane = cstep = their size).
//
// Invocation i walks the index space of up to six axes (`size`, outermost first), reads the
// source at src_offset + sum(digit_k * src_stride_k) and writes the destination at
// dst_offset + sum(digit_k * dst_stride_k), both logical. The specialization constant `mode`:
// - 0: copy.
// - 1: fill: the destination takes `value` (the source is bound but not read).
// - 2: GLU: the value at the source index times the sigmoid of the value `second` further on.
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int mode = 0;

layout (local_size_x = 64) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int size[6];
    int src_stride[6];
    int dst_stride[6];
    int src_offset, dst_offset, total, src_plane, src_cstep, dst_plane, dst_cstep, second;
    float value;
} p;

int physical(int l, int plane, int cstep)
{
    return (l / plane) * cstep + l % plane;
}

void main()
{
    // a 2-D grid: x is limited to 65535 workgroups, rows of the index space run along y
    const int i = int(gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x);
    if (i >= p.total)
        return;

    int rest = i;
    int s = p.src_offset;
    int d = p.dst_offset;
    for (int k = 5; k >= 0; k--)
    {
        const int digit = rest % p.size[k];
        rest /= p.size[k];
        s += digit * p.src_stride[k];
        d += digit * p.dst_stride[k];
    }
    const int di = physical(d, p.dst_plane, p.dst_cstep);

    if (mode == 1)
    {
        buffer_st1(top_blob_data, di, afp(p.value));
    }
    else if (mode == 2)
    {
        const float a = float(buffer_ld1(bottom_blob_data, physical(s, p.src_plane, p.src_cstep)));
        const float b = float(buffer_ld1(bottom_blob_data, physical(s + p.second, p.src_plane, p.src_cstep)));
        buffer_st1(top_blob_data, di, afp(a / (1.f + exp(-b))));
    }
    else
    {
        buffer_cp1(top_blob_data, di, bottom_blob_data, physical(s, p.src_plane, p.src_cstep));
    }
}
