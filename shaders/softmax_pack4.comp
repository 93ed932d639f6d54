// Softmax along one axis, in place, pack4 buffer blobs; the body is include/softmax_body.comp.
#version 450

#include "prelude.comp"

layout (binding = 0) buffer blob { sfpvec4 blob_data[]; };

#define F vec4
#define LOAD(i) vec4(buffer_ld4(blob_data, i))
#define STORE(i, v) buffer_st4(blob_data, i, afpvec4(v))
#define LANES_MAX(v) max(max((v).x, (v).y), max((v).z, (v).w))
#define LANES_SUM(v) (((v).x + (v).y) + ((v).z + (v).w))
#include "softmax_body.comp"
