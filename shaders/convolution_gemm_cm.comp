// convolution_gemm on cooperative matrices (VK_KHR_cooperative_matrix: tensor cores on NVIDIA):
// the same implicit GEMM, pack4 buffer blobs in and out, the same weights (step-major,
// [K][outc] vec4 over 4 input lanes), the same split of the steps over the grid's z with
// convolution_gemm_sum adding the slices. Products are fp16 × fp16 summed in fp32, so only
// variants whose blobs are fp16 already take it (the runtime picks it for those).
//
// A workgroup of 4 subgroups (of 32: the runtime takes this shader only where subgroups are
// 32 wide) computes TM output channels × TN positions, the tile of constant 13. The runtime
// takes tile 0, 64 × 64 (2 × 2 subgroups of 32 × 32), and tile 5, 128 × 64 (subgroups of
// 64 × 32), for 3-D windows of at least 128 outputs over at most 1024 positions, whose steps
// are split over the grid: each input staged serves twice the outputs (r3d_18's 14² × 4 and
// 7² × 2 layers 89 -> 62 and 57 -> 42 us on an H200; on 28² × 8 it lost, 93 -> 107, and on
// 2-D nets too: alexnet 0.27 -> 0.30 ms, mobilenet_v2 0.67 -> 0.71). The
// others pass the same tests on an H200 but did not win there (nor did 16 steps a stage, nor
// 16-byte weight loads, which took RRDBNet-6 from 12.0 to 14.0 ms): 1-3 (128 × 128, 64 × 256,
// 32 × 256: subgroups of 64 × 64 or 32 × 64) lost on every network measured (vgg16 4.7 ms against 1.0 with 128 × 128 everywhere; kept to
// layers of enough workgroups, RRDBNet-6 21 ms against 17.5, resnet50's device time unchanged),
// and 4 (16 × 128, 1 × 4 subgroups of 16 × 32), a quarter of tile 0's products on layers of at
// most 16 outputs, left an SR model's last convolution (64 to 3 channels at 1024²) at 1.21 ms
// against 1.18 (two runs): the loads bound it, not the products. They stay for other devices'
// measurements. This one body for every tile (arrays of the largest size, loops of literal
// bounds cut at the tile's) also runs tile 0 faster than a body written for 64 × 64 alone:
// RRDBNet-6 14.3 against 16.6 ms, RRDBNet-23 41.2 against 49.2, in one H200 run.
// Per 8 steps (32 input channels · kernel positions) every invocation stages its share of the
// weights and of the inputs (the window, zero past the steps or the positions, the pad value
// outside the input) as fp16 in shared memory, weights row-major [output][step], inputs
// column-major [position][step], both rows padded to 80 bytes (16-byte aligned, as the loads
// need, and off the 64-byte bank period). Each accumulator goes through a 1 KiB scratch of its
// subgroup to be written as vec4 of 4 channels with the bias and the activation: a whole-tile
// result array (17 KiB) halved the workgroups an SM holds, and with them the loads in flight,
// and took the vgg16 convolutions from 0.92 to 1.80 ms on an H200. Adding a split layer's
// slices in this dispatch (each tile's last slice to arrive on an atomic counter adds them, its
// partial sums `coherent`, the counters one read-write buffer bound to every GEMM) passed the
// tests and lost on the same H200: r3d_18 1.86-1.93 -> 2.82-2.96 ms, resnet50 1.10 -> 1.52.
// r3d_18's 64-channel 3×3×3 layers at 16 × 56² (167 us each, 66 TFLOP/s, 104 registers: 4
// workgroups per SM) kept their tile 0 against each of these, measured and dropped: 64 × 128
// (168 -> 180 us split in two, 218 whole); 16 steps a stage (128 registers; 223); the next two
// stages' loads in flight (121 registers; 175); 8 subgroups over two position tiles sharing one
// stage of weights (221). Neither more workgroups (the steps split in 2 or 4: 184, 196) nor
// more loads in flight moved it.
#version 450

#include "prelude_coopmat.comp"

#define IN_PACK 4
#define OUT_PACK 4
#include "convolution_head.comp"
#include "convolution_gemm_epilogue.comp"
#include "convolution_window_table.comp"

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

// the tile: 0 64 × 64, 1 128 × 128, 2 64 × 256, 3 32 × 256, 4 16 × 128, 5 128 × 64 (output
// channels × positions)
layout (constant_id = 13) const int tile = 0;
// subgroups along the outputs (the other 4 / SG_M along the positions), 16 × 16 accumulators
// per subgroup along the outputs and the positions
const int SG_M = tile >= 2 && tile <= 4 ? 1 : 2;
const int FM = tile == 1 || tile == 2 || tile == 5 ? 4 : tile == 4 ? 1 : 2;
const int FN = tile == 0 || tile == 4 || tile == 5 ? 2 : 4;
const int TM = SG_M * FM * 16;
const int TN = (4 / SG_M) * FN * 16;
// output blocks of 4 and positions per workgroup
const int TILE_MB = TM / 4;
#define TILE_N TN
// steps per stage (16 steps with the 64 × 64 tile took resnet50 from 1.6 to 4.1 ms: fewer
// workgroups in flight)
#define STEPS 8
// a staged row: 8 steps of f16vec4 and 2 of padding
#define LD (STEPS + 2)
// loads each invocation makes per stage, of the inputs and of the weights (at most 16 and 8)
const int LOADS_N = TN * STEPS / 128;
const int LOADS_M = TM * STEPS / 128;
#define MAX_LOADS_N 16
#define MAX_LOADS_M 8
// a result row (one position) of a subgroup's scratch: 4 vec4 and 1 of padding
#define LDC 5
layout (local_size_x = 128) in;

shared f16vec4 tile_a[TM * LD];
shared f16vec4 tile_b[TN * LD];
// per subgroup, 16 positions of one accumulator
shared vec4 tile_c[4 * 16 * LDC];

#define FRAG_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FRAG_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define FRAG_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

// Load j of this invocation (its element tid + 128 j of the stage, line-major over TN positions
// or TM outputs) lies on line (tid + 128 j) % lines, step (tid + 128 j) / lines: with 256
// positions, two lines (q 0 and 1), else one.
int load_line(int tid, int j, int lines)
{
    return (tid + 128 * j) % lines;
}

int load_step(int tid, int j, int lines)
{
    return (tid + 128 * j) / lines;
}

// loads this invocation's share of steps k0 .. k0 + 7 of both operands. No branch guards a
// load, so that all are in flight at once (branches around them cost 20% on an H200): outside
// the steps, the positions or the input a load reads element 0 and its value is replaced.
void load_steps(int tid, int k0, int k_end, int n0, int N, ivec3 origin[2], TabledWindow win[2],
    int m0, int M, out f16vec4 in_v[MAX_LOADS_N], out f16vec4 w_v[MAX_LOADS_M])
{
    [[unroll]] for (int j = 0; j < MAX_LOADS_N; j++)
    {
        if (j >= LOADS_N)
            break;
        const int k = k0 + load_step(tid, j, TN);
        const bool n_inside = n0 + load_line(tid, j, TN) < N;
        const bool k_inside = k < k_end;
        const int q = TN > 128 ? j % 2 : 0;
        const int at = tabled_step(win[q], origin[q], k);
        const bool load = n_inside && k_inside && at >= 0;
        const f16vec4 v = f16vec4(buffer_ld4(bottom_blob_data, load ? in_base + at : 0));
        in_v[j] = load ? v : (n_inside && k_inside ? f16vec4(p.pad_value) : f16vec4(0.hf));
    }
    [[unroll]] for (int j = 0; j < MAX_LOADS_M; j++)
    {
        if (j >= LOADS_M)
            break;
        const int k = k0 + load_step(tid, j, TM);
        const int o = m0 * 4 + load_line(tid, j, TM);
        const bool w_inside = o < M * 4 && k < k_end;
        const f16vec4 wv = f16vec4(buffer_ld4(weight_data, w_inside ? w_base + k * psc(outc) * 4 + o : 0));
        w_v[j] = w_inside ? wv : f16vec4(0.hf);
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

    // the windows of the positions this invocation stages (the second only with 256)
    ivec3 origin[2];
    origin[0] = window_origin(n0 + load_line(tid, 0, TN));
    origin[1] = TN > 128 ? window_origin(n0 + load_line(tid, 1, TN)) : origin[0];
    TabledWindow win[2];
    win[0] = tabled_window(origin[0]);
    win[1] = TN > 128 ? tabled_window(origin[1]) : win[0];
    fill_tap_offsets(tid);
    if (TABLED)
        barrier();

    // this subgroup's block: output channels sm .. sm + 16 FM - 1, positions sn .. sn + 16 FN - 1
    const int sg = int(gl_SubgroupID);
    const int sm = (sg % SG_M) * 16 * FM;
    const int sn = (sg / SG_M) * 16 * FN;

    // arrays of the largest size, with loops of literal bounds over them, so that every index
    // is a constant once the loops unroll
    FRAG_C acc[16];
    [[unroll]] for (int i = 0; i < 16; i++)
        acc[i] = FRAG_C(0.f);

    f16vec4 next_in[MAX_LOADS_N];
    f16vec4 next_w[MAX_LOADS_M];
    load_steps(tid, k_begin, k_end, n0, N, origin, win, m0, M, next_in, next_w);

    for (int k0 = k_begin; k0 < k_end; k0 += STEPS)
    {
        [[unroll]] for (int j = 0; j < MAX_LOADS_N; j++)
        {
            if (j >= LOADS_N)
                break;
            tile_b[load_line(tid, j, TN) * LD + load_step(tid, j, TN)] = next_in[j];
        }
        [[unroll]] for (int j = 0; j < MAX_LOADS_M; j++)
        {
            if (j >= LOADS_M)
                break;
            tile_a[load_line(tid, j, TM) * LD + load_step(tid, j, TM)] = next_w[j];
        }
        barrier();

        if (k0 + STEPS < k_end)
            load_steps(tid, k0 + STEPS, k_end, n0, N, origin, win, m0, M, next_in, next_w);

        [[unroll]] for (int kh = 0; kh < STEPS / 4; kh++)
        {
            FRAG_A a[4];
            FRAG_B b[4];
            [[unroll]] for (int i = 0; i < 4; i++)
            {
                if (i >= FM)
                    break;
                coopMatLoad(a[i], tile_a, (sm + 16 * i) * LD + kh * 4, LD, gl_CooperativeMatrixLayoutRowMajor);
            }
            [[unroll]] for (int j = 0; j < 4; j++)
            {
                if (j >= FN)
                    break;
                coopMatLoad(b[j], tile_b, (sn + 16 * j) * LD + kh * 4, LD, gl_CooperativeMatrixLayoutColumnMajor);
            }
            [[unroll]] for (int i = 0; i < 4; i++)
            {
                if (i >= FM)
                    break;
                [[unroll]] for (int j = 0; j < 4; j++)
                {
                    if (j >= FN)
                        break;
                    acc[i * 4 + j] = coopMatMulAdd(a[i], b[j], acc[i * 4 + j]);
                }
            }
        }
        barrier();
    }

    // each accumulator through this subgroup's scratch
    const int lane = int(gl_SubgroupInvocationID);
    [[unroll]] for (int i = 0; i < 4; i++)
    {
        if (i >= FM)
            break;
        [[unroll]] for (int j = 0; j < 4; j++)
        {
            if (j >= FN)
                break;
            write_out(acc[i * 4 + j], sg, lane, n0 + sn + 16 * j, m0 + sm / 4 + 4 * i, N, M, slice);
        }
    }
}
