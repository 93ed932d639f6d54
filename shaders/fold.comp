// Fold (col2im), pack1 buffers: output value (x, y) of channel q is the sum, over the taps
// (u, v) in order, of input row (q · kernel_h + u) · kernel_w + v (a 2-D blob's rows are its
// channels, cstep w apart) at the window position whose tap lands there, if any: the padded
// map's (x + pad_left, y + pad_top) minus the tap's offset, a whole number of strides from
// the first position and within the `positions_w × positions_h` positions. Sums in fp32.
// Dispatch [outw, outh, outc].
#version 450

#include "prelude.comp"

layout (local_size_x = 8, local_size_y = 8, local_size_z = 4) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int w, h, c, cstep, outw, outh, outc, outcstep;
    int kernel_w, kernel_h, dilation_w, dilation_h, stride_w, stride_h, pad_left, pad_top;
    int positions_w, positions_h;
} p;

void main()
{
    const int x = int(gl_GlobalInvocationID.x);
    const int y = int(gl_GlobalInvocationID.y);
    const int q = int(gl_GlobalInvocationID.z);
    if (x >= p.outw || y >= p.outh || q >= p.outc)
        return;

    float sum = 0.f;
    for (int u = 0; u < p.kernel_h; u++)
    {
        const int sy = y + p.pad_top - u * p.dilation_h;
        const int i = sy / p.stride_h;
        const bool row = sy >= 0 && i * p.stride_h == sy && i < p.positions_h;
        for (int v = 0; v < p.kernel_w; v++)
        {
            const int sx = x + p.pad_left - v * p.dilation_w;
            const int j = sx / p.stride_w;
            if (row && sx >= 0 && j * p.stride_w == sx && j < p.positions_w)
            {
                const int r = (q * p.kernel_h + u) * p.kernel_w + v;
                sum += float(buffer_ld1(bottom_blob_data, r * p.cstep + i * p.positions_w + j));
            }
        }
    }
    buffer_st1(top_blob_data, q * p.outcstep + y * p.outw + x, afp(sum));
}
