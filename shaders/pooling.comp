// 2-D pooling (max/average, global, adaptive, ncnn's pads) on a pack1 buffer blob; the
// body is include/pooling_body.comp.
#version 450

#include "fp16_extensions.comp"

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };

#define T afp
#define LOAD(i) buffer_ld1(bottom_blob_data, i)
#define STORE(i, v) buffer_st1(top_blob_data, i, v)
#define F float
#include "pooling_body.comp"
