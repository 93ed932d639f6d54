// Winograd F(4×4, 3×3), step 3 of 3: the output transform. Each invocation takes one tile of
// one block of 4 output channels: its 36 products from the batched GEMM's output, pack4
// [36][output blocks][tiles], `Aᵀ m A`, then the bias and the activation,
// and writes the tile's positions that lie in the output map. Arithmetic in fp32.
// As the input transform, a deep layer's tile can be split over `parts` invocations (constant
// 17), each reading the tile's 36 products and making 4 / parts of its output rows.
// A 3-D window's output (`outdepth` slabs per block, constant 35) is made slab by slab from
// the products' pack4 [36][output blocks][slabs][tiles]. Where the net folded a residual sum
// into the layer (constant 16) it is added before the activation, as the implicit GEMM does.
// Dispatch: global [tiles · parts, outc (blocks of 4) · outdepth, 1].
#version 450

#include "prelude.comp"

#include "convolution_head.comp"

layout (binding = 0) readonly buffer m_blob { sfpvec4 m_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
layout (binding = 2) readonly buffer bias_blob { sfpvec4 bias_data[]; };
#include "convolution_residual.comp"

layout (local_size_x = 64) in;

// invocations per tile: 1, 2 or 4, each making 4 / parts of its output rows
layout (constant_id = 17) const int parts = 1;
const int ROWS = 4 / parts;

// row y of Aᵀ · (r0 .. r5) for Aᵀ of the points 0, ±√2, ±√2/2 (and infinity); with y a
// constant (the loops below unroll) the selects fold away
#define SQ2 1.41421356237
#define SQ2_2 0.707106781187
vec4 at6_row(vec4 r[6], int y)
{
    const vec4 s12 = r[1] + r[2];
    const vec4 d12 = r[1] - r[2];
    const vec4 s34 = r[3] + r[4];
    const vec4 d34 = r[3] - r[4];
    return y == 0 ? r[0] + s12 + s34
        : y == 1 ? SQ2 * d12 + SQ2_2 * d34
        : y == 2 ? 2.f * s12 + 0.5f * s34
        : (2.f * SQ2) * d12 + (0.5f * SQ2_2) * d34 + r[5];
}

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    // an output block's slab (its block, then its depth, as the products hold them)
    const int os = int(gl_GlobalInvocationID.y);
    const int ob = os / outdepth;
    const int tw = (psc(outw) + 3) / 4;
    const int tiles = tw * ((slab_outh() + 3) / 4);
    const int t = gx % tiles;
    // a constant 0 with one part
    const int y_first = parts == 1 ? 0 : (gx / tiles) * ROWS;
    if (gx >= tiles * parts || os >= psc(outc) * outdepth)
        return;
    const int rs = tiles;

    // columns first: Aᵀ · m for each of the 6 columns j, this part's output rows
    vec4 mt[4][6];
    for (int j = 0; j < 6; j++)
    {
        vec4 col[6];
        for (int i = 0; i < 6; i++)
            col[i] = vec4(buffer_ld4(m_data, ((i * 6 + j) * psc(outc) * outdepth + os) * rs + t));
        for (int y = 0; y < ROWS; y++)
            mt[y][j] = at6_row(col, y_first + y);
    }

    const vec4 b = bias_term == 1 ? vec4(buffer_ld4(bias_data, ob)) : vec4(0.f);
    const int x0 = (t % tw) * 4;
    const int y0 = (t / tw) * 4 + y_first;
    const int base = ob * psc(outcstep) + (os % outdepth) * slab_outh() * psc(outw);
    // then the rows: (Aᵀ · m) · A
    for (int y = 0; y < ROWS; y++)
    {
        if (y0 + y >= slab_outh())
            break;
        for (int x = 0; x < 4; x++)
        {
            if (x0 + x < psc(outw))
            {
                const int at = base + (y0 + y) * psc(outw) + x0 + x;
                const afpvec4 v = activation_afpvec4(afpvec4(at6_row(mt[y], x) + b + residual_at(at)), activation_type, activation_param_0, activation_param_1);
                buffer_st4(top_blob_data, at, v);
            }
        }
    }
}
