// InverseSpectrogram, pack1 buffers: one invocation per output sample o, summing in frame order
// the windowed inverse DFT value i = o (+ n_fft / 2 where centred) - j · hoplen of each frame j
// whose span covers it (its spectrum [freq][frame][re, im], one-sided ones mirrored as
// conjugates, scaled by `scale`), over the frames' summed squared window there (where that is
// not 0). Output: returns 0 [o][re, im], 1 the real parts, 2 the imaginary ones.
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int n_fft = 1;
layout (constant_id = 1) const int returns = 0;
layout (constant_id = 2) const int hoplen = 1;
layout (constant_id = 3) const int center = 1;
layout (constant_id = 4) const int onesided = 1;
layout (constant_id = 5) const float scale = 1.f;

layout (local_size_x = 64) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) readonly buffer window_blob { sfp window_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int frames, cstep, outsize;
} p;

void main()
{
    const int o = int(gl_GlobalInvocationID.x);
    if (o >= p.outsize)
        return;

    const int shifted = o + (center == 1 ? n_fft / 2 : 0);
    float re = 0.f;
    float im = 0.f;
    float sumsquare = 0.f;
    for (int j = 0; j < p.frames; j++)
    {
        const int i = shifted - j * hoplen;
        if (i < 0 || i >= n_fft)
            continue;
        float fr = 0.f;
        float fi = 0.f;
        for (int k = 0; k < n_fft; k++)
        {
            const bool mirrored = onesided == 1 && k > n_fft / 2;
            const int kk = mirrored ? n_fft - k : k;
            const float sr = float(buffer_ld1(bottom_blob_data, kk * p.cstep + j * 2)) * scale;
            const float si = float(buffer_ld1(bottom_blob_data, kk * p.cstep + j * 2 + 1)) * (mirrored ? -scale : scale);
            const float angle = 6.283185307179586 * float((i * k) % n_fft) / float(n_fft);
            const float c = cos(angle);
            const float s = sin(angle);
            fr += sr * c - si * s;
            fi += sr * s + si * c;
        }
        const float w = float(buffer_ld1(window_data, i));
        re += fr / float(n_fft) * w;
        im += fi / float(n_fft) * w;
        sumsquare += w * w;
    }
    if (sumsquare != 0.f)
    {
        re /= sumsquare;
        im /= sumsquare;
    }
    if (returns == 0)
    {
        buffer_st1(top_blob_data, o * 2, afp(re));
        buffer_st1(top_blob_data, o * 2 + 1, afp(im));
    }
    else
    {
        buffer_st1(top_blob_data, o, afp(returns == 1 ? re : im));
    }
}
