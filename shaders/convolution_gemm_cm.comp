// convolution_gemm on cooperative matrices (VK_KHR_cooperative_matrix: tensor cores on NVIDIA):
// the same implicit GEMM, pack4 buffer blobs in and out, the same weights (step-major,
// [K][outc] vec4 over 4 input lanes), the same split of the steps over the grid's z with
// convolution_gemm_sum adding the slices. Products are fp16 × fp16 summed in fp32, so only
// variants whose blobs are fp16 already take it (the runtime picks it for those).
//
// A workgroup of 4 subgroups (of 32: the runtime takes this shader only where subgroups are
// 32 wide) computes 64 output channels × 64 positions; each subgroup a 32 × 32 quarter as
// 2 × 2 16 × 16 fp32 accumulators. Per 8 steps (32 input channels · kernel positions) every
// invocation stages 4 weight vec4 and 4 input vec4 (the window, zero past the steps or the
// positions, the pad value outside the input) as fp16 in shared memory, weights row-major
// [output][step], inputs column-major [position][step], both rows padded to 80 bytes (16-byte
// aligned, as the loads need, and off the 64-byte bank period). Each accumulator goes through
// a 1 KiB scratch of its subgroup to be written as vec4 of 4 channels with the bias and the
// activation: a whole-tile result array (17 KiB) halved the workgroups an SM holds, and with
// them the loads in flight, and took the vgg16 convolutions from 0.92 to 1.80 ms on an H200.
#version 450

#include "prelude_coopmat.comp"

#define IN_PACK 4
#define OUT_PACK 4
#include "convolution_head.comp"
#include "convolution_gemm_epilogue.comp"

// partial sums, [slice][outc / 4][outw · outh], when the steps are split
layout (binding = 4) writeonly buffer partial_blob { vec4 partial_data[]; };

// the number of slices the steps are split into (1: write the output directly)
layout (constant_id = 12) const int splits = 1;

// 1: the grid's z indexes batch matrices (Winograd's 36 products), each one's input, output and
// weights right after the last one's, and the steps are not split
layout (constant_id = 14) const int batched = 0;
// where this workgroup's batch matrix begins in the input, the output and the weights
int in_base = 0;
int out_base = 0;
int w_base = 0;

// output blocks of 4 and positions per workgroup, steps per stage
#define TILE_MB 16
#define TILE_N 64
// (16 steps per stage, more loads in flight per invocation, took resnet50 from 1.6 to 4.1 ms)
#define STEPS 8
// steps each invocation stages per operand and stage
#define PER (STEPS / 2)
// a staged row: 8 steps of f16vec4 and 2 of padding
#define LD (STEPS + 2)
// a result row (one position) of a subgroup's scratch: 4 vec4 and 1 of padding
#define LDC 5
layout (local_size_x = 128) in;

shared f16vec4 tile_a[TILE_MB * 4 * LD];
shared f16vec4 tile_b[TILE_N * LD];
// per subgroup, 16 positions of one accumulator
shared vec4 tile_c[4 * 16 * LDC];

#define FRAG_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FRAG_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define FRAG_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

// loads this invocation's share of steps k0 .. k0 + 7 of both operands: 4 steps of the input
// at its position, 4 steps of its output channel's weights. No branch guards a load, so that
// all 8 are in flight at once (branches around them cost 20% on an H200): outside the steps,
// the positions or the input a load reads element 0 and its value is replaced.
void load_steps(int k0, int k_end, bool n_inside, int lk, ivec3 origin, int o,
    bool o_inside, out f16vec4 in_v[PER], out f16vec4 w_v[PER])
{
    for (int r = 0; r < PER; r++)
    {
        const int k = k0 + lk + r * 2;
        const bool k_inside = k < k_end;
        const int at = window_step(origin, k);
        const bool load = n_inside && k_inside && at >= 0;
        const f16vec4 v = f16vec4(buffer_ld4(bottom_blob_data, load ? in_base + at : 0));
        in_v[r] = load ? v : (n_inside && k_inside ? f16vec4(p.pad_value) : f16vec4(0.hf));
        const bool w_inside = o_inside && k_inside;
        const f16vec4 wv = f16vec4(buffer_ld4(weight_data, w_inside ? w_base + k * psc(outc) * 4 + o : 0));
        w_v[r] = w_inside ? wv : f16vec4(0.hf);
    }
}

// writes one accumulator, positions on0 .. on0 + 15 of output blocks om0 .. om0 + 3, through
// subgroup sg's scratch, column-major by position: the 4 output channels of one position are
// one vec4
void write_out(FRAG_C acc, int sg, int lane, int on0, int om0, int N, int M, int slice)
{
    coopMatStore(acc, tile_c, sg * 16 * LDC, LDC, gl_CooperativeMatrixLayoutColumnMajor);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    for (int e = lane; e < 64; e += 32)
    {
        const int on = on0 + e % 16;
        const int om = om0 + e / 16;
        const vec4 s = tile_c[(sg * 16 + e % 16) * LDC + e / 16];
        if (on < N && om < M)
        {
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
    subgroupMemoryBarrierShared();
    subgroupBarrier();
}

void main()
{
#define TILE_ROWS TILE_MB
#include "convolution_gemm_tile.comp"
    const int K = psc(c) * kernel_w * kernel_h * kernel_d;
    const int per_slice = (K + splits - 1) / splits;
    const int k_begin = slice * per_slice;
    const int k_end = min(K, k_begin + per_slice);

    // what this invocation stages: the input at position n0 + row and the weights of output
    // channel m0 · 4 + row, steps lk, lk + 2, lk + 4, lk + 6 of each stage
    const int row = tid % 64;
    const int lk = tid / 64;
    const int n = n0 + row;
    const bool n_inside = n < N;
    const ivec3 origin = window_origin(n);
    const int o = m0 * 4 + row;
    const bool o_inside = o < M * 4;

    // this subgroup's quarter: output channels sm .. sm + 31, positions sn .. sn + 31
    const int sg = int(gl_SubgroupID);
    const int sm = (sg % 2) * 32;
    const int sn = (sg / 2) * 32;

    FRAG_C c00 = FRAG_C(0.f);
    FRAG_C c01 = FRAG_C(0.f);
    FRAG_C c10 = FRAG_C(0.f);
    FRAG_C c11 = FRAG_C(0.f);

    f16vec4 next_in[PER];
    f16vec4 next_w[PER];
    load_steps(k_begin, k_end, n_inside, lk, origin, o, o_inside, next_in, next_w);

    for (int k0 = k_begin; k0 < k_end; k0 += STEPS)
    {
        for (int r = 0; r < PER; r++)
        {
            tile_b[row * LD + lk + r * 2] = next_in[r];
            tile_a[row * LD + lk + r * 2] = next_w[r];
        }
        barrier();

        if (k0 + STEPS < k_end)
            load_steps(k0 + STEPS, k_end, n_inside, lk, origin, o, o_inside, next_in, next_w);

        for (int kh = 0; kh < STEPS / 4; kh++)
        {
            FRAG_A a0;
            FRAG_A a1;
            FRAG_B b0;
            FRAG_B b1;
            coopMatLoad(a0, tile_a, sm * LD + kh * 4, LD, gl_CooperativeMatrixLayoutRowMajor);
            coopMatLoad(a1, tile_a, (sm + 16) * LD + kh * 4, LD, gl_CooperativeMatrixLayoutRowMajor);
            coopMatLoad(b0, tile_b, sn * LD + kh * 4, LD, gl_CooperativeMatrixLayoutColumnMajor);
            coopMatLoad(b1, tile_b, (sn + 16) * LD + kh * 4, LD, gl_CooperativeMatrixLayoutColumnMajor);
            c00 = coopMatMulAdd(a0, b0, c00);
            c01 = coopMatMulAdd(a0, b1, c01);
            c10 = coopMatMulAdd(a1, b0, c10);
            c11 = coopMatMulAdd(a1, b1, c11);
        }
        barrier();
    }

    // each accumulator through this subgroup's scratch
    const int lane = int(gl_SubgroupInvocationID);
    write_out(c00, sg, lane, n0 + sn, m0 + sm / 4, N, M, slice);
    write_out(c01, sg, lane, n0 + sn + 16, m0 + sm / 4, N, M, slice);
    write_out(c10, sg, lane, n0 + sn, m0 + sm / 4 + 4, N, M, slice);
    write_out(c11, sg, lane, n0 + sn + 16, m0 + sm / 4 + 4, N, M, slice);
}
