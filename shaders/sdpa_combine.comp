// The parts of sdpa_cm2's split heads weighed into the attention's output: each part's row is
// normalized over its own keys, so the output row is the parts' rows weighted by exp(their
// log-sum-exp less the largest), over the weights' sum (0 where no key of any part counted).
// Parts as sdpa_cm2 writes them: per head and part (head · splits + part) `rows` rows of dv
// fp32 values (src padded to 64), then each of those rows' log-sum-exp in the same order.
// One invocation per output value; the push constants are the attention's.
// Dispatch: global [dv, src, heads].
#version 450

#include "prelude.comp"

layout (constant_id = 4) const int splits = 2;
layout (local_size_x = 64) in;

layout (binding = 0) readonly buffer part_blob { float part_data[]; };
layout (binding = 1) writeonly buffer out_blob { sfp out_data[]; };

#include "sdpa_params.comp"

const float LOWEST = -3.402823466e+38;

void main()
{
    GLOBAL_XYZ;
    if (gx >= p.dv || gy >= p.src)
        return;
    const int rows = PART_ROWS;
    const int lse_at = int(gl_NumWorkGroups.z) * splits * rows * p.dv;
    const int row0 = gz * splits * rows + gy;

    float top = LOWEST;
    for (int s = 0; s < splits; s++)
        top = max(top, part_data[lse_at + row0 + s * rows]);
    float sum = 0.f;
    float acc = 0.f;
    if (top > LOWEST)
    {
        for (int s = 0; s < splits; s++)
        {
            const float w = exp(part_data[lse_at + row0 + s * rows] - top);
            sum += w;
            acc += w * part_data[(row0 + s * rows) * p.dv + gx];
        }
    }
    buffer_st1(out_data, gz * p.out_cstep + gy * p.out_rs + gx, afp(sum > 0.f ? acc / sum : 0.f));
}
