// Binary operation with broadcast on pack1 blobs: top = a op b, where a dimension of size 1 in
// a or b is broadcast along the output's. op_type: 0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min,
// 6 pow, 7 rsub (b - a), 8 rdiv (b / a), 9 rpow (b ^ a), 10 atan2(a, b), 11 atan2(b, a), and
// 12 to 18 as include/binary_op.comp says.
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
layout (binding = 2, imfmtc1) writeonly uniform unfp image3D top_blob;
#else
layout (binding = 0) readonly buffer a_blob { sfp a_blob_data[]; };
layout (binding = 1) readonly buffer b_blob { sfp b_blob_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_blob_data[]; };
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

afp binary_op(afp x, afp y)
{
    if (op_type == 0) return x + y;
    if (op_type == 1) return x - y;
    if (op_type == 2) return x * y;
    if (op_type == 3) return x / y;
    if (op_type == 4) return max(x, y);
    if (op_type == 5) return min(x, y);
    if (op_type == 6) return pow(x, y);
    if (op_type == 7) return y - x;
    if (op_type == 8) return y / x;
    if (op_type == 9) return pow(y, x);
    if (op_type == 10) return atan(x, y);
    if (op_type == 11) return atan(y, x);
    // the rounding ops in fp32: a quotient near a whole number must round as the CPU's does
    const float a = float(x);
    const float b = float(y);
    if (op_type == 12) return afp(a - b * trunc(a / b));
    if (op_type == 13) return afp(b - a * trunc(b / a));
    if (op_type == 14) return afp(max(a, b) + log(1.f + exp(min(a, b) - max(a, b))));
    if (op_type == 15) return afp(floor(a / b));
    if (op_type == 16) return afp(floor(b / a));
    if (op_type == 17) return afp(a - b * roundEven(a / b));
    return afp(b - a * roundEven(b / a));
}

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
    afp va = image3d_ld1(a_blob, ap);
    afp vb = image3d_ld1(b_blob, bp);
#else
    afp va = buffer_ld1(a_blob_data, ap.z * psc(acstep) + ap.y * psc(aw) + ap.x);
    afp vb = buffer_ld1(b_blob_data, bp.z * psc(bcstep) + bp.y * psc(bw) + bp.x);
#endif

    afp v = binary_op(va, vb);

#if NCNN_image_shader
    image3d_st1(top_blob, ivec3(gx, gy, gz), v);
#else
    const int gi = gz * psc(outcstep) + gy * psc(outw) + gx;
    buffer_st1(top_blob_data, gi, v);
#endif
}
