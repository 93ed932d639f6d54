// Concat: one input copied into its place in the output, pack4 buffer blobs; the body is
// include/concat_body.comp.
#version 450

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };

#define T afpvec4
#define LOAD(i) buffer_ld4(bottom_blob_data, i)
#define STORE(i, v) buffer_st4(top_blob_data, i, v)
#include "concat_body.comp"
