// Convolution as an implicit GEMM, pack4 buffer blobs in and out, one group: the output is
// an (outc / 4) × (outw · outh) matrix of vec4, the product of the weights, (outc / 4) × K,
// and the input's windows, K × (outw · outh), with K = c / 4 · kernel_h · kernel_w steps of
// four input channels. A workgroup of 256 computes a tile of 64 positions × 32 output blocks
// (`wide`: 128 positions × 16 blocks, for layers of at most 64 output channels), each
// invocation 4 positions × 2 blocks, staging 8 steps of both operands at a time in shared
// memory: every input vec4 loaded is used 32 or 64 times, every weight row 64 or 128 times,
// where the direct shader loads both per use. Large layers (`wide` 2: many positions, more than
// 64 outputs) take a 128 × 32 tile, each invocation 8 positions × 2 blocks: twice the
// arithmetic per shared-memory read, which bounds the smaller tiles on an H200.
//
// Small layers (few positions, many steps: resnet's last stage has 49 positions and up to
// 4608 steps) have too few tiles to fill the device, so the steps can be split over the
// grid's z: each slice writes its fp32 partial sums to the workspace and
// convolution_gemm_sum adds the slices, the bias and the activation.
//
// Weights, from the host: step-major, [K][outc / 4][4 output lanes] vec4 over 4 input lanes,
// so that a tile's weights for one step are 32 · 4 consecutive vec4.
#version 450

#include "prelude.comp"

#define IN_PACK 4
#define OUT_PACK 4
#include "convolution_head.comp"
#include "convolution_gemm_epilogue.comp"
// its tiles fill 32 KiB of workgroup memory: no room for a table of tap offsets
#define TAP_OFFSETS_COMPUTED
#include "convolution_window_table.comp"

// partial sums, [slice][outc / 4][outw · outh], when the steps are split
layout (binding = 4) writeonly buffer partial_blob { vec4 partial_data[]; };

// the number of slices the steps are split into (1: write the output directly)
layout (constant_id = 12) const int splits = 1;
// the tile: 0 64 positions × 32 output blocks, 1 128 × 16, 2 128 × 32
layout (constant_id = 13) const int wide = 0;

// 1: the grid's z indexes batch matrices (Winograd's 36 products), each one's input, output and
// weights right after the last one's, and the steps are not split
layout (constant_id = 14) const int batched = 0;
// where this workgroup's batch matrix begins in the input, the output and the weights
int in_base = 0;
int out_base = 0;
int w_base = 0;

const int TILE_N = wide == 0 ? 64 : 128;
const int TILE_M = wide == 1 ? 16 : 32;
// positions per invocation (always 2 output blocks)
const int POS = wide == 2 ? 8 : 4;
// invocations along positions, and along output blocks
const int LANES_N = TILE_N / POS;
const int LANES_M = 256 / LANES_N;
#define TILE_K 8
layout (local_size_x = 256) in;

// sized for the larger of the two tiles
shared vec4 tile_in[TILE_K * 128];
shared vec4 tile_w[TILE_K * 32 * 4];

// what each invocation stages per 8 steps: input vec4s (2 or 4), weight vec4s (4 or 2); the
// register arrays have room for 4 (array sizes stay plain constants for naga)
const int IN_PER_LANE = TILE_K * TILE_N / 256;
const int W_PER_LANE = TILE_K * TILE_M * 4 / 256;

// loads steps k0 .. k0 + 7 of this invocation's share of both operands: the input at its
// position (zero past the steps or the positions, the pad value outside the input), and its
// weight vec4s, consecutive per step. No branch guards a load, so that all of them are in
// flight at once: outside, a load reads element 0 and its value is replaced.
void load_steps(int k0, int k_end, bool n_inside, int lk, int ln, ivec3 origin, TabledWindow win,
    int tid, int m0, int M, out vec4 in_v[4], out vec4 w_v[4])
{
    for (int r = 0; r < IN_PER_LANE; r++)
    {
        const int k = k0 + lk + r * (256 / TILE_N);
        const bool k_inside = n_inside && k < k_end;
        const int at = tabled_step(win, origin, k);
        const bool load = k_inside && at >= 0;
        const vec4 v = vec4(buffer_ld4(bottom_blob_data, load ? in_base + at : 0));
        in_v[r] = load ? v : (k_inside ? vec4(p.pad_value) : vec4(0.f));
    }
    for (int r = 0; r < W_PER_LANE; r++)
    {
        const int e = tid + r * 256;
        const int k = k0 + e / (TILE_M * 4);
        const int rest = e % (TILE_M * 4);
        const bool inside = k < k_end && m0 + rest / 4 < M;
        const vec4 wv = vec4(buffer_ld4(weight_data, inside ? w_base + (k * M + m0) * 4 + rest : 0));
        w_v[r] = inside ? wv : vec4(0.f);
    }
}

void main()
{
#define TILE_ROWS TILE_M
#include "convolution_gemm_tile.comp"
    const int K = psc(c) * kernel_w * kernel_h * kernel_d;
    const int per_slice = (K + splits - 1) / splits;
    const int k_begin = slice * per_slice;
    const int k_end = min(K, k_begin + per_slice);

    // the input position this invocation stages, the same for every step
    const int ln = tid % TILE_N;
    const int lk = tid / TILE_N;
    const int n = n0 + ln;
    const bool n_inside = n < N;
    const ivec3 origin = window_origin(n);
    const TabledWindow win = tabled_window(origin);

    // the tile entries this invocation computes: positions tp + LANES_N i, blocks tm + LANES_M j
    const int tp = tid % LANES_N;
    const int tm = tid / LANES_N;

    // sums of position i and block j: plain variables, not an array (indexed in the loop, an
    // array stays in memory on naga's path; the second four positions only for POS 8)
    vec4 sum00 = vec4(0.f), sum01 = vec4(0.f), sum10 = vec4(0.f), sum11 = vec4(0.f);
    vec4 sum20 = vec4(0.f), sum21 = vec4(0.f), sum30 = vec4(0.f), sum31 = vec4(0.f);
    vec4 sum40 = vec4(0.f), sum41 = vec4(0.f), sum50 = vec4(0.f), sum51 = vec4(0.f);
    vec4 sum60 = vec4(0.f), sum61 = vec4(0.f), sum70 = vec4(0.f), sum71 = vec4(0.f);

    // the next steps' operands, loaded into registers while the current ones are multiplied
    // (loads in flight during the arithmetic instead of before it: a layer with few tiles and
    // many steps waits on memory once per 8 steps otherwise)
    vec4 next_in[4];
    vec4 next_w[4];
    load_steps(k_begin, k_end, n_inside, lk, ln, origin, win, tid, m0, M, next_in, next_w);

    for (int k0 = k_begin; k0 < k_end; k0 += TILE_K)
    {
        for (int r = 0; r < IN_PER_LANE; r++)
            tile_in[(lk + r * (256 / TILE_N)) * TILE_N + ln] = next_in[r];
        for (int r = 0; r < W_PER_LANE; r++)
            tile_w[tid + r * 256] = next_w[r];
        barrier();

        if (k0 + TILE_K < k_end)
            load_steps(k0 + TILE_K, k_end, n_inside, lk, ln, origin, win, tid, m0, M, next_in, next_w);

        for (int sk = 0; sk < TILE_K; sk++)
        {
            const int ib = sk * TILE_N + tp;
            const vec4 v0 = tile_in[ib];
            const vec4 v1 = tile_in[ib + LANES_N];
            const vec4 v2 = tile_in[ib + 2 * LANES_N];
            const vec4 v3 = tile_in[ib + 3 * LANES_N];
            const int wb0 = (sk * TILE_M + tm) * 4;
            const int wb1 = wb0 + LANES_M * 4;
            const vec4 a0 = tile_w[wb0];
            const vec4 b0 = tile_w[wb0 + 1];
            const vec4 c0 = tile_w[wb0 + 2];
            const vec4 d0 = tile_w[wb0 + 3];
            const vec4 a1 = tile_w[wb1];
            const vec4 b1 = tile_w[wb1 + 1];
            const vec4 c1 = tile_w[wb1 + 2];
            const vec4 d1 = tile_w[wb1 + 3];
            sum00 += vec4(dot(v0, a0), dot(v0, b0), dot(v0, c0), dot(v0, d0));
            sum10 += vec4(dot(v1, a0), dot(v1, b0), dot(v1, c0), dot(v1, d0));
            sum20 += vec4(dot(v2, a0), dot(v2, b0), dot(v2, c0), dot(v2, d0));
            sum30 += vec4(dot(v3, a0), dot(v3, b0), dot(v3, c0), dot(v3, d0));
            sum01 += vec4(dot(v0, a1), dot(v0, b1), dot(v0, c1), dot(v0, d1));
            sum11 += vec4(dot(v1, a1), dot(v1, b1), dot(v1, c1), dot(v1, d1));
            sum21 += vec4(dot(v2, a1), dot(v2, b1), dot(v2, c1), dot(v2, d1));
            sum31 += vec4(dot(v3, a1), dot(v3, b1), dot(v3, c1), dot(v3, d1));
            if (POS == 8)
            {
                const vec4 v4 = tile_in[ib + 4 * LANES_N];
                const vec4 v5 = tile_in[ib + 5 * LANES_N];
                const vec4 v6 = tile_in[ib + 6 * LANES_N];
                const vec4 v7 = tile_in[ib + 7 * LANES_N];
                sum40 += vec4(dot(v4, a0), dot(v4, b0), dot(v4, c0), dot(v4, d0));
                sum50 += vec4(dot(v5, a0), dot(v5, b0), dot(v5, c0), dot(v5, d0));
                sum60 += vec4(dot(v6, a0), dot(v6, b0), dot(v6, c0), dot(v6, d0));
                sum70 += vec4(dot(v7, a0), dot(v7, b0), dot(v7, c0), dot(v7, d0));
                sum41 += vec4(dot(v4, a1), dot(v4, b1), dot(v4, c1), dot(v4, d1));
                sum51 += vec4(dot(v5, a1), dot(v5, b1), dot(v5, c1), dot(v5, d1));
                sum61 += vec4(dot(v6, a1), dot(v6, b1), dot(v6, c1), dot(v6, d1));
                sum71 += vec4(dot(v7, a1), dot(v7, b1), dot(v7, c1), dot(v7, d1));
            }
        }
        barrier();
    }

    vec4 sums[16] = vec4[16](sum00, sum01, sum10, sum11, sum20, sum21, sum30, sum31,
        sum40, sum41, sum50, sum51, sum60, sum61, sum70, sum71);
    for (int i = 0; i < POS; i++)
    {
        const int on = n0 + tp + LANES_N * i;
        if (on >= N)
            continue;
        for (int j = 0; j < 2; j++)
        {
            const int om = m0 + tm + LANES_M * j;
            if (om >= M)
                continue;
            const vec4 s = sums[i * 2 + j];
            if (splits > 1)
            {
                partial_data[(slice * M + om) * N + on] = s;
            }
            else
            {
                store_output(s, om, out_base + om * psc(outcstep) + on);
            }
        }
    }
}
