// The body of the packing shaders (packing_1to4, _4to1, _4to8, _8to4), for the IN_PACK and
// OUT_PACK the including file defines. Shapes are input and output extents, each in elements of
// its own packing (c counts packed channels), from specialization constants when non-zero, else
// from push constants (psc). Packing runs over the output, unpacking over the input.

#include "packed_names.comp"

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler3D bottom_blob;
layout (binding = 1, imfmt_of(OUT_PACK)) writeonly uniform unfp image3D top_blob;
#else
layout (binding = 0) readonly buffer bottom_blob { sfp_of(IN_PACK) bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp_of(OUT_PACK) top_blob_data[]; };
#endif

#define shape_constant_id_offset 0
layout (constant_id = shape_constant_id_offset + 0) const int w = 0;
layout (constant_id = shape_constant_id_offset + 1) const int h = 0;
layout (constant_id = shape_constant_id_offset + 2) const int c = 0;
layout (constant_id = shape_constant_id_offset + 3) const int cstep = 0;
layout (constant_id = shape_constant_id_offset + 4) const int outw = 0;
layout (constant_id = shape_constant_id_offset + 5) const int outh = 0;
layout (constant_id = shape_constant_id_offset + 6) const int outc = 0;
layout (constant_id = shape_constant_id_offset + 7) const int outcstep = 0;

layout (push_constant) uniform parameter
{
    int w, h, c, cstep, outw, outh, outc, outcstep;
} p;

void main()
{
    GLOBAL_XYZ;

#if IN_PACK < OUT_PACK
    if (gx >= psc(outw) || gy >= psc(outh) || gz >= psc(outc))
        return;
#else
    if (gx >= psc(w) || gy >= psc(h) || gz >= psc(c))
        return;
#endif

#if IN_PACK == 1
#if NCNN_image_shader
    afpvec4 v;
    v.r = image3d_ld1(bottom_blob, ivec3(gx, gy, gz * 4 + 0));
    v.g = image3d_ld1(bottom_blob, ivec3(gx, gy, gz * 4 + 1));
    v.b = image3d_ld1(bottom_blob, ivec3(gx, gy, gz * 4 + 2));
    v.a = image3d_ld1(bottom_blob, ivec3(gx, gy, gz * 4 + 3));
    image3d_st4(top_blob, ivec3(gx, gy, gz), v);
#else
    const ivec4 z4 = gz * 4 + ivec4(0, 1, 2, 3);
    const ivec4 src = z4 * psc(cstep) + gy * psc(w) + gx;
    const int dst = gz * psc(outcstep) + gy * psc(outw) + gx;
    if (z4.w < psc(c))
    {
        buffer_cp1to4(top_blob_data, dst, bottom_blob_data, src);
    }
    else
    {
        afpvec4 v = afpvec4(0.f);
        if (z4.x < psc(c))
            v.r = buffer_ld1(bottom_blob_data, src.x);
        if (z4.y < psc(c))
            v.g = buffer_ld1(bottom_blob_data, src.y);
        if (z4.z < psc(c))
            v.b = buffer_ld1(bottom_blob_data, src.z);
        buffer_st4(top_blob_data, dst, v);
    }
#endif
#elif OUT_PACK == 8
#if NCNN_image_shader
    afpvec8 v;
    v[0] = image3d_ld4(bottom_blob, ivec3(gx, gy, gz * 2 + 0));
    v[1] = image3d_ld4(bottom_blob, ivec3(gx, gy, gz * 2 + 1));
    image3d_st8(top_blob, ivec3(gx, gy, gz), v);
#else
    const ivec2 z2 = gz * 2 + ivec2(0, 1);
    const ivec2 src = z2 * psc(cstep) + gy * psc(w) + gx;
    buffer_cp4to8(top_blob_data, gz * psc(outcstep) + gy * psc(outw) + gx, bottom_blob_data, src);
#endif
#elif OUT_PACK == 1
#if NCNN_image_shader
    afpvec4 v = image3d_ld4(bottom_blob, ivec3(gx, gy, gz));
    image3d_st1(top_blob, ivec3(gx, gy, gz * 4 + 0), v.r);
    if (gz * 4 + 1 < psc(outc))
        image3d_st1(top_blob, ivec3(gx, gy, gz * 4 + 1), v.g);
    if (gz * 4 + 2 < psc(outc))
        image3d_st1(top_blob, ivec3(gx, gy, gz * 4 + 2), v.b);
    if (gz * 4 + 3 < psc(outc))
        image3d_st1(top_blob, ivec3(gx, gy, gz * 4 + 3), v.a);
#else
    const ivec4 z4 = gz * 4 + ivec4(0, 1, 2, 3);
    const ivec4 dst = z4 * psc(outcstep) + gy * psc(outw) + gx;
    const int src = gz * psc(cstep) + gy * psc(w) + gx;
    if (z4.w < psc(outc))
    {
        buffer_cp4to1(top_blob_data, dst, bottom_blob_data, src);
    }
    else
    {
        // a last block past the output's channels (a layer of 126 outputs computed as 128)
        const afpvec4 v = buffer_ld4(bottom_blob_data, src);
        if (z4.x < psc(outc))
            buffer_st1(top_blob_data, dst.x, v.r);
        if (z4.y < psc(outc))
            buffer_st1(top_blob_data, dst.y, v.g);
        if (z4.z < psc(outc))
            buffer_st1(top_blob_data, dst.z, v.b);
    }
#endif
#else
#if NCNN_image_shader
    afpvec8 v = image3d_ld8(bottom_blob, ivec3(gx, gy, gz));
    image3d_st4(top_blob, ivec3(gx, gy, gz * 2 + 0), v[0]);
    image3d_st4(top_blob, ivec3(gx, gy, gz * 2 + 1), v[1]);
#else
    const ivec2 z2 = gz * 2 + ivec2(0, 1);
    const ivec2 dst = z2 * psc(outcstep) + gy * psc(outw) + gx;
    buffer_cp8to4(top_blob_data, dst, bottom_blob_data, gz * psc(cstep) + gy * psc(w) + gx);
#endif
#endif
}
