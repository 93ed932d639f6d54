// Binary operation with broadcast on pack4 blobs, ops 0 to 11; the body is include/binaryop_body.comp.
#version 450

#include "fp16_extensions.comp"

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler3D a_blob;
layout (binding = 1) uniform unfp sampler3D b_blob;
layout (binding = 2, imfmtc4) writeonly uniform unfp image3D top_blob;
#else
layout (binding = 0) readonly buffer a_blob { sfpvec4 a_blob_data[]; };
layout (binding = 1) readonly buffer b_blob { sfpvec4 b_blob_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
#endif

#define afp_t afpvec4
#define LOAD_IMAGE(b, p) image3d_ld4(b, p)
#define LOAD_BUFFER(d, i) buffer_ld4(d, i)
#define COMBINE(v, a, b) afpvec4 v = binary_op(a, b)
#define STORE_IMAGE(p, v) image3d_st4(top_blob, p, v)
#define STORE_BUFFER(i, v) buffer_st4(top_blob_data, i, v)
#include "binaryop_body.comp"
