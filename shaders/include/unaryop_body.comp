// The body of unaryop.comp, unaryop_pack4.comp and unaryop_pack8.comp: the activation layers'
// functions (unary_op.comp) elementwise on a blob of w x h x c elements of the including
// file's PACK (include/packed_names.comp), shapes from specialization constants when non-zero,
// else from push constants (psc).

#include "packed_names.comp"

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler3D bottom_blob;
layout (binding = 1, imfmtN) writeonly uniform unfp image3D top_blob;
#else
layout (binding = 0) readonly buffer bottom_blob { sfpN bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpN top_blob_data[]; };
#endif

layout (constant_id = 0) const int op_type = 0;
layout (constant_id = 1) const float param_0 = 0;
layout (constant_id = 2) const float param_1 = 0;
layout (constant_id = 3) const float param_2 = 0;

#define shape_constant_id_offset 4
layout (constant_id = shape_constant_id_offset + 0) const int w = 0;
layout (constant_id = shape_constant_id_offset + 1) const int h = 0;
layout (constant_id = shape_constant_id_offset + 2) const int c = 0;
layout (constant_id = shape_constant_id_offset + 3) const int cstep = 0;

layout (push_constant) uniform parameter
{
    int w, h, c, cstep;
} p;

#include "unary_op.comp"

// unary_op takes an afpvec4: a scalar goes in as one lane, pack8 as its two halves
#if PACK == 1
#define APPLY(v) v = unary_op(afpvec4(v)).x
#elif PACK == 4
#define APPLY(v) v = unary_op(v)
#else
#define APPLY(v) v[0] = unary_op(v[0]); v[1] = unary_op(v[1])
#endif

void main()
{
    GLOBAL_XYZ;

    if (gx >= psc(w) || gy >= psc(h) || gz >= psc(c))
        return;

#if NCNN_image_shader
    afpN v = image3d_ldN(bottom_blob, ivec3(gx, gy, gz));
#else
    const int gi = gz * psc(cstep) + gy * psc(w) + gx;
    afpN v = buffer_ldN(bottom_blob_data, gi);
#endif

    APPLY(v);

#if NCNN_image_shader
    image3d_stN(top_blob, ivec3(gx, gy, gz), v);
#else
    buffer_stN(top_blob_data, gi, v);
#endif
}
