// Unpacks a pack4 blob into pack1: input channel z spreads to output channels 4z .. 4z+3. Dispatched over the input.
// Shapes are in elements of each side's own packing (c counts packed channels).
#version 450

#include "fp16_extensions.comp"

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler3D bottom_blob;
layout (binding = 1, imfmtc1) writeonly uniform unfp image3D top_blob;
#else
layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
#endif

#include "packing_shape.comp"

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int gz = int(gl_GlobalInvocationID.z);

    if (gx >= psc(w) || gy >= psc(h) || gz >= psc(c))
        return;

#if NCNN_image_shader
    afpvec4 v = image3d_ld4(bottom_blob, ivec3(gx, gy, gz));
    image3d_st1(top_blob, ivec3(gx, gy, gz * 4 + 0), v.r);
    image3d_st1(top_blob, ivec3(gx, gy, gz * 4 + 1), v.g);
    image3d_st1(top_blob, ivec3(gx, gy, gz * 4 + 2), v.b);
    image3d_st1(top_blob, ivec3(gx, gy, gz * 4 + 3), v.a);
#else
    const ivec4 z4 = gz * 4 + ivec4(0, 1, 2, 3);
    const ivec4 dst = z4 * psc(outcstep) + gy * psc(outw) + gx;
    buffer_cp4to1(top_blob_data, dst, bottom_blob_data, gz * psc(cstep) + gy * psc(w) + gx);
#endif
}
