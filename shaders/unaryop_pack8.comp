// The activation layers' functions elementwise on a pack8 blob; the body is
// include/unaryop_body.comp.
#version 450

#include "fp16_extensions.comp"

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler3D bottom_blob;
layout (binding = 1, imfmtc4) writeonly uniform unfp image3D top_blob;
#else
layout (binding = 0) readonly buffer bottom_blob { sfpvec8 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec8 top_blob_data[]; };
#endif

#define afp_t afpvec8
#define LOAD_IMAGE(p) image3d_ld8(bottom_blob, p)
#define LOAD_BUFFER(i) buffer_ld8(bottom_blob_data, i)
#define APPLY(v) v[0] = unary_op(v[0]); v[1] = unary_op(v[1])
#define STORE_IMAGE(p, v) image3d_st8(top_blob, p, v)
#define STORE_BUFFER(i, v) buffer_st8(top_blob_data, i, v)
#include "unaryop_body.comp"
