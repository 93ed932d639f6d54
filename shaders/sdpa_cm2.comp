// sdpa_cm.comp with VK_NV_cooperative_matrix2's operations on its subgroup matrices (flash
// attention): the same attention, operands, push constants, mask, workgroups and staged K and
// V tiles, for a device opened with the extension's reductions, per-element operations and
// conversions.
//
// The scores never leave the accumulators: scale, mask and the keys past `dst` are a
// per-element function of them; the row's maximum and sum are row reductions whose result
// holds each row's value in all its elements, so that the running output, in accumulators too,
// is rescaled row by row by a per-element product; the probabilities become fp16 A operands
// by conversion. sdpa_cm instead takes each block's scores and products through shared memory,
// because a KHR accumulator's elements cannot be told apart by row. The loop is pipelined: a
// block's scores are taken in the iteration before its softmax, beside the previous block's
// softmax and values, so that the tensor cores' products and the exponents and reductions
// overlap (K is staged in two blocks, V in three, one barrier per block). The output goes
// through a subgroup's scratch once, at the end, in the K tiles.
// Where a head's rows are few workgroups for the device (`splits` > 1), each workgroup takes
// one part of the key blocks and writes its normalized rows in fp32 with their log-sum-exp
// into `part_data` (per head and part: rows padded to 64, then the log-sum-exps after all of
// them); sdpa_combine.comp weighs the parts into the output.
// Dispatch: global [128, ceil(src / 64), heads · splits].
#version 450

#include "prelude_coopmat.comp"
#extension GL_NV_cooperative_matrix2: require
#extension GL_EXT_shader_explicit_arithmetic_types_int32: require

#include "sdpa_cm_stage.comp"

// K in two blocks (the scores of the block staged last are taken while the one before is
// multiplied by its values), V in three (the block being staged must not be the one a slower
// subgroup still multiplies)
shared uvec4 tile_k[2 * STAGE];
shared uvec4 tile_v[3 * STAGE];

// the parts' rows and log-sum-exps where splits > 1 (any buffer otherwise)
layout (binding = 5) writeonly buffer part_blob { float part_data[]; };

// 1 where there is no mask, the scale is positive and the keys fill whole blocks: the scores
// skip their per-element pass and the scale rides in the exponent (the row maxima of the raw
// scores are those of the scaled ones)
layout (constant_id = 3) const int folded = 0;

const float LOWEST = -3.402823466e+38;

// The scaled score of query row0 + r and key j0 + c with its mask added; the lowest value for
// keys past dst (their staged rows are zeros).
float score(const in uint32_t r, const in uint32_t c, const in float s, const in int row0, const in int j0, const in int mbase)
{
    const int row = row0 + int(r);
    const int col = j0 + int(c);
    if (col >= p.dst)
        return LOWEST;
    float x = s * p.scale;
    if (attn_mask == 1 && row < p.src)
        x += float(buffer_ld1(mask_data, mbase + row * p.dst + col));
    return x;
}

float max_of(const in float a, const in float b)
{
    return max(a, b);
}

float sum_of(const in float a, const in float b)
{
    return a + b;
}

float max_with(const in uint32_t r, const in uint32_t c, const in float x, const in float y)
{
    return max(x, y);
}

float plus(const in uint32_t r, const in uint32_t c, const in float x, const in float y)
{
    return x + y;
}

float times(const in uint32_t r, const in uint32_t c, const in float x, const in float y)
{
    return x * y;
}

// exp(x - m) (times the scale where folded), and 0 on a row whose maximum is still the lowest
// (every key so far masked)
float exp_below(const in uint32_t r, const in uint32_t c, const in float x, const in float m)
{
    return m == LOWEST ? 0.f : exp((x - m) * (folded == 1 ? p.scale : 1.f));
}

// l · alpha + the block's sum
float rescaled_sum(const in uint32_t r, const in uint32_t c, const in float l, const in float alpha, const in float sum)
{
    return l * alpha + sum;
}

// a row's log of its sum of exponentials, with its maximum (lowest where no key counted)
float log_sum_exp(const in uint32_t r, const in uint32_t c, const in float m, const in float l)
{
    return l > 0.f ? m * (folded == 1 ? p.scale : 1.f) + log(l) : LOWEST;
}

// the output over its row's sum (0 where no key counted)
float normalized(const in uint32_t r, const in uint32_t c, const in float o, const in float l)
{
    return l > 0.f ? o / l : 0.f;
}

// Named fragments (EACH8/EACH4): Q's of the head's width, the output's, the block's scores.
#define DECLARE_Q(n) FRAG_A q##n;
#define LOAD_QN(n) if (n < D16) coopMatLoad(q##n, tile_k, at * KW + n * 2, KW, gl_CooperativeMatrixLayoutRowMajor);
#define Q_NAMED(at) EACH8(LOAD_QN)
#define DECLARE_O(n) FRAG_C o##n = FRAG_C(0.f);
#define DECLARE_S(n) FRAG_C s##n; FRAG_C sn##n;

// K's fragment i of key columns jb (the K block at `kat`) into the next block's scores sn_jb
#define SCORE_TERM(jb, i) \
    if (i < D16) \
    { \
        FRAG_B kt; \
        coopMatLoad(kt, tile_k, kat + jb * 16 * KW + i * 2, KW, gl_CooperativeMatrixLayoutColumnMajor); \
        sn##jb = coopMatMulAdd(q##i, kt, sn##jb); \
    }
// the scores of the next block's (from key jn) 16 keys jb, scaled and masked
#define SCORES(jb) \
    if (jb < BC / 16) \
    { \
        sn##jb = FRAG_C(0.f); \
        SCORE_TERM(jb, 0) SCORE_TERM(jb, 1) SCORE_TERM(jb, 2) SCORE_TERM(jb, 3) \
        SCORE_TERM(jb, 4) SCORE_TERM(jb, 5) SCORE_TERM(jb, 6) SCORE_TERM(jb, 7) \
        if (folded == 0) \
            coopMatPerElementNV(sn##jb, sn##jb, score, rows0, jn + jb * 16, mbase); \
    }
#define MAXIMA(jb) if (jb < BC / 16) coopMatPerElementNV(mn, mn, max_with, s##jb);
#define SHIFT(jb) if (jb < BC / 16) s##jb = sn##jb;
// the scores jb as probabilities, summed into `sum`
#define PROBABILITIES(jb) \
    if (jb < BC / 16) \
    { \
        coopMatPerElementNV(s##jb, s##jb, exp_below, mn); \
        coopMatPerElementNV(sum, sum, plus, s##jb); \
    }
#define RESCALE(jd) if (jd < DV16) coopMatPerElementNV(o##jd, o##jd, times, alpha);
// the probabilities of keys kb times V's fragment jd into the output o_jd
#define VALUE_TERM(kb, jd) \
    if (jd < DV16) \
    { \
        FRAG_B vb; \
        coopMatLoad(vb, tile_v, vat + kb * 16 * VW + jd * 2, VW, gl_CooperativeMatrixLayoutRowMajor); \
        o##jd = coopMatMulAdd(pa, vb, o##jd); \
    }
#define VALUES(kb) \
    if (kb < BC / 16) \
    { \
        const FRAG_A pa = FRAG_A(s##kb); \
        VALUE_TERM(kb, 0) VALUE_TERM(kb, 1) VALUE_TERM(kb, 2) VALUE_TERM(kb, 3) \
        VALUE_TERM(kb, 4) VALUE_TERM(kb, 5) VALUE_TERM(kb, 6) VALUE_TERM(kb, 7) \
    }
#define NORMALIZE(jd) if (jd < DV16) coopMatPerElementNV(o##jd, o##jd, normalized, l);
// output fragment jd into the subgroup's scratch (fp32 in the K tiles' uvec4), where its group
// of 4 (jd / 4 == jg) is being stored
#define TO_SCRATCH(jd) \
    if (jd < DV16 && jd / 4 == jg) \
        coopMatStore(o##jd, tile_k, sg * 16 * LDS + (jd % 4) * 4, LDS, gl_CooperativeMatrixLayoutRowMajor);

void main()
{
    WORKGROUP_PLACE

    EACH8(DECLARE_Q)
    LOAD_Q(Q_NAMED, bq, row0)
    // the subgroup's first query row
    const int rows0 = row0 + sg * 16;

    // the running output, maximum and sum of exponentials, each row's value in all of its
    // elements for the last two
    EACH8(DECLARE_O)
    FRAG_C m = FRAG_C(LOWEST);
    FRAG_C l = FRAG_C(0.f);

    // this part's key blocks: `count` from block `first`
    const int blocks = (p.dst + BC - 1) / BC;
    const int per = (blocks + splits - 1) / splits;
    const int first = min(part * per, blocks);
    const int count = min(blocks - first, per);
    const int key0 = first * BC;

    // the part's first block staged and its scores taken, the second fetched
    uvec4 next_k[4];
    uvec4 next_v[4];
    [[unroll]] for (int u = 0; u < 4; u++)
    {
        next_k[u] = fetch_k(t, bk, key0, u);
        next_v[u] = fetch_v(t, bv, key0, u);
    }
    [[unroll]] for (int u = 0; u < 4; u++)
    {
        STAGE_GROUP(tile_k, 0, bk, u, next_k[u]);
        STAGE_GROUP(tile_v, 0, bv, u, next_v[u]);
    }
    barrier();
    [[unroll]] for (int u = 0; u < 4; u++)
    {
        next_k[u] = fetch_k(t, bk, key0 + BC, u);
        next_v[u] = fetch_v(t, bv, key0 + BC, u);
    }
    EACH4(DECLARE_S)
    {
        const int kat = 0;
        const int jn = key0;
        EACH4(SCORES)
        EACH4(SHIFT)
    }

    // the part's block b's softmax and values, beside block b + 1's scores (past the part on
    // its last block: another part's keys or staged zeros, scores never used), with no branch
    // between them
    for (int b = 0; b < count; b++)
    {
        [[unroll]] for (int u = 0; u < 4; u++)
        {
            STAGE_GROUP(tile_k, ((b + 1) % 2) * STAGE, bk, u, next_k[u]);
            STAGE_GROUP(tile_v, ((b + 1) % 3) * STAGE, bv, u, next_v[u]);
        }
        barrier();
        [[unroll]] for (int u = 0; u < 4; u++)
        {
            next_k[u] = fetch_k(t, bk, key0 + (b + 2) * BC, u);
            next_v[u] = fetch_v(t, bv, key0 + (b + 2) * BC, u);
        }
        const int kat = ((b + 1) % 2) * STAGE;
        const int jn = key0 + (b + 1) * BC;
        EACH4(SCORES)

        // block b's row maxima, probabilities and their sums, the output rescaled and added to
        FRAG_C mn = FRAG_C(LOWEST);
        EACH4(MAXIMA)
        coopMatReduceNV(mn, mn, gl_CooperativeMatrixReduceRowNV, max_of);
        coopMatPerElementNV(mn, mn, max_with, m);
        FRAG_C alpha;
        coopMatPerElementNV(alpha, m, exp_below, mn);
        m = mn;
        FRAG_C sum = FRAG_C(0.f);
        EACH4(PROBABILITIES)
        coopMatReduceNV(sum, sum, gl_CooperativeMatrixReduceRowNV, sum_of);
        coopMatPerElementNV(l, l, rescaled_sum, alpha, sum);
        EACH8(RESCALE)
        const int vat = (b % 3) * STAGE;
        EACH4(VALUES)
        EACH4(SHIFT)
    }
    // every subgroup past its last K tile read before the tiles become the scratch
    barrier();

    // the output over the sums, four 16-column blocks at a time through the scratch, each lane
    // writing 8 columns of one row: into the output, or in fp32 into this part's rows
    EACH8(NORMALIZE)
    const int r = lane / 2;
    const int side = lane % 2;
    const int row = rows0 + r;
    // the head and part's first row among the parts' (their rows padded to 64)
    const int part_row = int(gl_WorkGroupID.z) * PART_ROWS;
    [[unroll]] for (int jg = 0; jg < 2; jg++)
    {
        if (jg * 4 < DV16)
        {
            EACH8(TO_SCRATCH)
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            if (row < p.src)
            {
                const int at = splits > 1 ? (part_row + row) * p.dv + jg * 64 + side * 8 : h * p.out_cstep + row * p.out_rs + jg * 64 + side * 8;
                [[unroll]] for (int jj = 0; jj < 4; jj++)
                {
                    if (jg * 4 + jj < DV16)
                    {
                        [[unroll]] for (int e = 0; e < 8; e++)
                        {
                            const float x = uintBitsToFloat(tile_k[(sg * 16 + r) * LDS + jj * 4 + side * 2 + e / 4][e % 4]);
                            if (splits > 1)
                                part_data[at + jj * 16 + e] = x;
                            else
                                buffer_st1(out_data, at + jj * 16 + e, afp(x));
                        }
                    }
                }
            }
            subgroupMemoryBarrierShared();
            subgroupBarrier();
        }
    }
    if (splits > 1)
    {
        // the rows' log-sum-exps (each row's value in all of its elements) through the scratch,
        // after all of the parts' rows
        FRAG_C lse;
        coopMatPerElementNV(lse, m, log_sum_exp, l);
        coopMatStore(lse, tile_k, sg * 16 * LDS, LDS, gl_CooperativeMatrixLayoutRowMajor);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        const int lse_at = int(gl_NumWorkGroups.z) * PART_ROWS * p.dv;
        if (lane < 16 && rows0 + lane < p.src)
            part_data[lse_at + part_row + rows0 + lane] = uintBitsToFloat(tile_k[(sg * 16 + lane) * LDS].x);
    }
}
