// The body of binaryop.comp, binaryop_pack4.comp and binaryop_pack8.comp: top = a op b with
// broadcast, where a dimension of size 1 in a or b is broadcast along the output's, on blobs of
// the including file's PACK (include/packed_names.comp). binary_op takes one value for pack1
// (BINARY_OP_SCALAR, include/binary_op.comp) and an afpvec4 otherwise: pack8 goes as its halves.

#include "packed_names.comp"

#if PACK == 1
#define BINARY_OP_SCALAR
#endif

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler3D a_blob;
layout (binding = 1) uniform unfp sampler3D b_blob;
layout (binding = 2, imfmtN) writeonly uniform unfp image3D top_blob;
#else
layout (binding = 0) readonly buffer a_blob { sfpN a_blob_data[]; };
layout (binding = 1) readonly buffer b_blob { sfpN b_blob_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfpN top_blob_data[]; };
#endif

layout (constant_id = 0) const int op_type = 0;

#define shape_constant_id_offset 1
layout (constant_id = shape_constant_id_offset + 0) const int aw = 0;
layout (constant_id = shape_constant_id_offset + 1) const int ah = 0;
layout (constant_id = shape_constant_id_offset + 2) const int ac = 0;
layout (constant_id = shape_constant_id_offset + 3) const int acstep = 0;
layout (constant_id = shape_constant_id_offset + 4) const int bw = 0;
layout (constant_id = shape_constant_id_offset + 5) const int bh = 0;
layout (constant_id = shape_constant_id_offset + 6) const int bc = 0;
layout (constant_id = shape_constant_id_offset + 7) const int bcstep = 0;
layout (constant_id = shape_constant_id_offset + 8) const int outw = 0;
layout (constant_id = shape_constant_id_offset + 9) const int outh = 0;
layout (constant_id = shape_constant_id_offset + 10) const int outc = 0;
layout (constant_id = shape_constant_id_offset + 11) const int outcstep = 0;

layout (push_constant) uniform parameter
{
    int aw, ah, ac, acstep, bw, bh, bc, bcstep, outw, outh, outc, outcstep;
} p;

#include "binary_op.comp"

void main()
{
    GLOBAL_XYZ;

    if (gx >= psc(outw) || gy >= psc(outh) || gz >= psc(outc))
        return;

    // a size-1 dimension reads its only element for every output position
    const ivec3 ap = ivec3(psc(aw) == 1 ? 0 : gx, psc(ah) == 1 ? 0 : gy, psc(ac) == 1 ? 0 : gz);
    const ivec3 bp = ivec3(psc(bw) == 1 ? 0 : gx, psc(bh) == 1 ? 0 : gy, psc(bc) == 1 ? 0 : gz);

#if NCNN_image_shader
    afpN va = image3d_ldN(a_blob, ap);
    afpN vb = image3d_ldN(b_blob, bp);
#else
    afpN va = buffer_ldN(a_blob_data, ap.z * psc(acstep) + ap.y * psc(aw) + ap.x);
    afpN vb = buffer_ldN(b_blob_data, bp.z * psc(bcstep) + bp.y * psc(bw) + bp.x);
#endif

#if PACK == 8
    afpvec8 v;
    v[0] = binary_op(va[0], vb[0]);
    v[1] = binary_op(va[1], vb[1]);
#else
    afpN v = binary_op(va, vb);
#endif

#if NCNN_image_shader
    image3d_stN(top_blob, ivec3(gx, gy, gz), v);
#else
    const int gi = gz * psc(outcstep) + gy * psc(outw) + gx;
    buffer_stN(top_blob_data, gi, v);
#endif
}
