// The body of binaryop.comp, binaryop_pack4.comp and binaryop_pack8.comp: top = a op b with
// broadcast, where a dimension of size 1 in a or b is broadcast along the output's. The
// including file declares the bindings and defines, for its packing:
//   afp_t                       the arithmetic type of one element
//   LOAD_IMAGE(b, p)            / LOAD_BUFFER(d, i)      one element of a blob
//   COMBINE(v, va, vb)          declares v = va op vb
//   STORE_IMAGE(p, v)           / STORE_BUFFER(i, v)     one element of top_blob
// and BINARY_OP_SCALAR where binary_op takes one value (include/binary_op.comp).

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
    afp_t va = LOAD_IMAGE(a_blob, ap);
    afp_t vb = LOAD_IMAGE(b_blob, bp);
#else
    afp_t va = LOAD_BUFFER(a_blob_data, ap.z * psc(acstep) + ap.y * psc(aw) + ap.x);
    afp_t vb = LOAD_BUFFER(b_blob_data, bp.z * psc(bcstep) + bp.y * psc(bw) + bp.x);
#endif

    COMBINE(v, va, vb);

#if NCNN_image_shader
    STORE_IMAGE(ivec3(gx, gy, gz), v);
#else
    const int gi = gz * psc(outcstep) + gy * psc(outw) + gx;
    STORE_BUFFER(gi, v);
#endif
}
