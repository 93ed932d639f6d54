#version 450
// Copies a pack4 blob without touching arithmetic types.

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };

void main()
{
    const int gi = int(gl_GlobalInvocationID.x);
    buffer_cp4(top_blob_data, gi, bottom_blob_data, gi);
}
