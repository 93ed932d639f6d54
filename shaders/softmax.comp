// Softmax along one axis, in place, pack1 buffer blobs; the body is include/softmax_body.comp.
#version 450

#include "prelude.comp"

layout (binding = 0) buffer blob { sfp blob_data[]; };

#define F float
#define LOAD(i) float(buffer_ld1(blob_data, i))
#define STORE(i, v) buffer_st1(blob_data, i, afp(v))
#define LANES_MAX(v) (v)
#define LANES_SUM(v) (v)
#include "softmax_body.comp"
