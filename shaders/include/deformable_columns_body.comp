// DeformableConv2D's columns (a deformable im2col), pack1 columns from a pack1 or (IN_PACK 4) a
// pack4 input, buffers: column row r = c · taps + k
// holds input channel c sampled at kernel tap k = i · kernel_w + j of each output position n,
// at (y, x) = (n's window origin + tap · dilation + the offset blob's (dy, dx) for (k, n)),
// bilinearly over the four neighbours inside the input (zero outside, nothing where the point
// lies a whole pixel or more outside), times the mask's (k, n) where there is one. The GEMM
// with the weights then makes the output.
//
// One invocation takes one (position, tap) over a group of CHANNELS channels: the offsets, the
// mask, the four neighbours' indices and weights are the same for every channel, so they are
// read and computed once per group (an invocation per column value read the offsets once per
// channel: 134 us for a 128-channel 3x3 layer over 128 x 128 on an H200). Positions run along
// x, so each channel's reads and writes are contiguous across a subgroup.
// Dispatch [positions, taps, channel groups].
// Included by deformable_columns.comp (IN_PACK 1) and deformable_columns_pack4.comp (4).

#include "packed_names.comp"

layout (constant_id = 0) const int has_mask = 0;

#define CHANNELS 8

layout (local_size_x = 64) in;

layout (binding = 0) readonly buffer bottom_blob { sfp_of(IN_PACK) bottom_blob_data[]; };
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
    const int k = int(gl_GlobalInvocationID.y);
    const int taps = p.kernel_w * p.kernel_h;
    const int c0 = int(gl_GlobalInvocationID.z) * CHANNELS;
    if (n >= p.positions || k >= taps || c0 >= p.c)
        return;

    const int i = k / p.kernel_w;
    const int j = k - i * p.kernel_w;
    const int oy = n / p.outw;
    const int ox = n - oy * p.outw;
    const float dy = float(buffer_ld1(offset_data, (k * 2) * p.offset_cstep + n));
    const float dx = float(buffer_ld1(offset_data, (k * 2 + 1) * p.offset_cstep + n));
    const float m = has_mask == 1 ? float(buffer_ld1(mask_data, k * p.mask_cstep + n)) : 1.f;
    const float y = float(oy * p.stride_h - p.pad_top + i * p.dilation_h) + dy;
    const float x = float(ox * p.stride_w - p.pad_left + j * p.dilation_w) + dx;

    // the four neighbours' weights (times the mask), offsets within a channel and whether each
    // lies inside the input (one outside is never read: an inf there would make 0 · inf)
    vec4 wt = vec4(0.f);
    ivec4 at = ivec4(0);
    bvec4 inside = bvec4(false);
    if (y > -1.f && x > -1.f && y < float(p.h) && x < float(p.w))
    {
        const int y0 = int(floor(y));
        const int x0 = int(floor(x));
        const float ly = y - float(y0);
        const float lx = x - float(x0);
        const bool top = y0 >= 0;
        const bool bottom = y0 + 1 <= p.h - 1;
        const bool left = x0 >= 0;
        const bool right = x0 + 1 <= p.w - 1;
        inside = bvec4(top && left, top && right, bottom && left, bottom && right);
        wt = vec4((1.f - ly) * (1.f - lx), (1.f - ly) * lx, ly * (1.f - lx), ly * lx) * m;
        at = ivec4(y0 * p.w + x0, y0 * p.w + x0 + 1, (y0 + 1) * p.w + x0, (y0 + 1) * p.w + x0 + 1);
    }

    const int c_end = min(p.c, c0 + CHANNELS);
#if IN_PACK == 4
    // a block of 4 channels a load per neighbour; the channels' values the neighbours' lanes
    // weighted (p.c is a multiple of 4)
    for (int ch = c0; ch < c_end; ch += 4)
    {
        const int base = (ch / 4) * p.cstep;
        const mat4 v = mat4(inside.x ? vec4(buffer_ld4(bottom_blob_data, base + at.x)) : vec4(0.f),
                            inside.y ? vec4(buffer_ld4(bottom_blob_data, base + at.y)) : vec4(0.f),
                            inside.z ? vec4(buffer_ld4(bottom_blob_data, base + at.z)) : vec4(0.f),
                            inside.w ? vec4(buffer_ld4(bottom_blob_data, base + at.w)) : vec4(0.f));
        const vec4 s = v * wt;
        for (int lane = 0; lane < 4; lane++)
            buffer_st1(top_blob_data, ((ch + lane) * taps + k) * p.positions + n, afp(s[lane]));
    }
#else
    for (int ch = c0; ch < c_end; ch++)
    {
        const int base = ch * p.cstep;
        const vec4 v = vec4(inside.x ? float(buffer_ld1(bottom_blob_data, base + at.x)) : 0.f,
                            inside.y ? float(buffer_ld1(bottom_blob_data, base + at.y)) : 0.f,
                            inside.z ? float(buffer_ld1(bottom_blob_data, base + at.z)) : 0.f,
                            inside.w ? float(buffer_ld1(bottom_blob_data, base + at.w)) : 0.f);
        buffer_st1(top_blob_data, (ch * taps + k) * p.positions + n, afp(dot(wt, v)));
    }
#endif
}
