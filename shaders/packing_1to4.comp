// Repacks a pack1 blob into pack4: output channel z holds input channels 4z .. 4z+3.
// Shapes are in elements of each side's own packing (c counts packed channels). Buffer blobs
// of channels not a multiple of 4 get zero lanes past the last (the convolution GEMM reads an
// RGB image as one block).
#version 450

#include "fp16_extensions.comp"

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler3D bottom_blob;
layout (binding = 1, imfmtc4) writeonly uniform unfp image3D top_blob;
#else
layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
#endif

#include "packing_shape.comp"

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int gz = int(gl_GlobalInvocationID.z);

    if (gx >= psc(outw) || gy >= psc(outh) || gz >= psc(outc))
        return;

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
}
