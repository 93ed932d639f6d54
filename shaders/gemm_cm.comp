// gemm.comp on cooperative matrices (VK_KHR_cooperative_matrix: tensor cores on NVIDIA): the
// same product, operands, strides, C broadcasts and specialization constants 0-4, for fp16
// storage blobs only (the runtime takes it only for those: A and B are read as raw fp16 bits,
// 8 to a uvec4, and products are fp16 × fp16 summed in fp32).
//
// A workgroup of 4 subgroups (of 32: the runtime takes this shader only where subgroups are
// 32 wide), 2 along the rows and 2 along the columns, computes a TM × TN block of out; each
// subgroup FM × FN 16 × 16 fp32 accumulators (PER 4: 128 × 128 tiles, each subgroup 64 × 64;
// PER 2: 64 × 64 tiles, 32 × 32, for products too small to fill the device otherwise); the
// workgroups take the tiles in bands of 8 tile rows, so the ones running at once share their
// operands' blocks in L2. Per stage of DEPTH steps every invocation loads its share of both
// operands, groups of 8 values consecutive in memory (one 16-byte load where the operand's
// strides and sizes allow, else 8 scalar ones, a path compiled only where the runtime cannot
// rule it out), into registers while the previous stage is multiplied, then stages them in
// shared memory as they lie (a tile's line along the depth or along the lines, rows padded by
// 16 bytes off the bank period), read back with the matching matrix layout. No branch guards
// a load, so that all of them are in flight at once (see DEFINE_FETCH for what a load past
// the operand reads). Each accumulator goes through a 1 KiB scratch of its subgroup
// to be written with C and alpha.
// Shape chosen with bench/gemm_tile.rs on an H100 (4096³, aligned loads): 4 subgroups of
// 64 × 64 and 64 steps a stage 0.57 ms, against 0.90 for 8 subgroups of 64 × 32 (more
// fragment loads per multiply-add), 0.60 for 32 steps, 0.60 for 128 × 256 tiles; two stages
// of 32 in shared memory (one barrier a stage) were slower at 0.86-0.91 whatever the fences.
// Dispatch: global [ceil(N / TN) * 128, ceil(M / TM), batches].
#version 450

#include "prelude_coopmat.comp"

#include "vulkan_activation.comp"

// A and B as raw fp16 bits, 8 to a uvec4
#define GEMM_OPERAND uvec4
#include "gemm_params.comp"
// 1: every group of 8 either operand loads is one aligned 16-byte load (the runtime checks the
// strides, sizes and batch offsets). Only then is the 8-load fallback left out of the
// shader: its mere presence, behind a branch not taken, tripled the 4096³ product's time.
// 2: that, and K a multiple of DEPTH: no load needs zeroing (the runtime's Engine::depth).
#ifdef LITERAL_FORM
const int aligned = 2;
#else
layout (constant_id = 10) const int aligned = 0;
#endif

// accumulators per subgroup along the rows and the columns, the workgroup's tile
const int FM = PER;
const int FN = PER;
const int TM = 32 * FM;
const int TN = 32 * FN;
// tile rows per band of the workgroup order
#define BAND 8
// steps per stage: 64 for the large tiles (0.86 against 2.22 ms with 32 for 4096³ on an H100,
// more loads in flight per barrier), 128 for the small ones, which small products take: half
// as many stages, each waiting on its loads, in the same shared memory and registers
const int DEPTH = 256 / PER;
// invocations of a workgroup
#define THREADS 128
// groups of 8 values each invocation loads per operand and stage (8 at either size)
const int GROUPS = DEPTH * 32 * PER / 8 / THREADS;
#define MAX_GROUPS 8
// groups of a line along the depth
const int ROW_GROUPS = DEPTH / 8;
// a staged row along the depth: its groups and 1 of padding
const int LDK = ROW_GROUPS + 1;
// a staged tile in groups at either size: 128 lines × (8 + 1), 64 × (16 + 1), or along the
// lines 64 steps × (16 + 1), 128 × (8 + 1)
#define STAGED 1152
layout (local_size_x = THREADS) in;


shared uvec4 tile_a[STAGED];
shared uvec4 tile_b[STAGED];
// a scratch row: 16 fp32 and 4 of padding
#define LDC 20
shared float tile_c[4 * 16 * LDC];

#define FRAG_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FRAG_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define FRAG_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

// One operand as this invocation loads it: its first group's line and step in the tile and
// slot in the staged tile, and how far each next group lies from the one before (groups are
// THREADS apart in the workgroup's order, a constant step in each: per-group arrays of them
// cost 48 registers, which with 16 accumulators spilled the accumulators to local memory),
// `across` when its stored rows run along the tile's lines (A transposed, B not), `whole` when
// every group is one aligned 16-byte load.
struct Side
{
    int base;
    int rs;
    int lines;
    bool across;
    bool whole;
    int line;
    int step;
    int slot;
    int d_line;
    int d_step;
    int d_slot;
};

// The staged row of `tl` lines along the lines: tl / 8 groups and 1 of padding.
int ld_lines(int tl)
{
    return tl / 8 + 1;
}

Side side_of(int t, int base, int rs, int line0, int lines, bool across, int tl)
{
    Side s;
    s.base = base;
    s.rs = rs;
    s.lines = lines;
    s.across = across;
    s.whole = rs % 8 == 0 && s.base % 8 == 0 && (across ? lines % 8 == 0 : p.k % 8 == 0);
    if (across)
    {
        // a step's tl / 8 groups (which divides THREADS), step after step
        const int per_step = tl / 8;
        s.line = line0 + (t % per_step) * 8;
        s.step = t / per_step;
        s.slot = s.step * ld_lines(tl) + t % per_step;
        s.d_line = 0;
        s.d_step = THREADS / per_step;
        s.d_slot = s.d_step * ld_lines(tl);
    }
    else
    {
        // a line's ROW_GROUPS groups, line after line
        s.line = line0 + t / ROW_GROUPS;
        s.step = (t % ROW_GROUPS) * 8;
        s.slot = (t / ROW_GROUPS) * LDK + t % ROW_GROUPS;
        s.d_line = THREADS / ROW_GROUPS;
        s.d_step = 0;
        s.d_slot = (THREADS / ROW_GROUPS) * LDK;
    }
    return s;
}

// Defines `name(s, k0, g)`: group g of side s at depth k0 from buffer `data`, zero outside.
#define DEFINE_FETCH(name, data) \
uvec4 name(Side s, int k0, int g) \
{ \
    const int line = s.line + g * s.d_line; \
    const int k = k0 + s.step + g * s.d_step; \
    const int at = s.base + (s.across ? k * s.rs + line : line * s.rs + k); \
    if (aligned >= 1 || s.whole) \
    { \
        /* no check of the lines: one past the operand's end only reaches outputs that are not \
           written, and its load stays inside the buffer by robustBufferAccess (which Vulkan \
           requires and wgpu enables); steps past K read zeros unless K is a multiple of DEPTH \
           (aligned 2). Selects on every load's index as well as its value took 1.02 ms \
           against 0.63 for 4096³ on an H100. */ \
        const uvec4 v = data[at >> 3]; \
        return aligned == 2 || k < p.k ? v : uvec4(0); \
    } \
    uint h[8]; \
    [[unroll]] for (int e = 0; e < 8; e++) \
    { \
        const bool inside = s.across ? (line + e < s.lines && k < p.k) : (line < s.lines && k + e < p.k); \
        const int i = inside ? at + e : 0; \
        const uint word = data[i / 8][(i % 8) / 2]; \
        h[e] = inside ? (i % 2 == 0 ? word & 0xffffu : word >> 16) : 0u; \
    } \
    return uvec4(h[0] | (h[1] << 16), h[2] | (h[3] << 16), h[4] | (h[5] << 16), h[6] | (h[7] << 16)); \
}

DEFINE_FETCH(fetch_a, a_data)
DEFINE_FETCH(fetch_b, b_data)

// Writes accumulator (i, j) of the subgroup whose block starts at (row0, col0) through its
// scratch, along out's stored rows, with the descales, C, alpha and the activation.
void write_block(FRAG_C c, int i, int j, int sg, int lane, int row0, int col0, int at0)
{
    coopMatStore(c, tile_c, sg * 16 * LDC, LDC, gl_CooperativeMatrixLayoutRowMajor);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    for (int e = lane; e < 256; e += 32)
    {
        const int r = out_trans == 1 ? e % 16 : e / 16;
        const int cl = out_trans == 1 ? e / 16 : e % 16;
        const int row = row0 + 16 * i + r;
        const int col = col0 + 16 * j + cl;
        if (row < p.m && col < p.n)
        {
            float v = tile_c[(sg * 16 + r) * LDC + cl];
            if (int8_product == 1)
                v *= a_descale_data[row] * b_descale_data[0];
            if (p.c_type >= 0)
            {
                const int ci = p.c_type == 0 ? 0 : p.c_type == 4 ? col : p.c_type == 3 ? row * p.c_rs + col : row;
                v += beta * float(buffer_ld1(c_data, ci));
            }
            v *= alpha;
            const int at = out_trans == 1 ? col * p.out_rs + row : row * p.out_rs + col;
            buffer_st1(top_data, at0 + at, activation_afp(afp(v), activation_type, activation_param_0, activation_param_1));
        }
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
}

void main()
{
    const int t = int(gl_LocalInvocationID.x);
    // tiles in bands of BAND tile rows, column by column within a band: the workgroups
    // running at once share their operands' blocks in L2
    const int tiles_x = int(gl_NumWorkGroups.x);
    const int tiles_y = int(gl_NumWorkGroups.y);
    const int id = int(gl_WorkGroupID.y) * tiles_x + int(gl_WorkGroupID.x);
    const int band = id / (BAND * tiles_x);
    const int band_rows = min(tiles_y - band * BAND, BAND);
    const int in_band = id % (BAND * tiles_x);
    const int col0 = (in_band / band_rows) * TN;
    const int row0 = (band * BAND + in_band % band_rows) * TM;

    const int z = int(gl_WorkGroupID.z);

    const Side sa = side_of(t, batch_at(z, p.a_cstep, p.a_ostep), p.a_rs, row0, p.m, trans_a == 1, TM);
    const Side sb = side_of(t, batch_at(z, p.b_cstep, p.b_ostep), p.b_rs, col0, p.n, trans_b == 0, TN);

    // this subgroup's block: rows sm .. sm + 16 FM - 1, columns sn .. sn + 16 FN - 1
    const int sg = int(gl_SubgroupID);
    const int sm = (sg % 2) * 16 * FM;
    const int sn = (sg / 2) * 16 * FN;

    // arrays of the largest size (PER 4), with loops of literal bounds over them, so that every
    // index is a constant once the loops unroll (see the epilogue)
    FRAG_C acc[16];
    [[unroll]] for (int i = 0; i < 16; i++)
        acc[i] = FRAG_C(0.f);

    uvec4 next_a[MAX_GROUPS];
    uvec4 next_b[MAX_GROUPS];
    [[unroll]] for (int g = 0; g < MAX_GROUPS; g++)
    {
        if (g >= GROUPS)
            break;
        next_a[g] = fetch_a(sa, 0, g);
        next_b[g] = fetch_b(sb, 0, g);
    }

    for (int k0 = 0; k0 < p.k; k0 += DEPTH)
    {
        [[unroll]] for (int g = 0; g < MAX_GROUPS; g++)
        {
            if (g >= GROUPS)
                break;
            tile_a[sa.slot + g * sa.d_slot] = next_a[g];
            tile_b[sb.slot + g * sb.d_slot] = next_b[g];
        }
        barrier();

        if (k0 + DEPTH < p.k)
        {
            [[unroll]] for (int g = 0; g < MAX_GROUPS; g++)
            {
                if (g >= GROUPS)
                    break;
                next_a[g] = fetch_a(sa, k0 + DEPTH, g);
                next_b[g] = fetch_b(sb, k0 + DEPTH, g);
            }
        }

        [[unroll]] for (int kh = 0; kh < 8; kh++)
        {
            if (kh >= DEPTH / 16)
                break;
            FRAG_A fa[4];
            FRAG_B fb[4];
            // a fragment's offset and stride in groups of 8, by how the side was staged
            [[unroll]] for (int i = 0; i < 4; i++)
            {
                if (i >= FM)
                    break;
                if (trans_a == 1)
                    coopMatLoad(fa[i], tile_a, kh * 16 * ld_lines(TM) + (sm + 16 * i) / 8, ld_lines(TM), gl_CooperativeMatrixLayoutColumnMajor);
                else
                    coopMatLoad(fa[i], tile_a, (sm + 16 * i) * LDK + kh * 2, LDK, gl_CooperativeMatrixLayoutRowMajor);
            }
            [[unroll]] for (int j = 0; j < 4; j++)
            {
                if (j >= FN)
                    break;
                if (trans_b == 0)
                    coopMatLoad(fb[j], tile_b, kh * 16 * ld_lines(TN) + (sn + 16 * j) / 8, ld_lines(TN), gl_CooperativeMatrixLayoutRowMajor);
                else
                    coopMatLoad(fb[j], tile_b, (sn + 16 * j) * LDK + kh * 2, LDK, gl_CooperativeMatrixLayoutColumnMajor);
            }
            [[unroll]] for (int i = 0; i < 4; i++)
                [[unroll]] for (int j = 0; j < 4; j++)
                    if (i < FM && j < FN)
                        acc[i * 4 + j] = coopMatMulAdd(fa[i], fb[j], acc[i * 4 + j]);
        }
        barrier();
    }

    // each accumulator through this subgroup's scratch, named by constant indices: one indexed
    // at run time here (a loop the driver does not unroll) puts the whole array in local
    // memory, and every multiply-add above with it (4.4 ms against 0.2 for 4096³ on an H100)
    const int lane = int(gl_SubgroupInvocationID);
    const int at0 = batch_at(z, p.out_cstep, p.out_ostep);
    const int r0 = row0 + sm;
    const int c0 = col0 + sn;
    // PER 2: the 2 × 2 accumulators 0, 1, 4, 5; PER 4 all 16
    write_block(acc[0], 0, 0, sg, lane, r0, c0, at0);
    write_block(acc[1], 0, 1, sg, lane, r0, c0, at0);
    write_block(acc[4], 1, 0, sg, lane, r0, c0, at0);
    write_block(acc[5], 1, 1, sg, lane, r0, c0, at0);
    if (PER > 2)
    {
        write_block(acc[2], 0, 2, sg, lane, r0, c0, at0);
        write_block(acc[3], 0, 3, sg, lane, r0, c0, at0);
        write_block(acc[6], 1, 2, sg, lane, r0, c0, at0);
        write_block(acc[7], 1, 3, sg, lane, r0, c0, at0);
        write_block(acc[8], 2, 0, sg, lane, r0, c0, at0);
        write_block(acc[9], 2, 1, sg, lane, r0, c0, at0);
        write_block(acc[10], 2, 2, sg, lane, r0, c0, at0);
        write_block(acc[11], 2, 3, sg, lane, r0, c0, at0);
        write_block(acc[12], 3, 0, sg, lane, r0, c0, at0);
        write_block(acc[13], 3, 1, sg, lane, r0, c0, at0);
        write_block(acc[14], 3, 2, sg, lane, r0, c0, at0);
        write_block(acc[15], 3, 3, sg, lane, r0, c0, at0);
    }

}
