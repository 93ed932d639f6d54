// A tensor-core GEMM's main loop alone, for choosing gemm_cm's tile shape on a device:
// out (M × N, fp16) = A (M × K, fp16, rows along K) · B (fp16, BT 1: stored N × K, BT 0:
// stored K × N), fp32 sums; M, N, K multiples of the tile and of DEPTH, every load one aligned
// 16-byte group. SGM × SGN subgroups of 32, each FM × FN 16 × 16 accumulators; DEPTH steps
// per stage, STAGES shared-memory stages (2: loads of stage s + 1 go to registers while stage
// s is multiplied, one barrier per stage). bench/gemm_tile.rs times it.
#version 450
#extension GL_EXT_shader_16bit_storage: require
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#extension GL_KHR_memory_scope_semantics: require
#extension GL_KHR_cooperative_matrix: require
#extension GL_KHR_shader_subgroup_basic: require
#extension GL_EXT_control_flow_attributes: require

#define THREADS (32 * SGM * SGN)
#define TM (SGM * 16 * FM)
#define TN (SGN * 16 * FN)
layout (local_size_x = THREADS) in;

layout (binding = 0) readonly buffer a_blob { uvec4 a_data[]; };
layout (binding = 1) readonly buffer b_blob { uvec4 b_data[]; };
layout (binding = 2) writeonly buffer c_blob { float16_t c_data[]; };

layout (push_constant) uniform parameter { int m; int n; int k; } p;

// groups of 8 along the depth in a stage, and a staged row of them with 1 of padding
#define KG (DEPTH / 8)
#define LDK (KG + 1)
#define A_STAGE (TM * LDK)
#define A_PER (TM * KG / THREADS)
#if BT
#define B_STAGE (TN * LDK)
#define B_PER (TN * KG / THREADS)
#else
// B along its rows: DEPTH staged rows of TN / 8 groups and 1 of padding
#define LDN (TN / 8 + 1)
#define B_STAGE (DEPTH * LDN)
#define B_PER (DEPTH * (TN / 8) / THREADS)
#endif
shared uvec4 tile_a[STAGES * A_STAGE];
shared uvec4 tile_b[STAGES * B_STAGE];

#define FRAG_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FRAG_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define FRAG_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define FRAG_H coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

void main()
{
    const int t = int(gl_LocalInvocationID.x);
    const int tiles_x = int(gl_NumWorkGroups.x);
    const int tiles_y = int(gl_NumWorkGroups.y);
    const int id = int(gl_WorkGroupID.y) * tiles_x + int(gl_WorkGroupID.x);
    const int band = id / (BAND * tiles_x);
    const int band_rows = min(tiles_y - band * BAND, BAND);
    const int in_band = id % (BAND * tiles_x);
    const int col0 = (in_band / band_rows) * TN;
    const int row0 = (band * BAND + in_band % band_rows) * TM;

    // this invocation's groups: the first one's index (in uvec4) at depth 0 and staged slot,
    // the others THREADS / KG lines further on (a constant step: no per-group registers)
    const int a_at = ((row0 + t / KG) * p.k + (t % KG) * 8) / 8;
    const int a_slot = (t / KG) * LDK + t % KG;
    const int a_line_step = (THREADS / KG) * p.k / 8;
#define A_SLOT_STEP ((THREADS / KG) * LDK)
#if BT
    const int b_at = ((col0 + t / KG) * p.k + (t % KG) * 8) / 8;
    const int b_slot = (t / KG) * LDK + t % KG;
    const int b_line_step = (THREADS / KG) * p.k / 8;
#define B_SLOT_STEP ((THREADS / KG) * LDK)
    const int b_step = DEPTH / 8;
#else
    const int b_at = ((t / (TN / 8)) * p.n + col0 + (t % (TN / 8)) * 8) / 8;
    const int b_slot = (t / (TN / 8)) * LDN + t % (TN / 8);
    const int b_line_step = (THREADS / (TN / 8)) * p.n / 8;
#define B_SLOT_STEP ((THREADS / (TN / 8)) * LDN)
    const int b_step = DEPTH * p.n / 8;
#endif

    const int sg = int(gl_SubgroupID);
    const int sm = (sg % SGM) * 16 * FM;
    const int sn = (sg / SGM) * 16 * FN;

    FRAG_C acc[FM * FN];
    [[unroll]] for (int i = 0; i < FM * FN; i++)
        acc[i] = FRAG_C(0.f);

    uvec4 ra[A_PER];
    uvec4 rb[B_PER];
#ifndef SAME
#define SAME 1
#endif
// (SAME 0: every stage loads stage 0's groups again, a diagnostic of the loads' cost from L1)
#define FETCH(s) \
    [[unroll]] for (int g = 0; g < A_PER; g++) \
        ra[g] = a_data[a_at + g * a_line_step + (s) * SAME * (DEPTH / 8)]; \
    [[unroll]] for (int g = 0; g < B_PER; g++) \
        rb[g] = b_data[b_at + g * b_line_step + (s) * SAME * b_step];
#define STASH(stage) \
    [[unroll]] for (int g = 0; g < A_PER; g++) \
        tile_a[(stage) * A_STAGE + a_slot + g * A_SLOT_STEP] = ra[g]; \
    [[unroll]] for (int g = 0; g < B_PER; g++) \
        tile_b[(stage) * B_STAGE + b_slot + g * B_SLOT_STEP] = rb[g];
#if BT
#define LOAD_B(f, stage, kh, j) coopMatLoad(f, tile_b, (stage) * B_STAGE + (sn + 16 * (j)) * LDK + (kh) * 2, LDK, gl_CooperativeMatrixLayoutColumnMajor)
#else
#define LOAD_B(f, stage, kh, j) coopMatLoad(f, tile_b, (stage) * B_STAGE + (kh) * 16 * LDN + (sn + 16 * (j)) / 8, LDN, gl_CooperativeMatrixLayoutRowMajor)
#endif
#ifndef ASTREAM
#define ASTREAM 0
#endif
#if ASTREAM
#define MULTIPLY(stage) \
    [[unroll]] for (int kh = 0; kh < DEPTH / 16; kh++) \
    { \
        FRAG_B fb[FN]; \
        [[unroll]] for (int j = 0; j < FN; j++) \
            LOAD_B(fb[j], stage, kh, j); \
        [[unroll]] for (int i = 0; i < FM; i++) \
        { \
            FRAG_A fa; \
            coopMatLoad(fa, tile_a, (stage) * A_STAGE + (sm + 16 * i) * LDK + kh * 2, LDK, gl_CooperativeMatrixLayoutRowMajor); \
            [[unroll]] for (int j = 0; j < FN; j++) \
                acc[i * FN + j] = coopMatMulAdd(fa, fb[j], acc[i * FN + j]); \
        } \
    }
#else
#define MULTIPLY(stage) \
    [[unroll]] for (int kh = 0; kh < DEPTH / 16; kh++) \
    { \
        FRAG_A fa[FM]; \
        FRAG_B fb[FN]; \
        [[unroll]] for (int i = 0; i < FM; i++) \
            coopMatLoad(fa[i], tile_a, (stage) * A_STAGE + (sm + 16 * i) * LDK + kh * 2, LDK, gl_CooperativeMatrixLayoutRowMajor); \
        [[unroll]] for (int j = 0; j < FN; j++) \
            LOAD_B(fb[j], stage, kh, j); \
        [[unroll]] for (int i = 0; i < FM; i++) \
            [[unroll]] for (int j = 0; j < FN; j++) \
                acc[i * FN + j] = coopMatMulAdd(fa[i], fb[j], acc[i * FN + j]); \
    }
#endif

#ifndef FENCE_KIND
#define FENCE
#elif FENCE_KIND == 1
#define FENCE subgroupBarrier();
#else
#define FENCE barrier();
#endif
    FETCH(0)
    STASH(0)
    barrier();

    const int stages = p.k / DEPTH;
#if STAGES == 1
    for (int s = 0; s < stages; s++)
    {
        const bool more = s + 1 < stages;
        if (more)
        {
            FETCH(s + 1)
        }
        MULTIPLY(0)
        barrier();
        if (more)
        {
            STASH(0)
        }
        barrier();
    }
#else
    // stage pairs, so that every shared offset is a constant (stages is even here)
    for (int s = 0; s < stages; s += 2)
    {
        FETCH(s + 1)
        MULTIPLY(0)
        FENCE
        STASH(1)
        barrier();
        const bool more = s + 2 < stages;
        if (more)
        {
            FETCH(s + 2)
        }
        MULTIPLY(1)
        FENCE
        if (more)
        {
            STASH(0)
        }
        barrier();
    }
#endif

    [[unroll]] for (int i = 0; i < FM; i++)
        [[unroll]] for (int j = 0; j < FN; j++)
        {
            FRAG_H h = FRAG_H(acc[i * FN + j]);
            coopMatStore(h, c_data, (row0 + sm + 16 * i) * p.n + col0 + sn + 16 * j, p.n, gl_CooperativeMatrixLayoutRowMajor);
        }
}
