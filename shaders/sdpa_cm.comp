// sdpa.comp on cooperative matrices (VK_KHR_cooperative_matrix: tensor cores on NVIDIA): the
// same attention, operands, push constants and mask, for fp16 storage blobs whose head widths
// are multiples of 16 up to 128 and whose rows and heads start on 8-value boundaries (the
// runtime checks; Q, K and V are read as raw fp16 bits, 8 to a uvec4). Both products are
// fp16 × fp16 summed in fp32; the scores stay fp32 in shared memory.
//
// A workgroup of 4 subgroups (of 32) takes 64 query rows of one head, 16 per subgroup, their
// Q fragments held in registers for the whole run. One pass over the keys with the online
// softmax of sdpa.comp: per block, the scores product into a scratch of the subgroup's own,
// where two lanes per row read it, raise the row's running maximum (their halves combined by a
// shuffle) and turn the scores into unnormalized probabilities (fp16, through shared memory);
// the probabilities times the block's values land in fresh accumulators that go through the
// same scratch into the output, which each lane holds in registers as its row's half of every
// 16-column block (a KHR accumulator's elements cannot be told apart by row, so the running
// output cannot be rescaled row by row inside one: it lives outside them), rescaled by the
// change of the maximum and then added to. The sums of exponentials divide it at the end.
// Per block of BC keys (64, or 32 where a head is wider than 64), K and V are staged in
// shared memory by the whole workgroup, rows padded by 16 bytes off the bank period, the next
// block's loads issued into registers before this one is multiplied. Keys past `dst` and
// query rows past `src` read zeros and are never written.
// Dispatch: global [128, ceil(src / 64), heads].
#version 450

#include "prelude_coopmat.comp"
#extension GL_KHR_shader_subgroup_shuffle: require

#include "sdpa_cm_stage.comp"

shared uvec4 tile_k[STAGE];
shared uvec4 tile_v[STAGE];
// a subgroup's scratch of scores, and of probabilities (fp16, rows of 64 and 8 of padding)
shared vec4 scores[4 * 16 * LDS];
#define LDP 18
shared f16vec4 probs[4 * 16 * LDP];

// The subgroup's 16 × BC scores of the staged key block into its scratch (a macro: the Q
// fragments stay main's variables rather than an array copied into a call).
#define SCORE_BLOCK() \
{ \
    [[unroll]] for (int jb = 0; jb < 4; jb++) \
    { \
        if (jb < BC / 16) \
        { \
            FRAG_C s = FRAG_C(0.f); \
            [[unroll]] for (int i = 0; i < 8; i++) \
            { \
                if (i < D16) \
                { \
                    FRAG_B kt; \
                    coopMatLoad(kt, tile_k, jb * 16 * KW + i * 2, KW, gl_CooperativeMatrixLayoutColumnMajor); \
                    s = coopMatMulAdd(q[i], kt, s); \
                } \
            } \
            coopMatStore(s, scores, sg * 16 * LDS + jb * 4, LDS, gl_CooperativeMatrixLayoutRowMajor); \
        } \
    } \
    subgroupMemoryBarrierShared(); \
    subgroupBarrier(); \
}

// This lane's BC / 2 scores of its row in the block at key j0, scaled and masked, into
// `v` (4-vectors u < BC / 8); keys past dst get the lowest value, and `valid` their count.
#define READ_SCORES(v, valid) \
{ \
    valid = clamp(p.dst - (j0 + c_first), 0, BC / 2); \
    [[unroll]] for (int u = 0; u < 8; u++) \
    { \
        if (u < BC / 8) \
        { \
            vec4 x = scores[(sg * 16 + r) * LDS + c_first / 4 + u] * p.scale; \
            [[unroll]] for (int e = 0; e < 4; e++) \
            { \
                const int c = u * 4 + e; \
                if (attn_mask == 1 && c < valid && row < p.src) \
                    x[e] += float(buffer_ld1(mask_data, mbase + row * p.dst + j0 + c_first + c)); \
                if (c >= valid) \
                    x[e] = -3.402823466e+38; \
            } \
            v[u] = x; \
        } \
    } \
}

void main()
{
    WORKGROUP_PLACE

    FRAG_A q[8];
#define Q_ARRAY(at) \
    [[unroll]] for (int i = 0; i < 8; i++) \
        if (i < D16) \
            coopMatLoad(q[i], tile_k, (at) * KW + i * 2, KW, gl_CooperativeMatrixLayoutRowMajor);
    LOAD_Q(Q_ARRAY, bq, row0)

    // lane's row of the subgroup's 16, its half of each block's scores and of each 16 output
    // columns
    const int r = lane / 2;
    const int side = lane % 2;
    const int c_first = side * (BC / 2);
    const int row = row0 + sg * 16 + r;

    const float lowest = -3.402823466e+38;
    float m = lowest;
    float l = 0.f;
    // the row's output: 8 columns (two 4-vectors) of each 16-column block jd
    vec4 o[8][2];
    [[unroll]] for (int jd = 0; jd < 8; jd++)
    {
        o[jd][0] = vec4(0.f);
        o[jd][1] = vec4(0.f);
    }
    uvec4 next_k[4];
    uvec4 next_v[4];
    [[unroll]] for (int u = 0; u < 4; u++)
    {
        next_k[u] = fetch_k(t, bk, 0, u);
        next_v[u] = fetch_v(t, bv, 0, u);
    }
    for (int j0 = 0; j0 < p.dst; j0 += BC)
    {
        [[unroll]] for (int u = 0; u < 4; u++)
        {
            STAGE_GROUP(tile_k, 0, bk, u, next_k[u]);
            STAGE_GROUP(tile_v, 0, bv, u, next_v[u]);
        }
        barrier();
        [[unroll]] for (int u = 0; u < 4; u++)
        {
            next_k[u] = fetch_k(t, bk, j0 + BC, u);
            next_v[u] = fetch_v(t, bv, j0 + BC, u);
        }
        SCORE_BLOCK();
        vec4 v[8];
        int valid;
        READ_SCORES(v, valid);
        // the row's new maximum, from both lanes' halves
        float bm = lowest;
        [[unroll]] for (int u = 0; u < 8; u++)
            if (u < BC / 8)
                bm = max(bm, max(max(v[u].x, v[u].y), max(v[u].z, v[u].w)));
        const float mn = max(m, max(bm, subgroupShuffleXor(bm, 1)));
        const float alpha = exp(m - mn);
        // a row that has seen no key yet (every score the lowest) takes nothing from the block
        vec4 sum = vec4(0.f);
        [[unroll]] for (int u = 0; u < 8; u++)
        {
            if (u < BC / 8)
            {
                const vec4 pr = mn == lowest ? vec4(0.f) : exp(v[u] - mn);
                sum += pr;
                probs[(sg * 16 + r) * LDP + c_first / 4 + u] = f16vec4(pr);
            }
        }
        l = l * alpha + ((sum.x + sum.y) + (sum.z + sum.w));
        m = mn;
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        // probabilities times values, four 16-column blocks at a time through the scratch
        [[unroll]] for (int jg = 0; jg < 2; jg++)
        {
            if (jg * 4 < DV16)
            {
                FRAG_C acc[4];
                [[unroll]] for (int jj = 0; jj < 4; jj++)
                    acc[jj] = FRAG_C(0.f);
                [[unroll]] for (int kb = 0; kb < 4; kb++)
                {
                    if (kb < BC / 16)
                    {
                        FRAG_A pa;
                        coopMatLoad(pa, probs, sg * 16 * LDP + kb * 4, LDP, gl_CooperativeMatrixLayoutRowMajor);
                        [[unroll]] for (int jj = 0; jj < 4; jj++)
                        {
                            if (jg * 4 + jj < DV16)
                            {
                                FRAG_B vb;
                                coopMatLoad(vb, tile_v, kb * 16 * VW + (jg * 4 + jj) * 2, VW, gl_CooperativeMatrixLayoutRowMajor);
                                acc[jj] = coopMatMulAdd(pa, vb, acc[jj]);
                            }
                        }
                    }
                }
                [[unroll]] for (int jj = 0; jj < 4; jj++)
                    if (jg * 4 + jj < DV16)
                        coopMatStore(acc[jj], scores, sg * 16 * LDS + jj * 4, LDS, gl_CooperativeMatrixLayoutRowMajor);
                subgroupMemoryBarrierShared();
                subgroupBarrier();
                [[unroll]] for (int jj = 0; jj < 4; jj++)
                {
                    const int jd = jg * 4 + jj;
                    if (jd < DV16)
                    {
                        const int at = (sg * 16 + r) * LDS + jj * 4 + side * 2;
                        o[jd][0] = o[jd][0] * alpha + scores[at];
                        o[jd][1] = o[jd][1] * alpha + scores[at + 1];
                    }
                }
                subgroupMemoryBarrierShared();
                subgroupBarrier();
            }
        }
        barrier();
    }

    // the row's output over its sum of exponentials (both lanes' parts)
    const float inv_sum = 1.f / (l + subgroupShuffleXor(l, 1));
    if (row < p.src)
    {
        const int at = h * p.out_cstep + row * p.out_rs + side * 8;
        [[unroll]] for (int jd = 0; jd < 8; jd++)
        {
            if (jd < DV16)
            {
                [[unroll]] for (int e = 0; e < 8; e++)
                    buffer_st1(out_data, at + jd * 16 + e, afp(o[jd][e / 4][e % 4] * inv_sum));
            }
        }
    }
}
