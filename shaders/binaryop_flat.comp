// BinaryOp (include/binary_op.comp) over two buffer mats of one layout, any packing, 16 bytes
// per invocation (include/flat.comp); b_scalar != 0: b is one flat element of the scalar.
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int op_type = 0;
layout (constant_id = 1) const int b_scalar = 0;

#include "flat.comp"

layout (binding = 0) readonly buffer a_blob { flat_t a_blob_data[]; };
layout (binding = 1) readonly buffer b_blob { flat_t b_blob_data[]; };
layout (binding = 2) writeonly buffer top_blob { flat_t top_blob_data[]; };

#include "binary_op.comp"

void main()
{
    const int gi = flat_index();
    if (gi >= p.n)
        return;

    const flat_t a = a_blob_data[gi];
    const flat_t b = b_blob_data[b_scalar != 0 ? 0 : gi];
#if NCNN_fp16_storage || NCNN_fp16_packed
    afpvec4 alo, ahi, blo, bhi;
    flat_unpack(a, alo, ahi);
    flat_unpack(b, blo, bhi);
    top_blob_data[gi] = flat_pack(binary_op(alo, blo), binary_op(ahi, bhi));
#else
    top_blob_data[gi] = vec4(binary_op(afpvec4(a), afpvec4(b)));
#endif
}
