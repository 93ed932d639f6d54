// LRN on pack4 buffer blobs (lrn.comp's math, one block of 4 channels per invocation): top =
// bottom * (bias + alpha * sum / n)^-beta, the sum of squares over the local_size channels
// around (region 0, n = local_size: the blocks the four channels' ranges touch, each lane
// taking the channels in its own range) or the local_size x local_size window around (region
// 1, n = local_size^2), zeros outside. Channels are c blocks of 4, all real (the net packs
// whole blocks only).
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int region_type = 0;
layout (constant_id = 1) const int local_size = 5;
layout (constant_id = 2) const float alpha = 1.f;
layout (constant_id = 3) const float beta = 0.75f;
layout (constant_id = 4) const float bias = 1.f;

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };

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
    const int at = gy * p.w + gx;
    vec4 sum = vec4(0.f);
    float n;
    if (region_type == 0)
    {
        // lane l (channel c0 + l) sums channels c0 + l - half_size .. c0 + l + local_size -
        // half_size - 1 that exist
        const int c0 = gz * 4;
        const int first = max(c0 - half_size, 0) / 4;
        const int last = min(c0 + 3 + local_size - half_size, p.c * 4) - 1;
        for (int b = first; b <= last / 4; b++)
        {
            const vec4 v = vec4(buffer_ld4(bottom_blob_data, b * p.cstep + at));
            const vec4 sq = v * v;
            for (int j = 0; j < 4; j++)
            {
                // lanes whose range holds channel k: k - lane in [c0 - half, c0 - half + local)
                const int d = b * 4 + j - c0 + half_size;
                const vec4 lane = vec4(0.f, 1.f, 2.f, 3.f);
                const vec4 inside = step(lane, vec4(float(d))) * step(vec4(float(d - local_size + 1)), lane);
                sum += inside * sq[j];
            }
        }
        n = float(local_size);
    }
    else
    {
        const int base = gz * p.cstep;
        for (int y = max(gy - half_size, 0); y < min(gy + local_size - half_size, p.h); y++)
        {
            for (int x = max(gx - half_size, 0); x < min(gx + local_size - half_size, p.w); x++)
            {
                const vec4 v = vec4(buffer_ld4(bottom_blob_data, base + y * p.w + x));
                sum += v * v;
            }
        }
        n = float(local_size * local_size);
    }

    const int gi = gz * p.cstep + at;
    const vec4 v = vec4(buffer_ld4(bottom_blob_data, gi));
    buffer_st4(top_blob_data, gi, afpvec4(v * pow(vec4(bias) + alpha * sum / n, vec4(-beta))));
}
