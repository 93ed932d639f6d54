// Per-channel affine or PReLU, in place (BatchNorm, Scale, Bias, PReLU), pack1 buffer blobs; the body is
// include/channel_affine_body.comp.
#version 450

#include "prelude.comp"

layout (binding = 0) buffer blob { sfp blob_data[]; };

#define LOAD(i) buffer_ld1(blob_data, i)
#define STORE(i, v) buffer_st1(blob_data, i, v)
#define COEF(buf, z) afp(buf[(z) / 4][(z) % 4])
#define AFFINE(v, a, b) ((v) * (a) + (b))
#define PRELU(v, a) ((v) < afp(0.f) ? (v) * (a) : (v))
#include "channel_affine_body.comp"
