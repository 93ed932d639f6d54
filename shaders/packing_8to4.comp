// Unpacks a pack8 blob into pack4: input channel z spreads to output channels 2z and 2z+1. Dispatched over the input.
// Shapes are in elements of each side's own packing (c counts packed channels).
#version 450

#include "fp16_extensions.comp"

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler3D bottom_blob;
layout (binding = 1, imfmtc4) writeonly uniform unfp image3D top_blob;
#else
layout (binding = 0) readonly buffer bottom_blob { sfpvec8 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
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
    afpvec8 v = image3d_ld8(bottom_blob, ivec3(gx, gy, gz));
    image3d_st4(top_blob, ivec3(gx, gy, gz * 2 + 0), v[0]);
    image3d_st4(top_blob, ivec3(gx, gy, gz * 2 + 1), v[1]);
#else
    const ivec2 z2 = gz * 2 + ivec2(0, 1);
    const ivec2 dst = z2 * psc(outcstep) + gy * psc(outw) + gx;
    buffer_cp8to4(top_blob_data, dst, bottom_blob_data, gz * psc(cstep) + gy * psc(w) + gx);
#endif
}
