// LRN on pack1 buffer blobs: top = bottom * (bias + alpha * sum / n)^-beta, the sum of
// squares over the local_size channels around (region 0, n = local_size) or the
// local_size x local_size window around (region 1, n = local_size^2), zeros outside.
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int region_type = 0;
layout (constant_id = 1) const int local_size = 5;
layout (constant_id = 2) const float alpha = 1.f;
layout (constant_id = 3) const float beta = 0.75f;
layout (constant_id = 4) const float bias = 1.f;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int w, h, c, cstep;
} p;

void main()
{
    GLOBAL_XYZ;

    if (gx >= p.w || gy >= p.h || gz >= p.c)
        return;

    const int half_size = local_size / 2;
    float sum = 0.f;
    float n;
    if (region_type == 0)
    {
        const int lo = max(gz - half_size, 0);
        const int hi = min(gz + local_size - half_size, p.c);
        for (int k = lo; k < hi; k++)
        {
            const float v = float(buffer_ld1(bottom_blob_data, k * p.cstep + gy * p.w + gx));
            sum += v * v;
        }
        n = float(local_size);
    }
    else
    {
        for (int y = max(gy - half_size, 0); y < min(gy + local_size - half_size, p.h); y++)
        {
            for (int x = max(gx - half_size, 0); x < min(gx + local_size - half_size, p.w); x++)
            {
                const float v = float(buffer_ld1(bottom_blob_data, gz * p.cstep + y * p.w + x));
                sum += v * v;
            }
        }
        n = float(local_size * local_size);
    }

    const int gi = gz * p.cstep + gy * p.w + gx;
    const float v = float(buffer_ld1(bottom_blob_data, gi));
    buffer_st1(top_blob_data, gi, afp(v * pow(bias + alpha * sum / n, -beta)));
}
