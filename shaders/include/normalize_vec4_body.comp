// The body of normalize_vec4.comp and normalize_vec4_subgroup.comp (the description is
// normalize_vec4.comp's); NORMALIZE_SUBGROUPS picks the workgroup sums.
layout (constant_id = 0) const int mode = 0;
layout (constant_id = 1) const int norm = 0;
layout (constant_id = 2) const int affine = 0;

// lanes per workgroup (at most 256): 256 when split, else as few as hold the group
layout (local_size_x_id = 3) in;
#define LANES int(gl_WorkGroupSize.x)
#define K 8
#define TILE (LANES * 4 * K)

// 1: each lane's vec4s of a tile lie in pairs, one 16-byte access of 8 fp16 values each (the
// runtime sets it for fp16 storage where every group starts on a multiple of 8 values): 8-byte
// accesses reach about two thirds of the memory's bandwidth on an H200
layout (constant_id = 4) const int wide = 0;

#if NCNN_fp16_storage
layout (binding = 0) readonly buffer bottom_blob { uvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { uvec4 top_blob_data[]; };
vec4 ld_vec4(int q)
{
    const uvec4 w = bottom_blob_data[q / 2];
    const uvec2 h = q % 2 == 0 ? w.xy : w.zw;
    return vec4(unpackHalf2x16(h.x), unpackHalf2x16(h.y));
}
void st_vec4(int q, vec4 v)
{
    top_blob_data[q / 2][(q % 2) * 2] = packHalf2x16(v.xy);
    top_blob_data[q / 2][(q % 2) * 2 + 1] = packHalf2x16(v.zw);
}
#else
layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
vec4 ld_vec4(int q)
{
    return vec4(buffer_ld4(bottom_blob_data, q));
}
void st_vec4(int q, vec4 v)
{
    buffer_st4(top_blob_data, q, afpvec4(v));
}
#endif
layout (binding = 2) readonly buffer affine_blob { sfpvec4 affine_data[]; };
layout (binding = 3) buffer partial_blob { vec2 partial_data[]; };

layout (push_constant) uniform parameter
{
    int outer_size[3];
    int outer_stride[3];
    int groups, n, segs, aff_div, aff_mod, aff_mul, aff_kind, beta_at;
    float eps;
} p;

shared float red[256];

const bool centered = norm == 0 || norm == 2 || norm == 3;

#ifdef NORMALIZE_SUBGROUPS
// subgroup sums, then one shared slot per subgroup: two barriers where the tree takes one per
// halving
float workgroup_sum(float v)
{
    v = subgroupAdd(v);
    if (gl_NumSubgroups == 1)
        return v;
    // the previous call's readers are done with the slots
    barrier();
    if (gl_SubgroupInvocationID == 0)
        red[gl_SubgroupID] = v;
    barrier();
    float r = 0.f;
    for (uint i = 0; i < gl_NumSubgroups; i++)
        r += red[i];
    return r;
}
#else
float workgroup_sum(float v)
{
    const int lx = int(gl_LocalInvocationID.x);
    red[lx] = v;
    barrier();
    for (int s = LANES / 2; s > 0; s /= 2)
    {
        if (lx < s)
            red[lx] += red[lx + s];
        barrier();
    }
    const float r = red[0];
    barrier();
    return r;
}
#endif

// where vec4 k of this lane's share of a tile starts, from the tile's start: in pairs one
// after another when wide, else a lane's vec4s LANES apart
int lane_at(int k, int lx)
{
    return wide == 1 ? ((k / 2) * LANES + lx) * 8 + (k % 2) * 4 : (k * LANES + lx) * 4;
}

// the vec4 index of the group's values j..j+3
int place(int base, int j)
{
    return (base + j) / 4;
}

// affine entry k (gamma, or beta from beta_at)
float entry(int k)
{
    return float(buffer_ld4(affine_data, k / 4)[k % 4]);
}

// the affine entries of values j..j+3 of group g from `from` (0 gamma, beta_at beta):
// aff_kind 1 one entry for all four, 2 four consecutive entries from a multiple of 4,
// 0 each its own
vec4 entries(int from, int g, int j)
{
    // kind 2 has a divisor of 1 and a modulus past the group: no divisions per value
    if (p.aff_kind == 2)
        return vec4(buffer_ld4(affine_data, (j + g * p.aff_mul + from) / 4));
    const int k = (j / p.aff_div) % p.aff_mod + g * p.aff_mul + from;
    if (p.aff_kind == 1)
        return vec4(entry(k));
    vec4 e;
    for (int c = 0; c < 4; c++)
        e[c] = entry(((j + c) / p.aff_div) % p.aff_mod + g * p.aff_mul + from);
    return e;
}

// x * a + b, then the affine of values j..j+3 of group g
vec4 finish(vec4 x, float a, float b, int g, int j)
{
    vec4 v = x * a + b;
    if (affine >= 1)
        v *= entries(0, g, j);
    if (affine == 2)
        v += entries(p.beta_at, g, j);
    return v;
}

// (a, b) of the group from its mean and sum of squared deviations
vec2 scaling(float mean, float m2)
{
    const float count = float(p.n);
    float a = 1.f;
    // the RMS norm's m2 is the sum of squares (its mean is taken as 0)
    if (norm == 0 || norm == 1)
        a = 1.f / sqrt(m2 / count + p.eps);
    else if (norm == 3)
        a = 1.f / (sqrt(m2 / count) + p.eps);
    else if (norm == 4)
        a = 1.f / sqrt(m2 + p.eps);
    else if (norm == 5)
        a = 1.f / max(sqrt(m2), p.eps);
    else if (norm == 6)
        a = 1.f / sqrt(max(m2, p.eps));
    return vec2(a, centered ? -mean * a : 0.f);
}

int walk(int i)
{
    const int d2 = i % p.outer_size[2];
    const int rest = i / p.outer_size[2];
    return (rest / p.outer_size[1]) * p.outer_stride[0] + (rest % p.outer_size[1]) * p.outer_stride[1] + d2 * p.outer_stride[2];
}

void main()
{
    const int lx = int(gl_LocalInvocationID.x);
    const int w = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    const int items = mode == 2 ? p.groups : p.groups * p.segs;
    // a workgroup shares w: all of it returns here or none, before any barrier
    if (w >= items)
        return;

    if (mode == 2)
    {
        const int g = w;
        float s = 0.f;
        for (int t = lx; t < p.segs; t += LANES)
        {
            const float cnt = float(min(TILE, p.n - t * TILE));
            s += partial_data[g * p.segs + t].x * cnt;
        }
        const float mean = centered ? workgroup_sum(s) / float(p.n) : 0.f;
        float m2 = 0.f;
        for (int t = lx; t < p.segs; t += LANES)
        {
            const vec2 part = partial_data[g * p.segs + t];
            const float cnt = float(min(TILE, p.n - t * TILE));
            const float d = part.x - mean;
            m2 += part.y + cnt * d * d;
        }
        m2 = workgroup_sum(m2);
        if (lx == 0)
            partial_data[p.groups * p.segs + g] = scaling(mean, m2);
        return;
    }

    const int g = w / p.segs;
    const int s = w % p.segs;
    const int base = walk(g);
    const int first = s * TILE;
    const int end = min(first + TILE, p.n);

    if (mode == 3)
    {
        const vec2 ab = partial_data[p.groups * p.segs + g];
        [[unroll]] for (int k = 0; k < K; k++)
        {
            const int j = first + lane_at(k, lx);
#if NCNN_fp16_storage
            if (wide == 1)
            {
                if (k % 2 == 0 && j < end)
                {
                    const uvec4 u = bottom_blob_data[(base + j) / 8];
                    const vec4 a = finish(vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y)), ab.x, ab.y, g, j);
                    const vec4 b = finish(vec4(unpackHalf2x16(u.z), unpackHalf2x16(u.w)), ab.x, ab.y, g, j + 4);
                    top_blob_data[(base + j) / 8] = uvec4(packHalf2x16(a.xy), packHalf2x16(a.zw), packHalf2x16(b.xy), packHalf2x16(b.zw));
                }
                continue;
            }
#endif
            if (j < end)
            {
                const int q = place(base, j);
                st_vec4(q, finish(ld_vec4(q), ab.x, ab.y, g, j));
            }
        }
        return;
    }

    vec4 x[K];
    [[unroll]] for (int k = 0; k < K; k++)
    {
        const int j = first + lane_at(k, lx);
#if NCNN_fp16_storage
        if (wide == 1)
        {
            if (k % 2 == 0)
            {
                const uvec4 u = j < end ? bottom_blob_data[(base + j) / 8] : uvec4(0);
                x[k] = vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y));
                x[k + 1] = vec4(unpackHalf2x16(u.z), unpackHalf2x16(u.w));
            }
            continue;
        }
#endif
        x[k] = j < end ? ld_vec4(place(base, j)) : vec4(0.f);
    }
    float s1 = 0.f;
    [[unroll]] for (int k = 0; k < K; k++)
        s1 += (x[k].x + x[k].y) + (x[k].z + x[k].w);
    const float count = float(end - first);
    const float mean = centered ? workgroup_sum(s1) / count : 0.f;
    float s2 = 0.f;
    [[unroll]] for (int k = 0; k < K; k++)
    {
        const int j = first + lane_at(k, lx);
        if (j < end)
        {
            const vec4 d = x[k] - mean;
            s2 += dot(d, d);
        }
    }
    const float m2 = workgroup_sum(s2);

    if (mode == 1)
    {
        if (lx == 0)
            partial_data[w] = vec2(mean, m2);
        return;
    }

    const vec2 ab = scaling(mean, m2);
    [[unroll]] for (int k = 0; k < K; k++)
    {
        const int j = first + lane_at(k, lx);
#if NCNN_fp16_storage
        if (wide == 1)
        {
            if (k % 2 == 0 && j < end)
            {
                const vec4 a = finish(x[k], ab.x, ab.y, g, j);
                const vec4 b = finish(x[k + 1], ab.x, ab.y, g, j + 4);
                top_blob_data[(base + j) / 8] = uvec4(packHalf2x16(a.xy), packHalf2x16(a.zw), packHalf2x16(b.xy), packHalf2x16(b.zw));
            }
            continue;
        }
#endif
        if (j < end)
            st_vec4(place(base, j), finish(x[k], ab.x, ab.y, g, j));
    }
}
