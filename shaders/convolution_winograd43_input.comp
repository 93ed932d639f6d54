// Winograd F(4×4, 3×3), step 1 of 3 (convolution's dense 3×3 stride-1 pack4 layers on maps large
// enough for the 36 products per tile to beat the implicit GEMM's 144): the input transform.
// Each invocation takes one 6×6 window of one block of 4 channels (4 × 4 output positions'
// worth, windows 4 apart, the pad value outside the input) and writes `Bᵀ d B` as 36 values per
// channel block into V, pack4 [36][channel blocks][tiles]: element (i, j) of
// every tile is one input of the batched GEMM that follows (the implicit GEMM's 1×1 form, one
// batch matrix per element). Arithmetic in fp32 whatever the storage.
// A deep layer has few tiles × channel blocks (vgg16's 28² × 512: 49 × 128, a warp and a half
// per SM of an H200), so the window's 6 columns of `d B` can be split over `parts`
// invocations (constant 17): each loads the whole window (its peers' loads hit the cache),
// transforms the rows, keeps its 6 / parts columns and writes their 6 elements each.
// A 3-D window's input (Convolution3D: `depth` slabs per channel block, constant 34) is
// transformed slab by slab, V then pack4 [36][channel blocks][slabs][tiles]: the products
// sum the depth taps as a 3-D window of one tap across (conv/winograd_gpu.rs).
// Dispatch: global [tiles · parts, c (blocks of 4) · depth, 1].
#version 450

#include "prelude.comp"

#include "convolution_head.comp"

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer v_blob { sfpvec4 v_data[]; };

layout (local_size_x = 64) in;

// invocations per window: 1, 2, 3 or 6, each taking 6 / parts of its columns
layout (constant_id = 17) const int parts = 1;
const int COLS = 6 / parts;

// Bᵀ · (r0 .. r5) for Bᵀ of the points 0, ±√2, ±√2/2 (and infinity): better conditioned than
// 0, ±1, ±2, whose transformed values reach 100× the input's and lost a tenth of an output's
// value to fp16 storage on ncnn's test cases (these keep under 0.05)
#define SQ2 1.41421356237
#define SQ2_2 0.707106781187
void bt6(inout vec4 r[6])
{
    const vec4 t0 = r[0] - 2.5f * r[2] + r[4];
    const vec4 t1 = -SQ2_2 * r[1] - 0.5f * r[2] + SQ2 * r[3] + r[4];
    const vec4 t2 = SQ2_2 * r[1] - 0.5f * r[2] - SQ2 * r[3] + r[4];
    const vec4 t3 = -SQ2 * r[1] - 2.f * r[2] + SQ2_2 * r[3] + r[4];
    const vec4 t4 = SQ2 * r[1] - 2.f * r[2] - SQ2_2 * r[3] + r[4];
    const vec4 t5 = r[1] - 2.5f * r[3] + r[5];
    r[0] = t0;
    r[1] = t1;
    r[2] = t2;
    r[3] = t3;
    r[4] = t4;
    r[5] = t5;
}

// element j of r, with j the same in every invocation of a part (a select, not an indexed
// register array, which would go to memory; with one part j is a constant and it folds)
vec4 pick(vec4 r[6], int j)
{
    return j == 0 ? r[0] : j == 1 ? r[1] : j == 2 ? r[2] : j == 3 ? r[3] : j == 4 ? r[4] : r[5];
}

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    // a channel block's slab (its block, then its depth, as V holds them)
    const int cb = int(gl_GlobalInvocationID.y);
    const int tw = (psc(outw) + 3) / 4;
    const int tiles = tw * ((slab_outh() + 3) / 4);
    // consecutive invocations take consecutive tiles of one part: their stores are adjacent
    const int t = gx % tiles;
    // a constant 0 with one part
    const int j0 = parts == 1 ? 0 : (gx / tiles) * COLS;
    if (gx >= tiles * parts || cb >= psc(c) * depth)
        return;
    const int rs = tiles;
    const int x0 = (t % tw) * 4 - p.pad_left;
    const int y0 = (t / tw) * 4 - p.pad_top;
    const int base = (cb / depth) * psc(cstep) + (cb % depth) * slab_h() * psc(w);

    // rows first: d · B for each of the window's 6 rows, this part's columns kept
    vec4 m[6][6];
    for (int y = 0; y < 6; y++)
    {
        const int iy = y0 + y;
        const bool row_in = iy >= 0 && iy < slab_h();
        vec4 r[6];
        for (int x = 0; x < 6; x++)
        {
            const int ix = x0 + x;
            const bool in_map = row_in && ix >= 0 && ix < psc(w);
            const vec4 v = vec4(buffer_ld4(bottom_blob_data, in_map ? base + iy * psc(w) + ix : 0));
            r[x] = in_map ? v : vec4(p.pad_value);
        }
        bt6(r);
        for (int j = 0; j < COLS; j++)
            m[y][j] = pick(r, j0 + j);
    }
    // then the columns: Bᵀ · (d · B), element (i, j) to batch i · 6 + j
    for (int j = 0; j < COLS; j++)
    {
        vec4 col[6];
        for (int i = 0; i < 6; i++)
            col[i] = m[i][j];
        bt6(col);
        for (int i = 0; i < 6; i++)
            buffer_st4(v_data, ((i * 6 + j0 + j) * psc(c) * depth + cb) * rs + t, afpvec4(col[i]));
    }
}
