// The GEMM of the matrix layers (MatMul, Gemm, the projections of MultiHeadAttention):
// out[z] = alpha · (op(A[z]) · op(B[z]) + beta · C), op a transpose where asked, for each batch
// matrix z, a side with one matrix broadcast over the batches (a zero batch step). Pack1
// buffers: A is M × K stored with rows `a_rs` apart (K × M with trans_a), B is K × N rows `b_rs`
// apart (N × K with trans_b), out M × N rows `out_rs` apart (N × M with out_trans); batch
// matrices `*_cstep` apart in groups of `inner`, the groups `*_ostep` apart. C (push constant c_type ≥ 0) is ncnn's broadcast: 0 one value, 1 one per row of
// out, 3 the whole M × N (rows `c_rs` apart), 4 one per column.
//
// FMA tiles: a workgroup of 16 × 16 invocations computes a TILE × TILE block of out, each
// invocation a PER × PER square of it (PER 4: 64 × 64 tiles, each value read from memory
// serving 64 products; PER 2: 32 × 32 tiles, four times the invocations for products too
// small to fill the device otherwise), staging 16-deep slices of A and B in shared memory
// (fp32, whatever the storage). Each slice is read with consecutive invocations along the
// stored rows, whichever way the operand is stored.
// Dispatch: global [ceil(N / TILE) * 256, ceil(M / TILE), batches].
#version 450

#include "prelude.comp"

#include "vulkan_activation.comp"

#define GEMM_OPERAND sfp
#include "gemm_params.comp"

const int TILE = 16 * PER;
#define DEPTH 16
layout (local_size_x = 256) in;

shared float sa[DEPTH][TILE];
shared float sb[DEPTH][TILE];

// One 64 × 16 slice of an operand into `s`: `lines` (rows of the tile: A's rows or B's
// columns) from `line0`, depth from `k0`; `across` when the stored rows run along the lines
// (A transposed, B not), else along the depth.
#define STAGE(s, data, base, rs, line0, lines, across) \
    for (int i = t; i < TILE * DEPTH; i += 256) \
    { \
        int l, d; \
        if (across) { d = i / TILE; l = i % TILE; } else { l = i / DEPTH; d = i % DEPTH; } \
        const int line = line0 + l; \
        const int kk = k0 + d; \
        float v = 0.0; \
        if (line < lines && kk < p.k) \
            v = float(buffer_ld1(data, base + (across ? kk * rs + line : line * rs + kk))); \
        s[d][l] = v; \
    }

void main()
{
    const int t = int(gl_LocalInvocationID.x);
    const int col0 = int(gl_WorkGroupID.x) * TILE;
    const int row0 = int(gl_WorkGroupID.y) * TILE;
    const int z = int(gl_WorkGroupID.z);
    const int a_base = batch_at(z, p.a_cstep, p.a_ostep);
    const int b_base = batch_at(z, p.b_cstep, p.b_ostep);
    // this invocation's PER × PER square: rows ty*PER.., columns tx*PER..
    const int tx = t % 16;
    const int ty = t / 16;

    float acc[PER * PER];
    for (int i = 0; i < PER * PER; i++)
        acc[i] = 0.0;

    for (int k0 = 0; k0 < p.k; k0 += DEPTH)
    {
        STAGE(sa, a_data, a_base, p.a_rs, row0, p.m, trans_a == 1)
        STAGE(sb, b_data, b_base, p.b_rs, col0, p.n, trans_b == 0)
        barrier();
        for (int d = 0; d < DEPTH; d++)
        {
            for (int i = 0; i < PER; i++)
            {
                const float a = sa[d][ty * PER + i];
                for (int j = 0; j < PER; j++)
                    acc[i * PER + j] += a * sb[d][tx * PER + j];
            }
        }
        barrier();
    }

    for (int i = 0; i < PER; i++)
    {
        const int row = row0 + ty * PER + i;
        if (row >= p.m)
            break;
        for (int j = 0; j < PER; j++)
        {
            const int col = col0 + tx * PER + j;
            if (col >= p.n)
                break;
            float v = acc[i * PER + j];
            if (int8_product == 1)
                v *= a_descale_data[row] * b_descale_data[0];
            if (p.c_type >= 0)
            {
                const int ci = p.c_type == 0 ? 0 : p.c_type == 4 ? col : p.c_type == 3 ? row * p.c_rs + col : row;
                v += beta * float(buffer_ld1(c_data, ci));
            }
            v *= alpha;
            const int at = out_trans == 1 ? col * p.out_rs + row : row * p.out_rs + col;
            buffer_st1(top_data, batch_at(z, p.out_cstep, p.out_ostep) + at, activation_afp(afp(v), activation_type, activation_param_0, activation_param_1));
        }
    }
}
