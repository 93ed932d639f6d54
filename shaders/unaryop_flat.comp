// The activation layers' functions (include/unary_op.comp) over a whole buffer mat, any
// packing, 16 bytes per invocation (include/flat.comp).
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int op_type = 0;
layout (constant_id = 1) const float param_0 = 0;
layout (constant_id = 2) const float param_1 = 0;
layout (constant_id = 3) const float param_2 = 0;

#include "flat.comp"

layout (binding = 0) readonly buffer bottom_blob { flat_t bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { flat_t top_blob_data[]; };

#include "unary_op.comp"

void main()
{
    const int gi = flat_index();
    if (gi >= p.n)
        return;

#if NCNN_fp16_storage || NCNN_fp16_packed
    afpvec4 lo, hi;
    flat_unpack(bottom_blob_data[gi], lo, hi);
    top_blob_data[gi] = flat_pack(unary_op(lo), unary_op(hi));
#else
    top_blob_data[gi] = vec4(unary_op(afpvec4(bottom_blob_data[gi])));
#endif
}
