// Binary operation with broadcast on pack8 blobs (16-byte accesses with fp16 storage): top = a op b, where a dimension of size 1 in
// a or b is broadcast along the output's. op_type: 0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min,
// 6 pow, 7 rsub (b - a), 8 rdiv (b / a), 9 rpow (b ^ a), 10 atan2(a, b), 11 atan2(b, a).
#version 450

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
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

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler3D a_blob;
layout (binding = 1) uniform unfp sampler3D b_blob;
layout (binding = 2, imfmtc4) writeonly uniform unfp image3D top_blob;
#else
layout (binding = 0) readonly buffer a_blob { sfpvec8 a_blob_data[]; };
layout (binding = 1) readonly buffer b_blob { sfpvec8 b_blob_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfpvec8 top_blob_data[]; };
#endif

layout (push_constant) uniform parameter
{
    int aw;
    int ah;
    int ac;
    int acstep;
    int bw;
    int bh;
    int bc;
    int bcstep;
    int outw;
    int outh;
    int outc;
    int outcstep;
} p;

#include "binary_op.comp"

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int gz = int(gl_GlobalInvocationID.z);

    if (gx >= psc(outw) || gy >= psc(outh) || gz >= psc(outc))
        return;

    // a size-1 dimension reads its only element for every output position
    const ivec3 ap = ivec3(psc(aw) == 1 ? 0 : gx, psc(ah) == 1 ? 0 : gy, psc(ac) == 1 ? 0 : gz);
    const ivec3 bp = ivec3(psc(bw) == 1 ? 0 : gx, psc(bh) == 1 ? 0 : gy, psc(bc) == 1 ? 0 : gz);

#if NCNN_image_shader
    afpvec8 va = image3d_ld8(a_blob, ap);
    afpvec8 vb = image3d_ld8(b_blob, bp);
#else
    afpvec8 va = buffer_ld8(a_blob_data, ap.z * psc(acstep) + ap.y * psc(aw) + ap.x);
    afpvec8 vb = buffer_ld8(b_blob_data, bp.z * psc(bcstep) + bp.y * psc(bw) + bp.x);
#endif

    afpvec8 v;
    v[0] = binary_op(va[0], vb[0]);
    v[1] = binary_op(va[1], vb[1]);

#if NCNN_image_shader
    image3d_st8(top_blob, ivec3(gx, gy, gz), v);
#else
    const int gi = gz * psc(outcstep) + gy * psc(outw) + gx;
    buffer_st8(top_blob_data, gi, v);
#endif
}
