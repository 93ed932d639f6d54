// The softmax shaders' body, for one packing: `F` (the fp32 compute type), `LOAD(i)` (as F),
// `STORE(i, v)`, `LANES_MAX(v)` and `LANES_SUM(v)` (across a packed element's lanes). In
// place along one axis of the 3-D view, the specialization constant `axis`:
// - 0 (w, contiguous): one workgroup per row; its invocations stride along the row together
//   (coalesced), keep rows of up to CACHED * LANES values in registers, and reduce in shared
//   memory. Dispatch [LANES, h, c].
// - 1 (h) and 2 (c, the packed axis): one invocation per line, looping along it; neighbours
//   walk neighbouring lines (coalesced). Dispatch [w, 1, c * d] or [w, h, 1]. Along h the
//   view's rows may be `d` slabs (a 4-D blob's h × d rows): each slab's columns are lines. Along c the lanes
//   of an element lie on the same line, so its max and sum also reduce across lanes.
// - 3 (c, when it is the only line: 1-D blobs, a classifier's output): one workgroup on the
//   line, as along w, and across lanes. One invocation looping over a 1000-class line
//   took 50 us on an H200. Dispatch [LANES, 1, 1].
// Sums and exponentials are fp32: fp16 overflows the sum of long rows.

layout (constant_id = 0) const int axis = 0;

layout (push_constant) uniform parameter
{
    int w, h, c, cstep, d;
} p;

#define LANES 256
#define CACHED 8
layout (local_size_x = LANES) in;
shared F partial[LANES];

void main()
{
    GLOBAL_XYZ;

    if (axis == 0 || axis == 3)
    {
        // a workgroup shares gy and gz: all of it returns here or none, before any barrier
        if (axis == 0 && (gy >= p.h || gz >= p.c))
            return;

        const int lx = int(gl_LocalInvocationID.x);
        const int base = axis == 0 ? gz * p.cstep + gy * p.w : 0;
        const int stride = axis == 0 ? 1 : p.cstep;
        const int n = axis == 0 ? p.w : p.c;
        // rows up to CACHED * LANES long stay in registers: one read and one write per value
        const bool cached = n <= CACHED * LANES;

        F v[CACHED];
        F m = F(-3.402823466e+38f);
        if (cached)
        {
            for (int j = 0; j < CACHED; j++)
            {
                const int x = lx + j * LANES;
                v[j] = x < n ? LOAD(base + x * stride) : F(-3.402823466e+38f);
                m = max(m, v[j]);
            }
        }
        else
        {
            for (int x = lx; x < n; x += LANES)
                m = max(m, LOAD(base + x * stride));
        }
        partial[lx] = m;
        barrier();
        for (int s = LANES / 2; s > 0; s >>= 1)
        {
            if (lx < s)
                partial[lx] = max(partial[lx], partial[lx + s]);
            barrier();
        }
        m = partial[0];
        if (axis == 3)
            m = F(LANES_MAX(m));
        barrier();

        F sum = F(0.f);
        if (cached)
        {
            for (int j = 0; j < CACHED; j++)
            {
                v[j] = lx + j * LANES < n ? exp(v[j] - m) : F(0.f);
                sum += v[j];
            }
        }
        else
        {
            for (int x = lx; x < n; x += LANES)
                sum += exp(LOAD(base + x * stride) - m);
        }
        partial[lx] = sum;
        barrier();
        for (int s = LANES / 2; s > 0; s >>= 1)
        {
            if (lx < s)
                partial[lx] += partial[lx + s];
            barrier();
        }
        sum = partial[0];
        if (axis == 3)
            sum = F(LANES_SUM(sum));

        if (cached)
        {
            for (int j = 0; j < CACHED; j++)
            {
                const int x = lx + j * LANES;
                if (x < n)
                    STORE(base + x * stride, v[j] / sum);
            }
        }
        else
        {
            for (int x = lx; x < n; x += LANES)
                STORE(base + x * stride, exp(LOAD(base + x * stride) - m) / sum);
        }
        return;
    }

    int base;
    int stride;
    int n;
    if (axis == 1)
    {
        if (gx >= p.w || gz >= p.c * p.d)
            return;
        n = p.h / p.d;
        base = (gz / p.d) * p.cstep + (gz % p.d) * n * p.w + gx;
        stride = p.w;
    }
    else
    {
        if (gx >= p.w || gy >= p.h)
            return;
        base = gy * p.w + gx;
        stride = p.cstep;
        n = p.c;
    }

    F m = F(-3.402823466e+38f);
    for (int k = 0; k < n; k++)
        m = max(m, LOAD(base + k * stride));
    if (axis == 2)
        m = F(LANES_MAX(m));

    F sum = F(0.f);
    for (int k = 0; k < n; k++)
        sum += exp(LOAD(base + k * stride) - m);
    if (axis == 2)
        sum = F(LANES_SUM(sum));

    for (int k = 0; k < n; k++)
        STORE(base + k * stride, exp(LOAD(base + k * stride) - m) / sum);
}
