// The body of the int8 implicit GEMM (convolution_gemm_int8 with the device's int8 dot
// products, convolution_gemm_int8_exact with shifts and int32 products where it has none):
// Convolution's int8 inference, ncnn's forward_int8, on pack4 buffer blobs in and out, one
// group. Each staged input vec4 is quantized as it is loaded (or, from int8 storage, its int of
// levels taken as it is) (level(x · input_scale): rounded
// half away from zero, clamped to ±127) and packed into one int of four int8 lanes, the same
// four input channels the weights' ints hold; products of levels sum exactly in int32. Each
// output block is then dequantized (its four outputs' 1 / (input scale · weight scale)),
// biased, activated, and where the layer requantizes, taken to its levels over the output
// scale: the values a GPU net's int8 layers pass each other (see the Rust module's doc).
//
// The tile is convolution_gemm's first: 64 positions × 32 output blocks per workgroup of 256,
// each invocation 4 positions × 2 blocks, 8 steps (four input channels at one kernel
// position) staged at a time. Weights, from the host: step-major, [K][outc / 4] ivec4, one int
// per output lane holding its four input channels' levels, the first in the low byte.

#include "prelude.comp"

#include "convolution_head.comp"

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
layout (binding = 2) readonly buffer weight_blob { ivec4 weight_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfpvec4 bias_data[]; };
// each output block's four 1 / (input scale · weight scale), fp32 in every variant
layout (binding = 4) readonly buffer descale_blob { vec4 descale_data[]; };
// int8 storage (constant 15): the input's and the output's levels, four channels an int
layout (binding = 6) readonly buffer bottom_int8_blob { int bottom_int8_data[]; };
layout (binding = 7) writeonly buffer top_int8_blob { int top_int8_data[]; };

// the input's scale, and the output's where the layer requantizes (0: it does not)
layout (constant_id = 12) const float input_scale = 1.f;
layout (constant_id = 13) const float output_scale = 0.f;

#define TILE_N 64
#define TILE_M 32
#define POS 4
#define LANES_N (TILE_N / POS)
#define LANES_M (256 / LANES_N)
#define TILE_K 8
#define IN_PER_LANE (TILE_K * TILE_N / 256)
layout (local_size_x = 256) in;

shared int tile_in[TILE_K * TILE_N];
shared ivec4 tile_w[TILE_K * TILE_M];

#include "convolution_int8_epilogue.comp"

ivec4 dots(int v, ivec4 w)
{
    return ivec4(DOT4(v, w.x), DOT4(v, w.y), DOT4(v, w.z), DOT4(v, w.w));
}

// loads steps k0 .. k0 + 7 of this invocation's share of both operands, quantized inputs
// (zero past the steps or the positions, the pad value's level outside the input) and weight
// ivec4s; no branch guards a load, so that all are in flight at once
void load_steps(int k0, int k_end, bool n_inside, int lk, int ln, int x0, int y0, int tid,
    int m0, int M, out int in_v[IN_PER_LANE], out ivec4 w_v)
{
    const int kk = kernel_w * kernel_h;
    for (int r = 0; r < IN_PER_LANE; r++)
    {
        const int k = k0 + lk + r * (256 / TILE_N);
        const bool k_inside = n_inside && k < k_end;
        const int ci = k / kk;
        const int rem = k - ci * kk;
        const int ky = rem / kernel_w;
        const int kx = rem - ky * kernel_w;
        const int x = x0 + kx * dilation_w;
        const int y = y0 + ky * dilation_h;
        const bool load = k_inside && x >= 0 && x < psc(w) && y >= 0 && y < psc(h);
        const int gi = load ? ci * psc(cstep) + y * psc(w) + x : 0;
        const vec4 v = (int8_storage & 1) != 0
            ? int8_stored_values(bottom_int8_data[gi], input_scale)
            : vec4(buffer_ld4(bottom_blob_data, gi));
        const vec4 x4 = load ? v : (k_inside ? vec4(p.pad_value) : vec4(0.f));
        in_v[r] = pack_levels(level4(x4 * input_scale));
    }
    const int k = k0 + tid / TILE_M;
    const int m = m0 + tid % TILE_M;
    const bool inside = k < k_end && m < M;
    const ivec4 wv = weight_data[inside ? k * M + m : 0];
    w_v = inside ? wv : ivec4(0);
}

void main()
{
#define splits 1
#define batched 0
    int in_base = 0;
    int out_base = 0;
    int w_base = 0;
#define TILE_ROWS TILE_M
#include "convolution_gemm_tile.comp"
    const int kk = kernel_w * kernel_h;
    const int k_end = psc(c) * kk;

    // the input position this invocation stages, the same for every step
    const int ln = tid % TILE_N;
    const int lk = tid / TILE_N;
    const int n = n0 + ln;
    const bool n_inside = n < N;
    const int x0 = (n % psc(outw)) * stride_w - p.pad_left;
    const int y0 = (n / psc(outw)) * stride_h - p.pad_top;

    // the tile entries this invocation computes: positions tp + LANES_N i, blocks tm + LANES_M j
    const int tp = tid % LANES_N;
    const int tm = tid / LANES_N;

    ivec4 sum00 = ivec4(0), sum01 = ivec4(0), sum10 = ivec4(0), sum11 = ivec4(0);
    ivec4 sum20 = ivec4(0), sum21 = ivec4(0), sum30 = ivec4(0), sum31 = ivec4(0);

    int next_in[IN_PER_LANE];
    ivec4 next_w;
    load_steps(0, k_end, n_inside, lk, ln, x0, y0, tid, m0, M, next_in, next_w);

    for (int k0 = 0; k0 < k_end; k0 += TILE_K)
    {
        for (int r = 0; r < IN_PER_LANE; r++)
            tile_in[(lk + r * (256 / TILE_N)) * TILE_N + ln] = next_in[r];
        tile_w[tid] = next_w;
        barrier();

        if (k0 + TILE_K < k_end)
            load_steps(k0 + TILE_K, k_end, n_inside, lk, ln, x0, y0, tid, m0, M, next_in, next_w);

        for (int sk = 0; sk < TILE_K; sk++)
        {
            const int ib = sk * TILE_N + tp;
            const int v0 = tile_in[ib];
            const int v1 = tile_in[ib + LANES_N];
            const int v2 = tile_in[ib + 2 * LANES_N];
            const int v3 = tile_in[ib + 3 * LANES_N];
            const ivec4 a0 = tile_w[sk * TILE_M + tm];
            const ivec4 a1 = tile_w[sk * TILE_M + tm + LANES_M];
            sum00 += dots(v0, a0);
            sum10 += dots(v1, a0);
            sum20 += dots(v2, a0);
            sum30 += dots(v3, a0);
            sum01 += dots(v0, a1);
            sum11 += dots(v1, a1);
            sum21 += dots(v2, a1);
            sum31 += dots(v3, a1);
        }
        barrier();
    }

    ivec4 sums[8] = ivec4[8](sum00, sum01, sum10, sum11, sum20, sum21, sum30, sum31);
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
            const vec4 b = bias_term == 1 ? vec4(buffer_ld4(bias_data, om)) : vec4(0.f);
            int8_store(om * psc(outcstep) + on, sums[i * 2 + j], descale_data[om], b, output_scale);
        }
    }
}
