#version 450
// Multiplies a pack4 blob by a constant: top = bottom * scale.

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif

#include "common.comp"

layout (constant_id = 0) const float scale = 1.0;
layout (constant_id = 1) const int n = 0;

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int n;
} p;

void main()
{
    const int gi = int(gl_GlobalInvocationID.x);
    if (gi >= psc(n))
        return;
    buffer_st4(top_blob_data, gi, scale_by(buffer_ld4(bottom_blob_data, gi), scale));
}
