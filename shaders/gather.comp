// Copies with an index map, pack1 buffer blobs out (in too, but for mode 0's), over the four axes of GPU mats
// (x = w, y = h, z = d, w = c: a 4-D mat's rows are d slabs of h; other mats have d = 1):
// each invocation writes one output value, read from the input position the specialization
// constant `mode` maps it to:
// - 0 (permute and shift: Permute, Crop, Slice, Padding): source axis k (x, y, z, w) takes
//   output coordinate perm_k plus off_k; out of range, `border` says what is written:
//   0 the constant `value`, 1 the nearest edge value, 2 the value mirrored at the edge,
//   3 the output channel's own constant (Padding's per-channel values, binding 2; `value`
//   for channels past the first `nconst`). The source may be packed (`pack` values of a
//   channel pack side by side, read through its scalar view; Permute's input as it comes):
//   its channel coordinate counts single channels. So may the output (constant `out_pack`:
//   `out_pack` values of a channel pack side by side along w, written through its scalar
//   view; Padding's packed blobs).
// - 1 (reshape: Reshape, Flatten): the same position in row-major order, channels cstep
//   apart on each side.
// - 2 (channel shuffle): output channel k reads input channel (k % group) * (c / group)
//   + k / group; of packed mats through their scalar views (`pack` values of a channel pack
//   side by side along w, the view's channels being the packs).
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int mode = 0;
layout (constant_id = 1) const int border = 0;
layout (constant_id = 2) const int out_pack = 1;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
layout (binding = 2) readonly buffer constant_blob { sfp constant_data[]; };

layout (push_constant) uniform parameter
{
    int w, h, d, c, cstep, outw, outh, outd, outc, outcstep, perm_x, perm_y, perm_z, perm_w;
    int off_x, off_y, off_z, off_w, group;
    float value;
    int nconst, pack;
} p;

// coordinate i on an axis of n values, or -1 for the constant
int fold(int i, int n)
{
    if (i >= 0 && i < n)
        return i;
    if (border == 0 || border == 3)
        return -1;
    if (border == 1)
        return clamp(i, 0, n - 1);
    const int period = max(2 * (n - 1), 1);
    // GLSL leaves % of a negative operand undefined (drivers differ): fold i >= 0 first
    const int m = i >= 0 ? i % period : period - 1 - (-i - 1) % period;
    return m < n ? m : period - m;
}

void main()
{
    GLOBAL_XYZ;

    if (gx >= p.outw || gy >= p.outh * p.outd || gz >= p.outc)
        return;

    // the output's own column and channel (a packed output's view holds out_pack lanes per
    // column: modes 1 and 2 take none)
    const int ox = gx / out_pack;
    const int oc = gz * out_pack + gx % out_pack;
    // the source's channel and row of its 3-D view (h * d rows), and column
    int sx;
    int sy;
    int sz;
    if (mode == 1)
    {
        const int rows = p.h * p.d;
        const int i = (gz * p.outh * p.outd + gy) * p.outw + gx;
        sx = i % p.w;
        sy = (i / p.w) % rows;
        sz = i / (p.w * rows);
    }
    else if (mode == 2)
    {
        const int k = gz * p.pack + gx % p.pack;
        const int channels = p.c * p.pack;
        const int s = (k % p.group) * (channels / p.group) + k / p.group;
        sx = (gx / p.pack) * p.pack + s % p.pack;
        sy = gy;
        sz = s / p.pack;
    }
    else
    {
        const ivec4 o = ivec4(ox, gy % p.outh, gy / p.outh, oc);
        sx = fold(o[p.perm_x] + p.off_x, p.w);
        const int y = fold(o[p.perm_y] + p.off_y, p.h);
        const int z = fold(o[p.perm_z] + p.off_z, p.d);
        sz = fold(o[p.perm_w] + p.off_w, p.c * p.pack);
        sy = (y < 0 || z < 0) ? -1 : z * p.h + y;
    }

    const int gi = gz * p.outcstep + gy * p.outw + gx;
    if (sx < 0 || sy < 0 || sz < 0)
    {
        if (border == 3 && oc < p.nconst)
        {
            buffer_cp1(top_blob_data, gi, constant_data, oc);
        }
        else
        {
            buffer_st1(top_blob_data, gi, afp(p.value));
        }
    }
    else
    {
        // a packed source (mode 0): channel sz is lane sz % pack of its pack's values
        const int pk = mode == 0 ? p.pack : 1;
        const int si = ((sz / pk) * p.cstep + sy * p.w + sx) * pk + sz % pk;
        buffer_cp1(top_blob_data, gi, bottom_blob_data, si);
    }
}
