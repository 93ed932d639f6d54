// DeformableConv2D's columns (a deformable im2col), pack1 buffers: column row r = c · taps + k
// holds input channel c sampled at kernel tap k = i · kernel_w + j of each output position n,
// at (y, x) = (n's window origin + tap · dilation + the offset blob's (dy, dx) for (k, n)),
// bilinearly over the four neighbours inside the input (zero outside, nothing where the point
// lies a whole pixel or more outside), times the mask's (k, n) where there is one. The GEMM
// with the weights then makes the output. Dispatch [positions, rows, 1].
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int has_mask = 0;

layout (local_size_x = 64, local_size_y = 4) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) readonly buffer offset_blob { sfp offset_data[]; };
layout (binding = 2) readonly buffer mask_blob { sfp mask_data[]; };
layout (binding = 3) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int w, h, c, cstep;
    // the offsets' and the mask's channel steps, the columns' row step (positions)
    int offset_cstep, mask_cstep, positions;
    int outw, kernel_w, kernel_h, dilation_w, dilation_h, stride_w, stride_h, pad_left, pad_top;
} p;

void main()
{
    const int n = int(gl_GlobalInvocationID.x);
    const int r = int(gl_GlobalInvocationID.y);
    const int taps = p.kernel_w * p.kernel_h;
    if (n >= p.positions || r >= p.c * taps)
        return;

    const int ch = r / taps;
    const int k = r - ch * taps;
    const int i = k / p.kernel_w;
    const int j = k - i * p.kernel_w;
    const int oy = n / p.outw;
    const int ox = n - oy * p.outw;
    const float dy = float(buffer_ld1(offset_data, (k * 2) * p.offset_cstep + n));
    const float dx = float(buffer_ld1(offset_data, (k * 2 + 1) * p.offset_cstep + n));
    const float m = has_mask == 1 ? float(buffer_ld1(mask_data, k * p.mask_cstep + n)) : 1.f;
    const float y = float(oy * p.stride_h - p.pad_top + i * p.dilation_h) + dy;
    const float x = float(ox * p.stride_w - p.pad_left + j * p.dilation_w) + dx;

    float v = 0.f;
    if (y > -1.f && x > -1.f && y < float(p.h) && x < float(p.w))
    {
        const int y0 = int(floor(y));
        const int x0 = int(floor(x));
        const float ly = y - float(y0);
        const float lx = x - float(x0);
        const int base = ch * p.cstep;
        const bool top = y0 >= 0;
        const bool bottom = y0 + 1 <= p.h - 1;
        const bool left = x0 >= 0;
        const bool right = x0 + 1 <= p.w - 1;
        const float v1 = top && left ? float(buffer_ld1(bottom_blob_data, base + y0 * p.w + x0)) : 0.f;
        const float v2 = top && right ? float(buffer_ld1(bottom_blob_data, base + y0 * p.w + x0 + 1)) : 0.f;
        const float v3 = bottom && left ? float(buffer_ld1(bottom_blob_data, base + (y0 + 1) * p.w + x0)) : 0.f;
        const float v4 = bottom && right ? float(buffer_ld1(bottom_blob_data, base + (y0 + 1) * p.w + x0 + 1)) : 0.f;
        v = (1.f - ly) * (1.f - lx) * v1 + (1.f - ly) * lx * v2 + ly * (1.f - lx) * v3 + ly * lx * v4;
    }
    buffer_st1(top_blob_data, r * p.positions + n, afp(v * m));
}
