// RotaryEmbed: each pair of a row turns by its angle, (x0, x1) -> (x0·cos − x1·sin,
// x0·sin + x1·cos); a pair is two neighbours with `interleaved`, else the same place in the
// row's two halves. Pack1 buffers: x and out (w × h × c), cos and sin (cache_w × h, the first
// w/2 of each row read).
// Dispatch [w / 2, h, c]: one invocation per pair.
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int interleaved = 0;

layout (local_size_x = 32, local_size_y = 4) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_data[]; };
layout (binding = 1) readonly buffer cos_blob { sfp cos_data[]; };
layout (binding = 2) readonly buffer sin_blob { sfp sin_data[]; };
layout (binding = 3) writeonly buffer top_blob { sfp top_data[]; };

layout (push_constant) uniform parameter
{
    int w, h, c, cstep, out_cstep, cache_w;
} p;

void main()
{
    const int j = int(gl_GlobalInvocationID.x);
    const int y = int(gl_GlobalInvocationID.y);
    const int q = int(gl_GlobalInvocationID.z);
    const int half_w = p.w / 2;
    if (j >= half_w || y >= p.h || q >= p.c)
        return;

    const int i0 = interleaved == 1 ? 2 * j : j;
    const int i1 = interleaved == 1 ? 2 * j + 1 : j + half_w;
    const int row = q * p.cstep + y * p.w;
    const int out_row = q * p.out_cstep + y * p.w;
    const float x0 = float(buffer_ld1(bottom_data, row + i0));
    const float x1 = float(buffer_ld1(bottom_data, row + i1));
    const float co = float(buffer_ld1(cos_data, y * p.cache_w + j));
    const float si = float(buffer_ld1(sin_data, y * p.cache_w + j));
    buffer_st1(top_data, out_row + i0, afp(x0 * co - x1 * si));
    buffer_st1(top_data, out_row + i1, afp(x0 * si + x1 * co));
}
