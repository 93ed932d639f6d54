// Binary operation with broadcast on pack1 blobs, ops 0 to 18 on afp (BINARY_OP_SCALAR); the body is include/binaryop_body.comp.
#version 450

#include "fp16_extensions.comp"

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler3D a_blob;
layout (binding = 1) uniform unfp sampler3D b_blob;
layout (binding = 2, imfmtc1) writeonly uniform unfp image3D top_blob;
#else
layout (binding = 0) readonly buffer a_blob { sfp a_blob_data[]; };
layout (binding = 1) readonly buffer b_blob { sfp b_blob_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_blob_data[]; };
#endif

#define BINARY_OP_SCALAR
#define afp_t afp
#define LOAD_IMAGE(b, p) image3d_ld1(b, p)
#define LOAD_BUFFER(d, i) buffer_ld1(d, i)
#define COMBINE(v, a, b) afp v = binary_op(a, b)
#define STORE_IMAGE(p, v) image3d_st1(top_blob, p, v)
#define STORE_BUFFER(i, v) buffer_st1(top_blob_data, i, v)
#include "binaryop_body.comp"
