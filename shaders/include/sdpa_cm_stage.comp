// What the attention shaders on cooperative matrices (sdpa_cm.comp, sdpa_cm2.comp) share: the
// specialization constants, bindings and push constants, the key block's size, the K and V
// tiles' staging in shared memory with their 16-byte fetches, and the Q fragments' load. A
// workgroup is 4 subgroups (of 32) over 64 query rows, 16 per subgroup; `t` and `sg` are the
// invocation's index in it and its subgroup's.

layout (constant_id = 0) const int attn_mask = 0;
// the head widths in 16s: Q and K's (embed), V's and the output's (dv)
layout (constant_id = 1) const int D16 = 4;
layout (constant_id = 2) const int DV16 = 4;
// key ranges a head's rows are split over (sdpa_cm2 only: 1 in sdpa_cm); workgroup z is
// head · splits + part
layout (constant_id = 4) const int splits = 1;

// keys per block: as many as keep a staged block within 4096 values
const int BC = (D16 <= 4 && DV16 <= 4) ? 64 : 32;
// a staged row of K, V or Q in groups of 8 values, and 1 of padding
const int KW = D16 * 2 + 1;
const int VW = DV16 * 2 + 1;
// a subgroup's scratch row of scores or outputs (fp32: 64 and 4 of padding), in 4-vectors
#define LDS 17

layout (local_size_x = 128) in;

layout (binding = 0) readonly buffer q_blob { uvec4 q_data[]; };
layout (binding = 1) readonly buffer k_blob { uvec4 k_data[]; };
layout (binding = 2) readonly buffer v_blob { uvec4 v_data[]; };
layout (binding = 3) readonly buffer mask_blob { sfp mask_data[]; };
layout (binding = 4) writeonly buffer out_blob { sfp out_data[]; };

#include "sdpa_params.comp"

// a staged block, in uvec4: 64 rows × (8 + 1) or 32 × (16 + 1) groups of 8 (the including
// shader declares its `tile_k` and `tile_v`, of one or more blocks each)
#define STAGE 576

#define FRAG_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FRAG_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define FRAG_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

// Where rows of a block are read and staged: `count` rows from row `first` of `rows` (at
// `base`, `rs` values apart), `w8` groups of 8 values each, `w8 + 1` per staged row. This
// invocation's share is at most 4 groups.
struct Block
{
    int base;
    int rs;
    int rows;
    int count;
    int w8;
};

// Group u of this invocation's share of block rows from `first`, zeros past the last row;
// no branch around the load, so that all of them are in flight at once.
#define DEFINE_FETCH(name, data) \
uvec4 name(int t, Block b, int first, int u) \
{ \
    const int i = t + u * 128; \
    const int r = i / b.w8; \
    const bool inside = i < b.count * b.w8 && first + r < b.rows; \
    const uvec4 x = data[inside ? (b.base + (first + r) * b.rs) / 8 + i % b.w8 : 0]; \
    return inside ? x : uvec4(0); \
}

DEFINE_FETCH(fetch_q, q_data)
DEFINE_FETCH(fetch_k, k_data)
DEFINE_FETCH(fetch_v, v_data)

// Group u of this invocation's share into its staged place, in the tile's block at `at`.
#define STAGE_GROUP(tile, at, b, u, value) \
{ \
    const int i = t + (u) * 128; \
    if (i < (b).count * (b).w8) \
        tile[(at) + (i / (b).w8) * ((b).w8 + 1) + i % (b).w8] = value; \
}

// main's first lines: the invocation `t`, its subgroup `sg` and lane, the workgroup's first
// query row, head `h` and part of the keys, the key/value head `g` it reads, where its mask
// plane starts, and the rows Q, K and V are staged from
#define WORKGROUP_PLACE \
    const int t = int(gl_LocalInvocationID.x); \
    const int sg = int(gl_SubgroupID); \
    const int lane = int(gl_SubgroupInvocationID); \
    const int row0 = int(gl_WorkGroupID.y) * 64; \
    const int h = int(gl_WorkGroupID.z) / splits; \
    const int part = int(gl_WorkGroupID.z) % splits; \
    const int g = h / p.per_group; \
    const int mbase = p.mask_channels > 1 ? h * p.mask_cstep : 0; \
    const Block bq = Block(p.q_offset + h * p.q_cstep, p.q_rs, p.src, BC, D16 * 2); \
    const Block bk = Block(p.k_offset + g * p.k_cstep, p.k_rs, p.dst, BC, D16 * 2); \
    const Block bv = Block(p.v_offset + g * p.v_cstep, p.v_rs, p.dst, BC, DV16 * 2);

// This subgroup's Q fragments of the workgroup's 64 rows from row0, staged BC rows at a time
// through the K tile (which is free until the keys): LOADS(at) loads them from staged row `at`
// (the including shader's fragments, D16 of them).
#define LOAD_Q(LOADS, bq, row0) \
    for (int c0 = 0; c0 < 64; c0 += BC) \
    { \
        uvec4 x[4]; \
        [[unroll]] for (int u = 0; u < 4; u++) \
            x[u] = fetch_q(t, bq, row0 + c0, u); \
        [[unroll]] for (int u = 0; u < 4; u++) \
            STAGE_GROUP(tile_k, 0, bq, u, x[u]); \
        barrier(); \
        const int at = sg * 16 - c0; \
        if (at >= 0 && at < BC) \
        { \
            LOADS(at) \
        } \
        barrier(); \
    }

// M(n) for each n < 8 and each n < 4: a head's fragments as variables of their own, not
// arrays (the NVIDIA driver keeps an array of cooperative matrices in local memory)
#define EACH8(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define EACH4(M) M(0) M(1) M(2) M(3)
