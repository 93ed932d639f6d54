// Pooling3D, pack1 buffers (4-D: d slabs of h rows per channel): output value (x, y, z) of
// channel q, the max or the average of its window (mode 0: kernel taps `stride` apart over
// the volume bordered by `left` steps before each axis, the max's padding -FLT_MAX, the
// average's 0, an average leaving out the padding counting the bordered steps in
// [from, to) of each axis; mode 1: the whole volume; mode 2: adaptive windows
// [⌊n·j/out⌋, ⌈n·(j+1)/out⌉) per axis). Sums in fp32. Dispatch [outw, outh, outd · c].
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int average = 0;
layout (constant_id = 1) const int mode = 0;
layout (constant_id = 2) const int include_pad = 0;

layout (local_size_x = 8, local_size_y = 8, local_size_z = 4) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int w, h, d, cstep;
    int outw, outh, outd, outcstep;
    int c;
    int kernel_w, kernel_h, kernel_d;
    int stride_w, stride_h, stride_d;
    int left_w, left_h, left_d;
    int from_w, to_w, from_h, to_h, from_d, to_d;
} p;

// bordered (x, y, z) of channel q, or the padding's value outside the volume
float value(int q, int bx, int by, int bz)
{
    const int x = bx - p.left_w;
    const int y = by - p.left_h;
    const int z = bz - p.left_d;
    const bool inside = x >= 0 && x < p.w && y >= 0 && y < p.h && z >= 0 && z < p.d;
    const float v = float(buffer_ld1(bottom_blob_data, inside ? q * p.cstep + (z * p.h + y) * p.w + x : 0));
    return inside ? v : (average == 1 ? 0.f : -3.402823466e+38f);
}

void main()
{
    const int x = int(gl_GlobalInvocationID.x);
    const int y = int(gl_GlobalInvocationID.y);
    const int zq = int(gl_GlobalInvocationID.z);
    const int z = zq % p.outd;
    const int q = zq / p.outd;
    if (x >= p.outw || y >= p.outh || q >= p.c)
        return;
    ivec3 from = ivec3(x * p.stride_w, y * p.stride_h, z * p.stride_d);
    ivec3 to = from + ivec3(p.kernel_w, p.kernel_h, p.kernel_d);
    if (mode == 1)
    {
        from = ivec3(0);
        to = ivec3(p.w, p.h, p.d);
    }
    if (mode == 2)
    {
        const ivec3 n = ivec3(p.w, p.h, p.d);
        const ivec3 o = ivec3(p.outw, p.outh, p.outd);
        const ivec3 j = ivec3(x, y, z);
        from = n * j / o;
        to = (n * (j + 1) + o - 1) / o;
    }
    const bool bordered = mode == 0;
    float r = average == 1 ? 0.f : (bordered ? value(q, from.x, from.y, from.z) : float(buffer_ld1(bottom_blob_data, q * p.cstep + (from.z * p.h + from.y) * p.w + from.x)));
    float area = 0.f;
    for (int bz = from.z; bz < to.z; bz++)
    {
        for (int by = from.y; by < to.y; by++)
        {
            for (int bx = from.x; bx < to.x; bx++)
            {
                const float v = bordered ? value(q, bx, by, bz) : float(buffer_ld1(bottom_blob_data, q * p.cstep + (bz * p.h + by) * p.w + bx));
                const bool counted = !bordered || include_pad == 1
                    || (bx >= p.from_w && bx < p.to_w && by >= p.from_h && by < p.to_h && bz >= p.from_d && bz < p.to_d);
                if (average == 1)
                {
                    r += counted ? v : 0.f;
                    area += counted ? 1.f : 0.f;
                }
                else
                {
                    r = max(r, v);
                }
            }
        }
    }
    if (average == 1)
    {
        if (mode == 2)
            r = r / float(to.y - from.y) / float(to.x - from.x) / float(to.z - from.z);
        else
            r /= area;
    }
    const int index = mode == 1 ? q : q * p.outcstep + (z * p.outh + y) * p.outw + x;
    buffer_st1(top_blob_data, index, afp(r));
}
