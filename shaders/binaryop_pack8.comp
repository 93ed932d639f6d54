// Binary operation with broadcast on pack8 blobs (16-byte accesses with fp16 storage), ops 0 to 11; the body is include/binaryop_body.comp.
#version 450

#include "fp16_extensions.comp"

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler3D a_blob;
layout (binding = 1) uniform unfp sampler3D b_blob;
layout (binding = 2, imfmtc4) writeonly uniform unfp image3D top_blob;
#else
layout (binding = 0) readonly buffer a_blob { sfpvec8 a_blob_data[]; };
layout (binding = 1) readonly buffer b_blob { sfpvec8 b_blob_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfpvec8 top_blob_data[]; };
#endif

#define afp_t afpvec8
#define LOAD_IMAGE(b, p) image3d_ld8(b, p)
#define LOAD_BUFFER(d, i) buffer_ld8(d, i)
#define COMBINE(v, a, b) afpvec8 v; v[0] = binary_op(a[0], b[0]); v[1] = binary_op(a[1], b[1])
#define STORE_IMAGE(p, v) image3d_st8(top_blob, p, v)
#define STORE_BUFFER(i, v) buffer_st8(top_blob_data, i, v)
#include "binaryop_body.comp"
