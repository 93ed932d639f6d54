// Per-channel affine or PReLU, in place (BatchNorm, Scale, Bias, PReLU), pack4 buffer blobs; the body is
// include/channel_affine_body.comp.
#version 450

#include "prelude.comp"

layout (binding = 0) buffer blob { sfpvec4 blob_data[]; };

#define LOAD(i) buffer_ld4(blob_data, i)
#define STORE(i, v) buffer_st4(blob_data, i, v)
#define COEF(buf, z) afpvec4(buf[z])
#define AFFINE(v, a, b) ((v) * (a) + (b))
#define PRELU(v, a) mix((v), (v) * (a), lessThan((v), afpvec4(0.f)))
#include "channel_affine_body.comp"
