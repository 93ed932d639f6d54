// The normalizations (LayerNorm, RMSNorm, GroupNorm, InstanceNorm, MVN, Normalize) over
// groups that are contiguous runs of whole vec4s of a pack1 buffer blob whose channels lie back
// to back (logical index is physical): group g's value j at walk(g) + j, walk(g) from the
// outer sizes and strides a multiple of 4. The host picks this shader only where that holds;
// reduce.comp takes the rest.
//
// A tile is TILE values of a group, held in registers by one workgroup (4 * K per lane). Statistics are a
// mean and the sum of squared deviations from it (two passes over the registers, as the CPU's
// two passes over memory), in fp32 whatever the storage. Norms that do not center (RMS, L2)
// take the mean as 0, so the sum is of squares. The specialization constant `mode`:
// - 0: a group is one tile: statistics, then every value normalized, reading memory once.
// - 1: tile s of group g writes its mean and squared-deviation sum to partials[g * segs + s].
// - 2: one workgroup per group combines its segs partials (Chan's parallel variance) into
//   the scale a and offset b, written at partials[groups * segs + g].
// - 3: tile s of group g: every value x becomes x * a + b, then gamma and beta.
// `norm` and `affine` are reduce.comp's.
#version 450

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif

layout (constant_id = 0) const int mode = 0;
layout (constant_id = 1) const int norm = 0;
layout (constant_id = 2) const int affine = 0;

// lanes per workgroup (at most 256): 256 when split, else as few as hold the group
layout (local_size_x_id = 3) in;
#define LANES int(gl_WorkGroupSize.x)
#define K 8
#define TILE (LANES * 4 * K)

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
layout (binding = 2) readonly buffer affine_blob { sfpvec4 affine_data[]; };
layout (binding = 3) buffer partial_blob { vec2 partial_data[]; };

layout (push_constant) uniform parameter
{
    int outer_size[3];
    int outer_stride[3];
    int groups;
    int n;
    int segs;
    int aff_div;
    int aff_mod;
    int aff_mul;
    int aff_kind;
    int beta_at;
    float eps;
} p;

shared float red[256];

const bool centered = norm == 0 || norm == 2 || norm == 3;

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
    const int k = (j / p.aff_div) % p.aff_mod + g * p.aff_mul + from;
    if (p.aff_kind == 1)
        return vec4(entry(k));
    if (p.aff_kind == 2)
        return vec4(buffer_ld4(affine_data, k / 4));
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
        for (int k = 0; k < K; k++)
        {
            const int j = first + (k * LANES + lx) * 4;
            if (j < end)
            {
                const int q = place(base, j);
                const vec4 x = vec4(buffer_ld4(bottom_blob_data, q));
                buffer_st4(top_blob_data, q, afpvec4(finish(x, ab.x, ab.y, g, j)));
            }
        }
        return;
    }

    vec4 x[K];
    float s1 = 0.f;
    for (int k = 0; k < K; k++)
    {
        const int j = first + (k * LANES + lx) * 4;
        x[k] = j < end ? vec4(buffer_ld4(bottom_blob_data, place(base, j))) : vec4(0.f);
        s1 += (x[k].x + x[k].y) + (x[k].z + x[k].w);
    }
    const float count = float(end - first);
    const float mean = centered ? workgroup_sum(s1) / count : 0.f;
    float s2 = 0.f;
    for (int k = 0; k < K; k++)
    {
        const int j = first + (k * LANES + lx) * 4;
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
    for (int k = 0; k < K; k++)
    {
        const int j = first + (k * LANES + lx) * 4;
        if (j < end)
            buffer_st4(top_blob_data, place(base, j), afpvec4(finish(x[k], ab.x, ab.y, g, j)));
    }
}
