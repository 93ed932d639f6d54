// Convolution's int8 inference on cooperative matrices (VK_KHR_cooperative_matrix with int8
// operands summed in int32: tensor cores on NVIDIA, 16 × 16 × 32): convolution_gemm_cm's tile
// with the int8 GEMM's operands and epilogue (convolution_gemm_int8_body). The same weights as
// convolution_gemm_int8 (step-major, [K][outc] ints of four input channels' levels); each
// staged input vec4 is quantized and packed into one int as it is stored (from int8 storage,
// its int of levels taken as it is).
//
// A workgroup of 4 subgroups (of 32) computes 64 output channels × 64 positions; each
// subgroup a 32 × 32 quarter as 2 × 2 16 × 16 int32 accumulators. Per 8 steps (32 input
// levels: one matrix K) every invocation stages 4 weight ints and 4 input ints in shared
// memory, weights row-major [output][step], inputs column-major [position][step], rows of 8
// ints padded to 12 (16-byte aligned, as the loads need). Each accumulator goes through a
// scratch of its subgroup to be written as vec4 of 4 channels, dequantized, biased, activated
// and (requantizing) taken to its levels over the output scale. Where the output has too few
// tiles to fill the device the steps are split over the grid's z, as convolution_gemm_cm's:
// each slice writes its int32 sums to the workspace and convolution_gemm_int8_sum finishes
// their sum.
#version 450

#include "prelude_coopmat.comp"
#extension GL_EXT_shader_explicit_arithmetic_types_int8: require

#include "convolution_head.comp"

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
layout (binding = 2) readonly buffer weight_blob { int weight_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfpvec4 bias_data[]; };
// each output block's four 1 / (input scale · weight scale), fp32 in every variant
layout (binding = 4) readonly buffer descale_blob { vec4 descale_data[]; };

// the input's scale, and the output's where the layer requantizes (0: it does not)
layout (constant_id = 12) const float input_scale = 1.f;
layout (constant_id = 13) const float output_scale = 0.f;
// the number of slices the steps are split into (1: write the output directly)
layout (constant_id = 14) const int splits = 1;

// int32 sums, [slice][outc / 4][outw · outh], when the steps are split
layout (binding = 5) writeonly buffer partial_blob { ivec4 partial_data[]; };
// int8 storage (constant 15): the input's and the output's levels, four channels an int
layout (binding = 6) readonly buffer bottom_int8_blob { int bottom_int8_data[]; };
layout (binding = 7) writeonly buffer top_int8_blob { int top_int8_data[]; };

// output blocks of 4 and positions per workgroup, steps per stage (one matrix K of levels)
#define TILE_MB 16
#define TILE_N 64
#define STEPS 8
#define PER (STEPS / 2)
// a staged row: 8 ints and 4 of padding
#define LD 12
// a result row (one position) of a subgroup's scratch: 4 ivec4 and 1 of padding
#define LDC 5
layout (local_size_x = 128) in;

shared int tile_a[TILE_MB * 4 * LD];
shared int tile_b[TILE_N * LD];
shared ivec4 tile_c[4 * 16 * LDC];

#define FRAG_A coopmat<int8_t, gl_ScopeSubgroup, 16, 32, gl_MatrixUseA>
#define FRAG_B coopmat<int8_t, gl_ScopeSubgroup, 32, 16, gl_MatrixUseB>
#define FRAG_C coopmat<int, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

#include "convolution_int8_epilogue.comp"

// loads this invocation's share of steps k0 .. k0 + 7 of both operands: 4 steps of the input
// at its position (quantized), 4 of its output channel's weights; no branch guards a load
void load_steps(int k0, int k_end, bool n_inside, int lk, int x0, int y0, int o,
    bool o_inside, out int in_v[PER], out int w_v[PER])
{
    const int kk = kernel_w * kernel_h;
    for (int r = 0; r < PER; r++)
    {
        const int k = k0 + lk + r * 2;
        const bool k_inside = k < k_end;
        const int ci = k / kk;
        const int rem = k - ci * kk;
        const int ky = rem / kernel_w;
        const int kx = rem - ky * kernel_w;
        const int x = x0 + kx * dilation_w;
        const int y = y0 + ky * dilation_h;
        const bool load = n_inside && k_inside && x >= 0 && x < psc(w) && y >= 0 && y < psc(h);
        const int gi = load ? ci * psc(cstep) + y * psc(w) + x : 0;
        const vec4 v = (int8_storage & 1) != 0
            ? int8_stored_values(bottom_int8_data[gi], input_scale)
            : vec4(buffer_ld4(bottom_blob_data, gi));
        const vec4 x4 = load ? v : (n_inside && k_inside ? vec4(p.pad_value) : vec4(0.f));
        in_v[r] = pack_levels(level4(x4 * input_scale));
        const bool w_inside = o_inside && k_inside;
        const int wv = weight_data[w_inside ? k * psc(outc) * 4 + o : 0];
        w_v[r] = w_inside ? wv : 0;
    }
}

// writes one accumulator, positions on0 .. on0 + 15 of output blocks om0 .. om0 + 3, through
// subgroup sg's scratch, column-major by position: the 4 output channels of one position are
// one ivec4
void write_out(FRAG_C acc, int sg, int lane, int on0, int om0, int N, int M, int slice)
{
    coopMatStore(acc, tile_c, sg * 16 * LDC, LDC, gl_CooperativeMatrixLayoutColumnMajor);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    for (int e = lane; e < 64; e += 32)
    {
        const int on = on0 + e % 16;
        const int om = om0 + e / 16;
        const ivec4 s = tile_c[(sg * 16 + e % 16) * LDC + e / 16];
        if (on < N && om < M)
        {
            if (splits > 1)
            {
                partial_data[(slice * M + om) * N + on] = s;
            }
            else
            {
                const vec4 b = bias_term == 1 ? vec4(buffer_ld4(bias_data, om)) : vec4(0.f);
                int8_store(om * psc(outcstep) + on, s, descale_data[om], b, output_scale);
            }
        }
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
}

void main()
{
#define batched 0
    int in_base = 0;
    int out_base = 0;
    int w_base = 0;
#define TILE_ROWS TILE_MB
#include "convolution_gemm_tile.comp"
    // each slice whole stages of 8 steps
    const int K = psc(c) * kernel_w * kernel_h;
    const int per_slice = ((K + splits - 1) / splits + STEPS - 1) / STEPS * STEPS;
    const int k_begin = slice * per_slice;
    const int k_end = min(K, k_begin + per_slice);

    // what this invocation stages: the input at position n0 + row and the weights of output
    // channel m0 · 4 + row, steps lk, lk + 2, lk + 4, lk + 6 of each stage
    const int row = tid % 64;
    const int lk = tid / 64;
    const int n = n0 + row;
    const bool n_inside = n < N;
    const int x0 = (n % psc(outw)) * stride_w - p.pad_left;
    const int y0 = (n / psc(outw)) * stride_h - p.pad_top;
    const int o = m0 * 4 + row;
    const bool o_inside = o < M * 4;

    // this subgroup's quarter: output channels sm .. sm + 31, positions sn .. sn + 31
    const int sg = int(gl_SubgroupID);
    const int sm = (sg % 2) * 32;
    const int sn = (sg / 2) * 32;

    FRAG_C c00 = FRAG_C(0);
    FRAG_C c01 = FRAG_C(0);
    FRAG_C c10 = FRAG_C(0);
    FRAG_C c11 = FRAG_C(0);

    int next_in[PER];
    int next_w[PER];
    load_steps(k_begin, k_end, n_inside, lk, x0, y0, o, o_inside, next_in, next_w);

    for (int k0 = k_begin; k0 < k_end; k0 += STEPS)
    {
        for (int r = 0; r < PER; r++)
        {
            tile_b[row * LD + lk + r * 2] = next_in[r];
            tile_a[row * LD + lk + r * 2] = next_w[r];
        }
        barrier();

        if (k0 + STEPS < k_end)
            load_steps(k0 + STEPS, k_end, n_inside, lk, x0, y0, o, o_inside, next_in, next_w);

        // the stride and offsets count ints: each holds four levels along K
        FRAG_A a0;
        FRAG_A a1;
        FRAG_B b0;
        FRAG_B b1;
        coopMatLoad(a0, tile_a, sm * LD, LD, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(a1, tile_a, (sm + 16) * LD, LD, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(b0, tile_b, sn * LD, LD, gl_CooperativeMatrixLayoutColumnMajor);
        coopMatLoad(b1, tile_b, (sn + 16) * LD, LD, gl_CooperativeMatrixLayoutColumnMajor);
        c00 = coopMatMulAdd(a0, b0, c00);
        c01 = coopMatMulAdd(a0, b1, c01);
        c10 = coopMatMulAdd(a1, b0, c10);
        c11 = coopMatMulAdd(a1, b1, c11);
        barrier();
    }

    // each accumulator through this subgroup's scratch
    const int lane = int(gl_SubgroupInvocationID);
    write_out(c00, sg, lane, n0 + sn, m0 + sm / 4, N, M, slice);
    write_out(c01, sg, lane, n0 + sn + 16, m0 + sm / 4, N, M, slice);
    write_out(c10, sg, lane, n0 + sn, m0 + sm / 4 + 4, N, M, slice);
    write_out(c11, sg, lane, n0 + sn + 16, m0 + sm / 4 + 4, N, M, slice);
}
