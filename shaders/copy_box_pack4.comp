// Copies a box of a pack4 buffer blob (Crop, Slice); the body is include/copy_box_body.comp.
#version 450

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };

#define COPY(dst, src) buffer_cp4(top_blob_data, dst, bottom_blob_data, src)
#include "copy_box_body.comp"
