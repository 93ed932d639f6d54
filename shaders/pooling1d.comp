// Pooling1D, pack1 buffers: output value j of row q, the max or the average of its window of
// the row (mode 0: kernel taps `stride` apart over the row bordered by `left` steps before
// it, the max's padding -FLT_MAX, the average's 0; mode 1: the whole row; mode 2: adaptive
// windows [⌊w·j/n⌋, ⌈w·(j+1)/n⌉)). An average leaving out the padding counts the bordered
// steps in [count_from, count_to). Sums in fp32. Dispatch [n, rows, 1].
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int average = 0;
layout (constant_id = 1) const int mode = 0;
layout (constant_id = 2) const int include_pad = 0;

layout (local_size_x = 64, local_size_y = 4) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int w, h, c, cstep, outw, outh, outc, outcstep;
    int kernel_w, stride_w, left, n, count_from, count_to;
} p;

// step i of row q, or the padding's value outside the row
float value(int q, int sx)
{
    const int i = sx - p.left;
    const bool inside = i >= 0 && i < p.w;
    const float v = float(buffer_ld1(bottom_blob_data, q * p.cstep + (inside ? i : 0)));
    return inside ? v : (average == 1 ? 0.f : -3.402823466e+38f);
}

void main()
{
    const int j = int(gl_GlobalInvocationID.x);
    const int q = int(gl_GlobalInvocationID.y);
    if (j >= p.n || q >= p.c)
        return;

    int from = 0;
    int to = p.w;
    if (mode == 0)
    {
        from = j * p.stride_w;
        to = from + p.kernel_w;
    }
    if (mode == 2)
    {
        from = p.w * j / p.n;
        to = (p.w * (j + 1) + p.n - 1) / p.n;
    }
    float r = value(q, from);
    float area = 0.f;
    if (average == 1)
        r = 0.f;
    for (int sx = from; sx < to; sx++)
    {
        const float v = mode == 0 ? value(q, sx) : float(buffer_ld1(bottom_blob_data, q * p.cstep + sx));
        const bool counted = mode != 0 || include_pad == 1 || (sx >= p.count_from && sx < p.count_to);
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
    if (average == 1)
        r /= area;
    const int index = mode == 1 ? q : q * p.outcstep + j;
    buffer_st1(top_blob_data, index, afp(r));
}
