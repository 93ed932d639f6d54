// The channel_affine shaders' body, for one packing: `T` (the arithmetic type), `LOAD(i)`,
// `STORE(i, v)`, `COEF(buf, z)` (channel z's coefficients, fp32 in the weight buffers),
// `AFFINE(v, a, b)` and `PRELU(v, a)`. In place: blob = blob * a[channel] + b[channel]
// (affine_mode 0: BatchNorm, Scale, Bias) or blob < 0 ? blob * a[channel] : blob (affine_mode
// 1: PReLU), channel being the 3-D view's z (what ncnn calls the channel of a 1-, 2- or 3-D
// blob). Coefficients stay fp32 whatever the storage:
// BatchNorm folds mean and variance into them, which fp16 would round twice.

layout (constant_id = 0) const int affine_mode = 0;

layout (binding = 1) readonly buffer a_blob { vec4 a_data[]; };
layout (binding = 2) readonly buffer b_blob { vec4 b_data[]; };

layout (push_constant) uniform parameter
{
    int w, h, c, cstep;
} p;

void main()
{
    GLOBAL_XYZ;

    if (gx >= p.w || gy >= p.h || gz >= p.c)
        return;

    const int gi = gz * p.cstep + gy * p.w + gx;
    if (affine_mode == 1)
    {
        STORE(gi, PRELU(LOAD(gi), COEF(a_data, gz)));
    }
    else
    {
        STORE(gi, AFFINE(LOAD(gi), COEF(a_data, gz), COEF(b_data, gz)));
    }
}
