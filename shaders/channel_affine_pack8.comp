// Per-channel affine or PReLU, in place (BatchNorm, Scale, Bias, PReLU), pack8 buffer blobs; the body is
// include/channel_affine_body.comp.
#version 450

#include "prelude.comp"

layout (binding = 0) buffer blob { sfpvec8 blob_data[]; };

#define LOAD(i) buffer_ld8(blob_data, i)
#define STORE(i, v) buffer_st8(blob_data, i, v)
#define COEF(buf, z) afpvec8(afpvec4(buf[(z) * 2]), afpvec4(buf[(z) * 2 + 1]))
#define AFFINE(v, a, b) afpvec8((v)[0] * (a)[0] + (b)[0], (v)[1] * (a)[1] + (b)[1])
#define PRELU(v, a) afpvec8(mix((v)[0], (v)[0] * (a)[0], lessThan((v)[0], afpvec4(0.f))), mix((v)[1], (v)[1] * (a)[1], lessThan((v)[1], afpvec4(0.f))))
#include "channel_affine_body.comp"
