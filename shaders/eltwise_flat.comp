// Eltwise step over two buffer mats of one layout, any packing, 16 bytes per invocation
// (include/flat.comp): top = a * b (op_type 0), ca * a + cb * b (1), max(a, b) (2), then the
// activation (vulkan_activation.comp's types: the activation layer after it, fused by the
// net). A layer with more inputs folds them in one dispatch each, the last activated.
#version 450

#include "prelude.comp"
#include "vulkan_activation.comp"

layout (constant_id = 0) const int op_type = 0;
layout (constant_id = 1) const int activation_type = 0;
layout (constant_id = 2) const float activation_param_0 = 0;
layout (constant_id = 3) const float activation_param_1 = 0;

#define FLAT_PUSH_EXTRA float ca; float cb;
#include "flat.comp"

layout (binding = 0) readonly buffer a_blob { flat_t a_blob_data[]; };
layout (binding = 1) readonly buffer b_blob { flat_t b_blob_data[]; };
layout (binding = 2) writeonly buffer top_blob { flat_t top_blob_data[]; };

// in fp32: the coefficients need not fit fp16
vec4 combine(vec4 a, vec4 b)
{
    if (op_type == 0) return a * b;
    if (op_type == 1) return a * p.ca + b * p.cb;
    return max(a, b);
}

vec4 eltwise(vec4 a, vec4 b)
{
    const vec4 v = combine(a, b);
    if (activation_type == 0)
        return v;
    return vec4(activation_afpvec4(afpvec4(v), activation_type, activation_param_0, activation_param_1));
}

void main()
{
    const int gi = flat_index();
    if (gi >= p.n)
        return;

#if NCNN_fp16_storage || NCNN_fp16_packed
    afpvec4 alo, ahi, blo, bhi;
    flat_unpack(a_blob_data[gi], alo, ahi);
    flat_unpack(b_blob_data[gi], blo, bhi);
    top_blob_data[gi] = flat_pack(afpvec4(eltwise(vec4(alo), vec4(blo))), afpvec4(eltwise(vec4(ahi), vec4(bhi))));
#else
    top_blob_data[gi] = eltwise(a_blob_data[gi], b_blob_data[gi]);
#endif
}
