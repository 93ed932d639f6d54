// Repacks a pack4 blob into pack8: output channel z holds input channels 2z and 2z+1.
// Shapes are in elements of each side's own packing (c counts packed channels).
#version 450

#include "fp16_extensions.comp"

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler3D bottom_blob;
layout (binding = 1, imfmtc4) writeonly uniform unfp image3D top_blob;
#else
layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec8 top_blob_data[]; };
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
    afpvec8 v;
    v[0] = image3d_ld4(bottom_blob, ivec3(gx, gy, gz * 2 + 0));
    v[1] = image3d_ld4(bottom_blob, ivec3(gx, gy, gz * 2 + 1));
    image3d_st8(top_blob, ivec3(gx, gy, gz), v);
#else
    const ivec2 z2 = gz * 2 + ivec2(0, 1);
    const ivec2 src = z2 * psc(cstep) + gy * psc(w) + gx;
    buffer_cp4to8(top_blob_data, gz * psc(outcstep) + gy * psc(outw) + gx, bottom_blob_data, src);
#endif
}
