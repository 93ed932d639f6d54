// Concat: two inputs (or one, given twice) copied into their places in the output, pack1 buffer blobs; the body is
// include/concat_body.comp.
#version 450

#include "fp16_extensions.comp"

layout (binding = 0) readonly buffer a_blob { sfp a_data[]; };
layout (binding = 1) readonly buffer b_blob { sfp b_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_blob_data[]; };

#define T afp
#define LOAD(data, i) buffer_ld1(data, i)
#define STORE(i, v) buffer_st1(top_blob_data, i, v)
#include "concat_body.comp"
