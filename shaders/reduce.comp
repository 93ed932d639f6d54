// Reductions over groups of a pack1 buffer blob's values, one workgroup per group: Reduction,
// LayerNorm, GroupNorm, InstanceNorm, RMSNorm, MVN, Normalize, StatisticsPooling and
// CumulativeSum. Values have logical indices (numpy order; a 3-D blob keeps channels cstep
// apart, so logical index L lies at (L / plane) * cstep + L % plane). Group g's element j lies
// at logical index outer(g) + inner(j), each a sum of digits times strides over three axes.
// Sums are fp32 whatever the storage.
//
// The specialization constant `mode`:
// - 0 (reduce): one value per group, `op` as ncnn's Reduction numbers them (0 sum, 1 asum,
//   2 sumsq, 3 mean, 4 max, 5 min, 6 prod, 7 L1, 8 L2, 9 log sum, 10 log sum exp) and 11 the
//   standard deviation; times `coeff`; written at logical index dst_offset + g of the output.
// - 1 (normalize): every value x of the group written as (x * a + b) * gamma + beta at its own
//   logical index of the output, with a and b from `norm`: 0 (x - mean) / sqrt(var + eps),
//   1 x / sqrt(mean(x^2) + eps), 2 x - mean, 3 (x - mean) / (sqrt(var) + eps), 4..6 x over the
//   root of the sum of squares as Normalize's eps modes 0..2 take it. gamma and beta come
//   from the affine buffer (`affine`: 0 none, 1 gamma, 2 gamma and beta at beta_at), at
//   index (j / aff_div) % aff_mod + g * aff_mul.
// - 2 (scan): the running sum along each group, written at each value's place.
// - 3 (int8): every value rounded to its int8 level with ncnn's dynamic scale of the group
//   (127 / absmax, 1 for a group of zeros; levels clamped to +-127, halves away from zero),
//   written at its own place, and the group's descale 1 / scale as fp32 at dst_offset + g of
//   the side buffer (the int8 Gemm's operands; other modes bind any buffer there).
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int mode = 0;
layout (constant_id = 1) const int op = 0;
layout (constant_id = 2) const int norm = 0;
layout (constant_id = 3) const int affine = 0;

#define LANES 256
layout (local_size_x = LANES) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
layout (binding = 2) readonly buffer affine_blob { sfp affine_data[]; };
layout (binding = 3) writeonly buffer side_blob { float side_data[]; };

layout (push_constant) uniform parameter
{
    int outer_size[3];
    int outer_stride[3];
    int inner_size[3];
    int inner_stride[3];
    int groups, n, src_plane, src_cstep, dst_plane, dst_cstep, dst_offset, aff_div, aff_mod;
    int aff_mul, beta_at;
    float eps, coeff;
} p;

shared float partial[LANES];

int physical(int l, int plane, int cstep)
{
    return (l / plane) * cstep + l % plane;
}

int walk(int i, int size0, int size1, int size2, int stride0, int stride1, int stride2)
{
    const int d2 = i % size2;
    const int rest = i / size2;
    return (rest / size1) * stride0 + (rest % size1) * stride1 + d2 * stride2;
}

int inner_at(int j)
{
    return walk(j, p.inner_size[0], p.inner_size[1], p.inner_size[2], p.inner_stride[0], p.inner_stride[1], p.inner_stride[2]);
}

float load(int base, int j)
{
    return float(buffer_ld1(bottom_blob_data, physical(base + inner_at(j), p.src_plane, p.src_cstep)));
}

// what one value adds to an accumulator, and how two accumulators combine
float accumulate(float acc, float x, int o)
{
    if (o == 1 || o == 7) return acc + abs(x);
    if (o == 12) return max(acc, abs(x));
    if (o == 2 || o == 8) return acc + x * x;
    if (o == 4) return max(acc, x);
    if (o == 5) return min(acc, x);
    if (o == 6) return acc * x;
    if (o == 10) return acc + exp(x);
    return acc + x;
}

float combine(float a, float b, int o)
{
    if (o == 4 || o == 12) return max(a, b);
    if (o == 5) return min(a, b);
    if (o == 6) return a * b;
    return a + b;
}

float identity(int o)
{
    if (o == 4) return -3.402823466e+38f;
    if (o == 5) return 3.402823466e+38f;
    if (o == 6) return 1.f;
    return 0.f;
}

// the whole workgroup's accumulator of `o` over the group (every invocation gets it);
// with `center`, over the squares of the values minus `center`
float reduce_group(int base, int o, bool centered, float center)
{
    const int lx = int(gl_LocalInvocationID.x);
    float acc = identity(o);
    for (int j = lx; j < p.n; j += LANES)
    {
        float x = load(base, j);
        if (centered)
        {
            x -= center;
            x = x * x;
        }
        acc = accumulate(acc, x, o);
    }
    partial[lx] = acc;
    barrier();
    for (int s = LANES / 2; s > 0; s /= 2)
    {
        if (lx < s)
            partial[lx] = combine(partial[lx], partial[lx + s], o);
        barrier();
    }
    const float r = partial[0];
    barrier();
    return r;
}

void main()
{
    const int g = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    // a workgroup shares g: all of it returns here or none, before any barrier
    if (g >= p.groups)
        return;

    const int lx = int(gl_LocalInvocationID.x);
    const int base = walk(g, p.outer_size[0], p.outer_size[1], p.outer_size[2], p.outer_stride[0], p.outer_stride[1], p.outer_stride[2]);
    const float count = float(p.n);

    if (mode == 0)
    {
        float v;
        if (op == 11)
        {
            const float mean = reduce_group(base, 0, false, 0.f) / count;
            v = sqrt(reduce_group(base, 0, true, mean) / count);
        }
        else
        {
            v = reduce_group(base, op, false, 0.f);
            if (op == 9 || op == 10)
                v = log(v);
            if (op == 8)
                v = sqrt(v < 1.175494351e-38f ? 0.f : v);
            if (op == 3)
                v /= count;
        }
        if (lx == 0)
            buffer_st1(top_blob_data, physical(p.dst_offset + g, p.dst_plane, p.dst_cstep), afp(v * p.coeff));
        return;
    }

    if (mode == 2)
    {
        // each invocation sums its own run of the line; the runs' running sums then take
        // log2(LANES) steps of the workgroup (each adds the sum `d` runs back), where adding
        // up every run before one's own took each invocation up to LANES steps
        const int chunk = (p.n + LANES - 1) / LANES;
        const int start = min(lx * chunk, p.n);
        const int end = min(start + chunk, p.n);
        float s = 0.f;
        for (int j = start; j < end; j++)
            s += load(base, j);
        partial[lx] = s;
        barrier();
        for (int d = 1; d < LANES; d *= 2)
        {
            const float back = lx >= d ? partial[lx - d] : 0.f;
            barrier();
            partial[lx] += back;
            barrier();
        }
        float before = lx > 0 ? partial[lx - 1] : 0.f;
        for (int j = start; j < end; j++)
        {
            before += load(base, j);
            const int l = base + inner_at(j);
            buffer_st1(top_blob_data, physical(l, p.dst_plane, p.dst_cstep), afp(before));
        }
        return;
    }

    if (mode == 3)
    {
        // op 12: the largest magnitude
        const float absmax = reduce_group(base, 12, false, 0.f);
        const float s = absmax == 0.f ? 1.f : 127.f / absmax;
        for (int j = lx; j < p.n; j += LANES)
        {
            const int l = base + inner_at(j);
            const float x = float(buffer_ld1(bottom_blob_data, physical(l, p.src_plane, p.src_cstep))) * s;
            const float level = clamp(sign(x) * floor(abs(x) + 0.5f), -127.f, 127.f);
            buffer_st1(top_blob_data, physical(l, p.dst_plane, p.dst_cstep), afp(level));
        }
        if (lx == 0)
            side_data[p.dst_offset + g] = 1.f / s;
        return;
    }

    float a = 1.f;
    float b = 0.f;
    if (norm == 1)
    {
        a = 1.f / sqrt(reduce_group(base, 2, false, 0.f) / count + p.eps);
    }
    else if (norm >= 4)
    {
        const float ssum = reduce_group(base, 2, false, 0.f);
        if (norm == 4)
            a = 1.f / sqrt(ssum + p.eps);
        else if (norm == 5)
            a = 1.f / max(sqrt(ssum), p.eps);
        else
            a = 1.f / sqrt(max(ssum, p.eps));
    }
    else
    {
        const float mean = reduce_group(base, 0, false, 0.f) / count;
        if (norm == 0 || norm == 3)
        {
            const float var = reduce_group(base, 0, true, mean) / count;
            a = norm == 0 ? 1.f / sqrt(var + p.eps) : 1.f / (sqrt(var) + p.eps);
        }
        b = -mean * a;
    }

    for (int j = lx; j < p.n; j += LANES)
    {
        const int l = base + inner_at(j);
        float v = float(buffer_ld1(bottom_blob_data, physical(l, p.src_plane, p.src_cstep))) * a + b;
        if (affine >= 1)
        {
            const int k = (j / p.aff_div) % p.aff_mod + g * p.aff_mul;
            v *= float(buffer_ld1(affine_data, k));
            if (affine == 2)
                v += float(buffer_ld1(affine_data, p.beta_at + k));
        }
        buffer_st1(top_blob_data, physical(l, p.dst_plane, p.dst_cstep), afp(v));
    }
}
