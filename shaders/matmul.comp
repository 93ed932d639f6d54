// MatMul: out[z] = A[z] · B[z] (B[z]ᵀ with `trans_b`) for each batch matrix z, a side with one
// matrix broadcast over the batches. Pack1 buffers; A is M × K (rows K apart), B is K × N (or
// N × K stored with trans_b), out M × N; batch matrices `*_cstep` apart (0 for a side that
// broadcasts).
//
// FMA tiles: a workgroup of 256 invocations computes a 64 × 64 block of out, each invocation
// a 4 × 4 square of it, staging 16-deep slices of A and B in shared memory (fp32, whatever
// the storage) so that each value read from memory serves 64 products.
// Dispatch: global [ceil(N / 64) * 256, ceil(M / 64), batches].
#version 450

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif

layout (constant_id = 0) const int trans_b = 0;

#define TILE 64
#define DEPTH 16
layout (local_size_x = 256) in;

layout (binding = 0) readonly buffer a_blob { sfp a_data[]; };
layout (binding = 1) readonly buffer b_blob { sfp b_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_data[]; };

layout (push_constant) uniform parameter
{
    int m;
    int n;
    int k;
    int a_cstep;
    int b_cstep;
    int out_cstep;
} p;

shared float sa[DEPTH][TILE];
shared float sb[DEPTH][TILE];

void main()
{
    const int t = int(gl_LocalInvocationID.x);
    const int col0 = int(gl_WorkGroupID.x) * TILE;
    const int row0 = int(gl_WorkGroupID.y) * TILE;
    const int z = int(gl_WorkGroupID.z);
    const int a_base = z * p.a_cstep;
    const int b_base = z * p.b_cstep;
    // this invocation's 4 × 4 square: rows ty*4.., columns tx*4..
    const int tx = t % 16;
    const int ty = t / 16;

    float acc[16];
    for (int i = 0; i < 16; i++)
        acc[i] = 0.0;

    for (int k0 = 0; k0 < p.k; k0 += DEPTH)
    {
        // 64 × 16 values of each side, 4 per invocation
        for (int i = t; i < TILE * DEPTH; i += 256)
        {
            // A: row r of the tile, depth d (consecutive invocations walk along K)
            const int r = i / DEPTH;
            const int d = i % DEPTH;
            const int row = row0 + r;
            const int kk = k0 + d;
            sa[d][r] = (row < p.m && kk < p.k) ? float(buffer_ld1(a_data, a_base + row * p.k + kk)) : 0.0;
        }
        for (int i = t; i < TILE * DEPTH; i += 256)
        {
            float v = 0.0;
            if (trans_b == 1)
            {
                // B stored N × K: consecutive invocations walk along K
                const int c = i / DEPTH;
                const int d = i % DEPTH;
                const int col = col0 + c;
                const int kk = k0 + d;
                if (col < p.n && kk < p.k)
                    v = float(buffer_ld1(b_data, b_base + col * p.k + kk));
                sb[d][c] = v;
            }
            else
            {
                // B stored K × N: consecutive invocations walk along N
                const int d = i / TILE;
                const int c = i % TILE;
                const int col = col0 + c;
                const int kk = k0 + d;
                if (col < p.n && kk < p.k)
                    v = float(buffer_ld1(b_data, b_base + kk * p.n + col));
                sb[d][c] = v;
            }
        }
        barrier();
        for (int d = 0; d < DEPTH; d++)
        {
            const vec4 a = vec4(sa[d][ty * 4], sa[d][ty * 4 + 1], sa[d][ty * 4 + 2], sa[d][ty * 4 + 3]);
            const vec4 b = vec4(sb[d][tx * 4], sb[d][tx * 4 + 1], sb[d][tx * 4 + 2], sb[d][tx * 4 + 3]);
            for (int i = 0; i < 4; i++)
            {
                acc[i * 4 + 0] += a[i] * b.x;
                acc[i * 4 + 1] += a[i] * b.y;
                acc[i * 4 + 2] += a[i] * b.z;
                acc[i * 4 + 3] += a[i] * b.w;
            }
        }
        barrier();
    }

    for (int i = 0; i < 4; i++)
    {
        const int row = row0 + ty * 4 + i;
        if (row >= p.m)
            break;
        for (int j = 0; j < 4; j++)
        {
            const int col = col0 + tx * 4 + j;
            if (col < p.n)
                buffer_st1(top_data, z * p.out_cstep + row * p.n + col, afp(acc[i * 4 + j]));
        }
    }
}
