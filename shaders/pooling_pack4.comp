// 2-D pooling (max/average, global, adaptive, ncnn's pads) on a pack4 buffer blob; the
// body is include/pooling_body.comp.
#version 450

#include "fp16_extensions.comp"

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };

#define T afpvec4
#define LOAD(i) buffer_ld4(bottom_blob_data, i)
#define STORE(i, v) buffer_st4(top_blob_data, i, v)
#define F vec4
#include "pooling_body.comp"
