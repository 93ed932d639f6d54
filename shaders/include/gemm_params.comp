// What the matrix layers' GEMMs (gemm.comp and gemm_cm.comp) share: specialization constants
// 0-9, the bindings (A and B of the including file's GEMM_OPERAND type), the push constants
// (shapes, row steps, C's broadcast and the batches' grouping) and where a batch's matrix starts.

#ifdef LITERAL_FORM
// bench/gemm_tile.rs's probe of gemm_cm with no specialization constant: the Gemm layer's
// A · Bᵀ in 128 × 128 tiles as plain constants, to tell what the driver's handling of the
// constants costs
const int trans_a = 0;
const int trans_b = 1;
const int out_trans = 0;
const float alpha = 1.0;
const float beta = 1.0;
const int PER = 4;
const int activation_type = 0;
const float activation_param_0 = 0;
const float activation_param_1 = 0;
const int int8_product = 0;
#else
layout (constant_id = 0) const int trans_a = 0;
layout (constant_id = 1) const int trans_b = 0;
layout (constant_id = 2) const int out_trans = 0;
layout (constant_id = 3) const float alpha = 1.0;
layout (constant_id = 4) const float beta = 1.0;
layout (constant_id = 5) const int PER = 4;
// InnerProduct's fused activation (vulkan_activation.comp's numbering), after alpha
layout (constant_id = 6) const int activation_type = 0;
layout (constant_id = 7) const float activation_param_0 = 0;
layout (constant_id = 8) const float activation_param_1 = 0;
// Gemm's int8 product: A and B hold int8 levels (exact in any storage), the sum of their
// products (exact in fp32) is scaled by A's row descale and B's one before C
layout (constant_id = 9) const int int8_product = 0;
#endif

layout (binding = 0) readonly buffer a_blob { GEMM_OPERAND a_data[]; };
layout (binding = 1) readonly buffer b_blob { GEMM_OPERAND b_data[]; };
layout (binding = 2) readonly buffer c_blob { sfp c_data[]; };
layout (binding = 3) writeonly buffer top_blob { sfp top_data[]; };
layout (binding = 4) readonly buffer a_descale_blob { float a_descale_data[]; };
layout (binding = 5) readonly buffer b_descale_blob { float b_descale_data[]; };

layout (push_constant) uniform parameter
{
    int m, n, k, a_rs, b_rs, c_rs, out_rs, a_cstep, b_cstep, out_cstep;
    // C's broadcast, from its shape where C is an input (-1: none)
    int c_type;
    // batches in groups of `inner` (a 4-D blob's depth within its channels): the groups
    // `*_ostep` apart
    int inner, a_ostep, b_ostep, out_ostep;
} p;

// where batch matrix z starts, `step` apart within a group of p.inner, `ostep` between groups
int batch_at(int z, int step, int ostep)
{
    return (z / p.inner) * ostep + (z % p.inner) * step;
}
