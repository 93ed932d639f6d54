// The pooling shaders' body, for the including file's PACK (1 or 4, include/packed_names.comp).
// pooling_type 0 max, 1 average. Windows run over the padded input: the data sits at
// (pad_left, pad_top) of it; averages divide by kernel_w * kernel_h with include_pad, else by
// the positions inside the frame [frame_left, frame_right) x [frame_top, frame_bottom) of the
// padded input (ncnn's count: inside the parameter pads and the tail pad; in the "same" pad
// modes the frame holds the modes' own padding). global: one window over the whole plane, in
// one pass (a workgroup per channel: `stage` 0) or, on planes large enough that a workgroup
// per channel leaves most of the GPU idle, in two: `slabs` workgroups per channel each reduce
// a slab of the plane into fp32 partials (stage 1, binding 2), then a workgroup per channel
// reduces those (stage 2); adaptive: output i covers [i * h / outh, ceil((i + 1) * h / outh)).

#include "packed_names.comp"

layout (binding = 0) readonly buffer bottom_blob { sfpN bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpN top_blob_data[]; };

// the arithmetic type, the fp32 type global pooling sums in, and one element in and out
#define T afpN
#define F fpN
#define LOAD(i) buffer_ldN(bottom_blob_data, i)
#define STORE(i, v) buffer_stN(top_blob_data, i, v)

layout (constant_id = 0) const int pooling_type = 0;
layout (constant_id = 1) const int kernel_w = 1;
layout (constant_id = 2) const int kernel_h = 1;
layout (constant_id = 3) const int stride_w = 1;
layout (constant_id = 4) const int stride_h = 1;
layout (constant_id = 5) const int include_pad = 0;
layout (constant_id = 6) const int global_pooling = 0;
layout (constant_id = 7) const int adaptive_pooling = 0;

// pads depend on the input's size in the "same" modes: push constants, with the shapes
layout (push_constant) uniform parameter
{
    int w, h, c, cstep, outw, outh, outc, outcstep, pad_left, pad_top, frame_left, frame_top;
    int frame_right, frame_bottom, stage, slabs;
} p;

layout (binding = 2) buffer partial_blob { F partial_data[]; };

#define LANES 64
layout (local_size_x = LANES) in;
shared F partial[LANES];

F pool2(F a, F b)
{
    return pooling_type == 0 ? max(a, b) : a + b;
}

void main()
{
    GLOBAL_XYZ;

    if (global_pooling == 1)
    {
        // dispatch [LANES * slabs, 1, c] in stage 1, [LANES, 1, c] otherwise: the invocations
        // of a workgroup stride over their range together (coalesced) and reduce in shared
        // memory, in fp32
        if (gz >= p.outc)
            return;
        const int lx = int(gl_LocalInvocationID.x);
        const int plane = p.w * p.h;
        int begin = 0;
        int end = plane;
        if (p.stage == 1)
        {
            const int slab = (plane + p.slabs - 1) / p.slabs;
            begin = int(gl_WorkGroupID.x) * slab;
            end = min(begin + slab, plane);
        }
        else if (p.stage == 2)
        {
            end = p.slabs;
        }
        F acc = F(pooling_type == 0 ? -3.402823466e+38f : 0.f);
        for (int i = begin + lx; i < end; i += LANES)
        {
            const F v = p.stage == 2 ? partial_data[gz * p.slabs + i] : F(LOAD(gz * p.cstep + i));
            acc = pool2(acc, v);
        }
        partial[lx] = acc;
        barrier();
        for (int s = LANES / 2; s > 0; s >>= 1)
        {
            if (lx < s)
                partial[lx] = pool2(partial[lx], partial[lx + s]);
            barrier();
        }
        if (lx == 0)
        {
            if (p.stage == 1)
            {
                partial_data[gz * p.slabs + int(gl_WorkGroupID.x)] = partial[0];
            }
            else
            {
                const F res = pooling_type == 0 ? partial[0] : partial[0] / float(plane);
                STORE(gz, T(res));
            }
        }
        return;
    }

    if (gx >= p.outw || gy >= p.outh || gz >= p.outc)
        return;

    // the window in input coordinates, clipped to the data
    int x0, x1, y0, y1;
    if (global_pooling == 1)
    {
        x0 = 0; x1 = p.w; y0 = 0; y1 = p.h;
    }
    else if (adaptive_pooling == 1)
    {
        x0 = gx * p.w / p.outw;
        x1 = ((gx + 1) * p.w + p.outw - 1) / p.outw;
        y0 = gy * p.h / p.outh;
        y1 = ((gy + 1) * p.h + p.outh - 1) / p.outh;
    }
    else
    {
        x0 = gx * stride_w - p.pad_left;
        y0 = gy * stride_h - p.pad_top;
        x1 = x0 + kernel_w;
        y1 = y0 + kernel_h;
    }
    const int cx0 = max(x0, 0);
    const int cx1 = min(x1, p.w);
    const int cy0 = max(y0, 0);
    const int cy1 = min(y1, p.h);

    // fp16 cannot hold fp32's lowest value; the first element seeds the maximum instead
    T res = T(0.f);
    bool seeded = false;
    const int base = gz * p.cstep;
    for (int y = cy0; y < cy1; y++)
    {
        for (int x = cx0; x < cx1; x++)
        {
            const T v = LOAD(base + y * p.w + x);
            if (pooling_type == 0)
                res = seeded ? max(res, v) : v;
            else
                res += v;
            seeded = true;
        }
    }

    // a window wholly in the padding: the maximum of nothing, as the CPU path gives it
    if (pooling_type == 0 && !seeded)
        res = T(uintBitsToFloat(0xff800000u));

    if (pooling_type == 1)
    {
        int count;
        if (global_pooling == 1 || adaptive_pooling == 1)
            count = (x1 - x0) * (y1 - y0);
        else if (include_pad == 1)
            count = kernel_w * kernel_h;
        else
        {
            // the window in padded coordinates against the parameter pads' frame
            const int px0 = x0 + p.pad_left;
            const int py0 = y0 + p.pad_top;
            const int fw = min(px0 + kernel_w, p.frame_right) - max(px0, p.frame_left);
            const int fh = min(py0 + kernel_h, p.frame_bottom) - max(py0, p.frame_top);
            count = max(fw, 0) * max(fh, 0);
        }
        res /= afp(max(count, 1));
    }

    STORE(gz * p.outcstep + gy * p.outw + gx, res);
}
