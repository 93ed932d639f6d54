// Concat: two inputs (or one, given twice) copied into their places in the output, pack4 buffer blobs; the body is
// include/concat_body.comp.
#version 450

#include "fp16_extensions.comp"

layout (binding = 0) readonly buffer a_blob { sfpvec4 a_data[]; };
layout (binding = 1) readonly buffer b_blob { sfpvec4 b_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };

#define T afpvec4
#define LOAD(data, i) buffer_ld4(data, i)
#define STORE(i, v) buffer_st4(top_blob_data, i, v)
#include "concat_body.comp"
