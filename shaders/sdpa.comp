// SDPA: softmax(Q·Kᵀ · scale + mask) · V in one pass over blocks of keys (flash attention's
// order): the scores of a block never leave shared memory, and each query row keeps an fp32
// running maximum and sum, rescaling its partial output as a larger maximum turns up.
// Pack1 buffers: q (embed × src × heads), k (embed × dst × groups), v (dv × dst × groups),
// mask (dst × src × 1 or heads), out (dv × src × heads); each side's rows `*_rs` apart and its
// heads `*_cstep` apart after `*_offset`, so that heads may lie side by side in the rows of one
// matrix (MultiHeadAttention's projections, q k v stacked in each row) as well as in channels
// of their own (SDPA's blobs).
//
// One workgroup of 64 invocations takes ROWS query rows of one head, so that each key and
// value row it reads serves all of them. Per block of 64 keys: invocation t scores key t
// against the rows (the rows' queries staged in shared memory EC values at a time); the
// first ROWS invocations fold their row's block into its running maximum and sum and turn
// the scores into weights; then every invocation adds the weighted values of the block to
// the output columns it owns (t, t + 64, …: dv ≤ 64 · COLS).
// Dispatch: global [64, ceil(src / ROWS), heads].
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int attn_mask = 0;

#define LANES 64
#define ROWS 16
#define EC 128
#define COLS 4
layout (local_size_x = LANES) in;

layout (binding = 0) readonly buffer q_blob { sfp q_data[]; };
layout (binding = 1) readonly buffer k_blob { sfp k_data[]; };
layout (binding = 2) readonly buffer v_blob { sfp v_data[]; };
layout (binding = 3) readonly buffer mask_blob { sfp mask_data[]; };
layout (binding = 4) writeonly buffer out_blob { sfp out_data[]; };

#include "sdpa_params.comp"

shared float sq[ROWS * EC];
shared float ss[ROWS * LANES];
shared float scorr[ROWS];
shared float sl[ROWS];

void main()
{
    const int t = int(gl_LocalInvocationID.x);
    const int row0 = int(gl_WorkGroupID.y) * ROWS;
    const int h = int(gl_WorkGroupID.z);
    const int g = h / p.per_group;
    const int qbase = p.q_offset + h * p.q_cstep;
    const int kbase = p.k_offset + g * p.k_cstep;
    const int vbase = p.v_offset + g * p.v_cstep;
    const int mbase = p.mask_channels > 1 ? h * p.mask_cstep : 0;

    // the running maximum and sum of row t (t < ROWS)
    float m = -3.402823466e+38;
    float l = 0.0;
    float acc[COLS * ROWS];
    for (int i = 0; i < COLS * ROWS; i++)
        acc[i] = 0.0;

    for (int j0 = 0; j0 < p.dst; j0 += LANES)
    {
        const int j = j0 + t;
        float s[ROWS];
        for (int r = 0; r < ROWS; r++)
            s[r] = 0.0;
        for (int e0 = 0; e0 < p.embed; e0 += EC)
        {
            const int ec = min(EC, p.embed - e0);
            barrier();
            for (int i = t; i < ROWS * EC; i += LANES)
            {
                const int r = i / EC;
                const int e = i % EC;
                const int row = row0 + r;
                sq[i] = (row < p.src && e < ec) ? float(buffer_ld1(q_data, qbase + row * p.q_rs + e0 + e)) : 0.0;
            }
            barrier();
            if (j < p.dst)
            {
                const int kr = kbase + j * p.k_rs + e0;
                for (int e = 0; e < ec; e++)
                {
                    const float kv = float(buffer_ld1(k_data, kr + e));
                    for (int r = 0; r < ROWS; r++)
                        s[r] += sq[r * EC + e] * kv;
                }
            }
        }
        for (int r = 0; r < ROWS; r++)
        {
            float v = -3.402823466e+38;
            const int row = row0 + r;
            if (j < p.dst)
            {
                v = s[r] * p.scale;
                if (attn_mask == 1 && row < p.src)
                    v += float(buffer_ld1(mask_data, mbase + row * p.dst + j));
            }
            ss[r * LANES + t] = v;
        }
        barrier();
        if (t < ROWS)
        {
            float bm = m;
            for (int i = 0; i < LANES; i++)
                bm = max(bm, ss[t * LANES + i]);
            const float corr = exp(m - bm);
            float sum = 0.0;
            for (int i = 0; i < LANES; i++)
            {
                const float w = exp(ss[t * LANES + i] - bm);
                ss[t * LANES + i] = w;
                sum += w;
            }
            l = l * corr + sum;
            m = bm;
            scorr[t] = corr;
        }
        barrier();
        const int n = min(LANES, p.dst - j0);
        for (int c = 0; c < COLS; c++)
        {
            const int x = t + c * LANES;
            if (x >= p.dv)
                break;
            for (int r = 0; r < ROWS; r++)
                acc[c * ROWS + r] *= scorr[r];
            for (int i = 0; i < n; i++)
            {
                const float v = float(buffer_ld1(v_data, vbase + (j0 + i) * p.v_rs + x));
                for (int r = 0; r < ROWS; r++)
                    acc[c * ROWS + r] += ss[r * LANES + i] * v;
            }
        }
    }

    barrier();
    if (t < ROWS)
        sl[t] = l;
    barrier();
    for (int c = 0; c < COLS; c++)
    {
        const int x = t + c * LANES;
        if (x >= p.dv)
            break;
        for (int r = 0; r < ROWS; r++)
        {
            const int row = row0 + r;
            if (row < p.src)
                buffer_st1(out_data, h * p.out_cstep + row * p.out_rs + x, afp(acc[c * ROWS + r] / sl[r]));
        }
    }
}
