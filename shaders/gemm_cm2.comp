// gemm.comp on VK_NV_cooperative_matrix2: the same product, operands, strides, C broadcasts
// and specialization constants 0-8 (not Gemm's int8 product, 9: those stay on gemm_cm), for
// fp16 storage blobs (A and B are read as fp16 whatever the variant; products summed in
// fp32), on a device opened with the extension.
//
// A workgroup of 256 invocations computes one TM × TN block of out as one workgroup-scope
// accumulator: per step of K the driver loads A's TM × DEPTH block and B's DEPTH × TN block
// itself (coopMatLoadTensorNV: tensor addressing, staged through the shared memory it
// reserves for these matrices) and multiplies them on the tensor cores. A tensor layout
// describes each operand's rows as they lie (row stride, a transposing view where the
// operand is stored the other way), so nothing is repacked. Tiles whose blocks lie wholly
// inside both operands, with K a multiple of DEPTH, load without clamping; edge tiles load
// through clamping layouts that read zeros outside. The epilogue is a per-element function
// (C, alpha, the activation) on the accumulator, then one tensor store that drops what lies
// outside out. Tile shapes (constant 11): 0 128 × 256, 1 128 × 128, 2 64 × 64, all 64 deep,
// as llama.cpp's matmul on this extension sizes them; the workgroups take the tiles in bands
// of 8 tile rows so the ones running at once share their operands' blocks in L2.
// Measured on an H200 (driver 580): 4096³ in 0.605 ms (227 TFLOP/s) against 0.645 for
// gemm_cm and 0.18 for torch.matmul (cuBLAS on wgmma, which Vulkan cannot reach); loading the
// next step's blocks before this step's product (two sets in flight) took 1.05 ms, 32 deep
// 0.68 (the runtime takes gemm_cm where it is faster: gpu_gemm's MATRIX2_TILES_MIN).
// Dispatch: global [ceil(N / TN) * 256, ceil(M / TM), batches].
#version 450

#include "prelude_coopmat.comp"
#extension GL_NV_cooperative_matrix2: require
#extension GL_EXT_shader_explicit_arithmetic_types_int32: require

#include "vulkan_activation.comp"

#define GEMM_OPERAND float16_t
#include "gemm_params.comp"
layout (constant_id = 11) const int shape = 0;

const uint TM = shape == 2 ? 64 : 128;
const uint TN = shape == 0 ? 256 : shape == 1 ? 128 : 64;
#define DEPTH 64
#define BAND 8
layout (local_size_x = 256) in;

#define MAT_A coopmat<float16_t, gl_ScopeWorkgroup, TM, DEPTH, gl_MatrixUseA>
#define MAT_B coopmat<float16_t, gl_ScopeWorkgroup, DEPTH, TN, gl_MatrixUseB>
#define MAT_C coopmat<float, gl_ScopeWorkgroup, TM, TN, gl_MatrixUseAccumulator>

// C, alpha and the activation on out's element (row0 + r, col0 + c)
float epilogue(const in uint32_t r, const in uint32_t c, const in float v, const in int row0, const in int col0)
{
    const int row = row0 + int(r);
    const int col = col0 + int(c);
    if (row >= p.m || col >= p.n)
        return 0.f;
    float x = v;
    if (p.c_type >= 0)
    {
        const int ci = p.c_type == 0 ? 0 : p.c_type == 4 ? col : p.c_type == 3 ? row * p.c_rs + col : row;
        x += beta * float(buffer_ld1(c_data, ci));
    }
    x *= alpha;
    return float(activation_afp(afp(x), activation_type, activation_param_0, activation_param_1));
}

// Loads the blocks at depth k0 into ma and mb from layouts la and lb (clamping or not),
// the operands starting at a0 and b0.
#define LOAD(ma, mb, la, lb, a0, b0, k0) \
    { \
        if (trans_a == 1) \
            coopMatLoadTensorNV(ma, a_data, a0, sliceTensorLayoutNV(la, k0, DEPTH, row0, TM), transposed); \
        else \
            coopMatLoadTensorNV(ma, a_data, a0, sliceTensorLayoutNV(la, row0, TM, k0, DEPTH)); \
        if (trans_b == 1) \
            coopMatLoadTensorNV(mb, b_data, b0, sliceTensorLayoutNV(lb, col0, TN, k0, DEPTH), transposed); \
        else \
            coopMatLoadTensorNV(mb, b_data, b0, sliceTensorLayoutNV(lb, k0, DEPTH, col0, TN)); \
    }

// One step of DEPTH at k0 into acc.
#define STEP(la, lb, a0, b0, k0) \
    { \
        MAT_A ma; \
        MAT_B mb; \
        LOAD(ma, mb, la, lb, a0, b0, k0) \
        acc = coopMatMulAdd(ma, mb, acc); \
    }

// steps per loop iteration where K allows, then one at a time: on an H200, 4096³ took 0.61 ms
// with 4, 2.8-3.6 with 1, 2 or 8 in the same run (those runs may have met a lower clock)
#define UNROLL 4

// The K loop of an edge tile: layouts that read zeros outside the operands, with row steps
// a_rs and b_rs, the operands starting at a0 and b0. (A second copy for aligned operands,
// and one of the store, cost the 4096³ product 0.73 ms against 0.61 on an H200: more code
// the driver keeps registers for, in a shader whose accumulators take 128 of them.)
#define CLAMPED(a_rs, b_rs, a0, b0) \
    { \
        tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> la = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV); \
        la = setTensorLayoutDimensionNV(la, a_rows, a_cols); \
        la = setTensorLayoutStrideNV(la, a_rs, 1); \
        tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lb = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV); \
        lb = setTensorLayoutDimensionNV(lb, b_rows, b_cols); \
        lb = setTensorLayoutStrideNV(lb, b_rs, 1); \
        for (int k0 = 0; k0 < p.k; k0 += DEPTH) \
            STEP(la, lb, a0, b0, k0) \
    }

// Stores `result` into out with row step out_rs from at, transposed where out_trans says.
#define STORE(out_rs, at) \
    { \
        tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lo = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV); \
        if (out_trans == 1) \
        { \
            lo = setTensorLayoutDimensionNV(lo, p.n, p.m); \
            lo = setTensorLayoutStrideNV(lo, out_rs, 1); \
            coopMatStoreTensorNV(result, top_data, at, sliceTensorLayoutNV(lo, col0, TN, row0, TM), transposed); \
        } \
        else \
        { \
            lo = setTensorLayoutDimensionNV(lo, p.m, p.n); \
            lo = setTensorLayoutStrideNV(lo, out_rs, 1); \
            coopMatStoreTensorNV(result, top_data, at, sliceTensorLayoutNV(lo, row0, TM, col0, TN)); \
        } \
    }

void main()
{
    // tiles in bands of BAND tile rows, column by column within a band
    const int tiles_x = int(gl_NumWorkGroups.x);
    const int tiles_y = int(gl_NumWorkGroups.y);
    const int id = int(gl_WorkGroupID.y) * tiles_x + int(gl_WorkGroupID.x);
    const int band = id / (BAND * tiles_x);
    const int band_rows = min(tiles_y - band * BAND, BAND);
    const int in_band = id % (BAND * tiles_x);
    const int col0 = (in_band / band_rows) * int(TN);
    const int row0 = (band * BAND + in_band % band_rows) * int(TM);

    const int z = int(gl_WorkGroupID.z);
    const uint a0 = uint(batch_at(z, p.a_cstep, p.a_ostep));
    const uint b0 = uint(batch_at(z, p.b_cstep, p.b_ostep));
    const uint at0 = uint(batch_at(z, p.out_cstep, p.out_ostep));

    // each operand as stored: rows of its stored row length, `*_rs` apart
    const uint a_rows = trans_a == 1 ? p.k : p.m;
    const uint a_cols = trans_a == 1 ? p.m : p.k;
    const uint b_rows = trans_b == 1 ? p.n : p.k;
    const uint b_cols = trans_b == 1 ? p.k : p.n;
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);

    MAT_C acc = MAT_C(0.f);
    const bool inside = row0 + int(TM) <= p.m && col0 + int(TN) <= p.n && p.k > 0 && p.k % DEPTH == 0;
    // row steps and starts that are multiples of 8 values, masked so that the compiler sees
    // them 16-byte aligned: without that it loads the blocks value by value (4 times slower)
    const bool aligned = inside && (p.a_rs | p.b_rs | a0 | b0) % 8 == 0;
    if (aligned)
    {
        const uint a0a = a0 & ~7u;
        const uint b0a = b0 & ~7u;
        tensorLayoutNV<2> la = createTensorLayoutNV(2);
        la = setTensorLayoutDimensionNV(la, a_rows, a_cols);
        la = setTensorLayoutStrideNV(la, uint(p.a_rs) & ~7u, 1);
        tensorLayoutNV<2> lb = createTensorLayoutNV(2);
        lb = setTensorLayoutDimensionNV(lb, b_rows, b_cols);
        lb = setTensorLayoutStrideNV(lb, uint(p.b_rs) & ~7u, 1);
        const int whole = p.k - p.k % (DEPTH * UNROLL);
        int k0 = 0;
        for (; k0 < whole; k0 += DEPTH * UNROLL)
        {
            [[unroll]] for (int u = 0; u < UNROLL; u++)
                STEP(la, lb, a0a, b0a, (k0 + u * DEPTH) & ~(DEPTH - 1))
        }
        for (; k0 < p.k; k0 += DEPTH)
            STEP(la, lb, a0a, b0a, k0 & ~(DEPTH - 1))
    }
    else if (inside)
    {
        tensorLayoutNV<2> la = createTensorLayoutNV(2);
        la = setTensorLayoutDimensionNV(la, a_rows, a_cols);
        la = setTensorLayoutStrideNV(la, p.a_rs, 1);
        tensorLayoutNV<2> lb = createTensorLayoutNV(2);
        lb = setTensorLayoutDimensionNV(lb, b_rows, b_cols);
        lb = setTensorLayoutStrideNV(lb, p.b_rs, 1);
        for (int k0 = 0; k0 < p.k; k0 += DEPTH)
            STEP(la, lb, a0, b0, k0)
    }
    else
        CLAMPED(p.a_rs, p.b_rs, a0, b0)

    coopMatPerElementNV(acc, acc, epilogue, row0, col0);
    coopmat<sfp, gl_ScopeWorkgroup, TM, TN, gl_MatrixUseAccumulator> result = coopmat<sfp, gl_ScopeWorkgroup, TM, TN, gl_MatrixUseAccumulator>(acc);
    // out as stored, clamping: what lies past its rows or columns is not written
    STORE(p.out_rs, at0)
}
