// The activation layers' functions elementwise on a pack4 blob; the body is
// include/unaryop_body.comp.
#version 450

#include "fp16_extensions.comp"

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler3D bottom_blob;
layout (binding = 1, imfmtc4) writeonly uniform unfp image3D top_blob;
#else
layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
#endif

#define afp_t afpvec4
#define LOAD_IMAGE(p) image3d_ld4(bottom_blob, p)
#define LOAD_BUFFER(i) buffer_ld4(bottom_blob_data, i)
#define APPLY(v) v = unary_op(v)
#define STORE_IMAGE(p, v) image3d_st4(top_blob, p, v)
#define STORE_BUFFER(i, v) buffer_st4(top_blob_data, i, v)
#include "unaryop_body.comp"
