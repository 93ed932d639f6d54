// Unfold (im2col), pack1 buffers: output row r = (q · kernel_h + u) · kernel_w + v (a 2-D
// blob's rows are its channels, cstep w apart) holds input channel q's tap (u, v) at each of
// the window positions, `positions_w` to a row; outside the input, the pad value. Dispatch
// [positions, rows, 1].
#version 450

#include "prelude.comp"

layout (local_size_x = 64, local_size_y = 4) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int w, h, c, cstep, outw, outh, outc, outcstep;
    int kernel_w, kernel_h, dilation_w, dilation_h, stride_w, stride_h, pad_left, pad_top;
    int positions_w;
    float pad_value;
} p;

void main()
{
    const int n = int(gl_GlobalInvocationID.x);
    const int r = int(gl_GlobalInvocationID.y);
    if (n >= p.outw || r >= p.outc)
        return;

    const int maxk = p.kernel_w * p.kernel_h;
    const int q = r / maxk;
    const int k = r - q * maxk;
    const int u = k / p.kernel_w;
    const int v = k - u * p.kernel_w;
    const int i = n / p.positions_w;
    const int j = n - i * p.positions_w;
    const int y = i * p.stride_h + u * p.dilation_h - p.pad_top;
    const int x = j * p.stride_w + v * p.dilation_w - p.pad_left;
    const bool inside = x >= 0 && x < p.w && y >= 0 && y < p.h;
    const afp value = buffer_ld1(bottom_blob_data, inside ? q * p.cstep + y * p.w + x : 0);
    buffer_st1(top_blob_data, r * p.outcstep + n, inside ? value : afp(p.pad_value));
}
