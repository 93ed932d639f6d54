// InverseSpectrogram, pack1 buffers, in two stages (specialization constant 6):
// 0: each frame's windowed inverse DFT values into a scratch blob, [frame][i][re, im] (rows
//    scratch_step apart): a workgroup per frame j (y, striding over the frames past the grid's
//    height) and 64 values i (x), the frame's spectrum ([freq][frame][re, im], one-sided ones
//    mirrored as conjugates, scaled by `scale`) staged in shared memory CHUNK frequencies at a
//    time, the angle 2π (i k mod n) / n kept reduced as an index stepped by i;
// 1: an invocation per output sample o summing, in frame order, value i = o (+ n_fft / 2 where
//    centred) - j · hoplen of each frame j whose span covers it, over the frames' summed
//    squared window there (where that is not 0). Output: returns 0 [o][re, im], 1 the real
//    parts, 2 the imaginary ones.
// (One invocation per output sample doing each covering frame's whole DFT, with a modulo and
// its own loads per step, took 90 us for 126 frames of 512 on an H200.)
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int n_fft = 1;
layout (constant_id = 1) const int returns = 0;
layout (constant_id = 2) const int hoplen = 1;
layout (constant_id = 3) const int center = 1;
layout (constant_id = 4) const int onesided = 1;
layout (constant_id = 5) const float scale = 1.f;
layout (constant_id = 6) const int stage = 0;

layout (local_size_x = 64) in;

// stage 0: the spectrum (stage 1: the scratch); stage 0: the scratch (stage 1: the output)
layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) readonly buffer window_blob { sfp window_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int frames, cstep, outsize, scratch_step;
} p;

// frequencies of the spectrum staged at a time
#define CHUNK 128
shared vec2 spectrum[CHUNK];

void frame_values()
{
    const int i = int(gl_GlobalInvocationID.x);
    const int lid = int(gl_LocalInvocationID.x);
    const bool inside = i < n_fft;
    const int ii = inside ? i : 0;
    const float step = 6.283185307179586 / float(n_fft);
    for (int j = int(gl_WorkGroupID.y); j < p.frames; j += int(gl_NumWorkGroups.y))
    {
        float fr = 0.f;
        float fi = 0.f;
        // (i · k) mod n_fft
        int idx = 0;
        for (int k0 = 0; k0 < n_fft; k0 += CHUNK)
        {
            const int len = min(CHUNK, n_fft - k0);
            // the last chunk's readers are done
            barrier();
            for (int e = lid; e < len; e += 64)
            {
                const int k = k0 + e;
                const bool mirrored = onesided == 1 && k > n_fft / 2;
                const int kk = mirrored ? n_fft - k : k;
                const float sr = float(buffer_ld1(bottom_blob_data, kk * p.cstep + j * 2)) * scale;
                const float si = float(buffer_ld1(bottom_blob_data, kk * p.cstep + j * 2 + 1)) * (mirrored ? -scale : scale);
                spectrum[e] = vec2(sr, si);
            }
            barrier();
            for (int e = 0; e < len; e++)
            {
                const vec2 s = spectrum[e];
                const float angle = float(idx) * step;
                const float c = cos(angle);
                const float sn = sin(angle);
                fr += s.x * c - s.y * sn;
                fi += s.x * sn + s.y * c;
                idx += ii;
                idx -= idx >= n_fft ? n_fft : 0;
            }
        }
        if (inside)
        {
            const float w = float(buffer_ld1(window_data, i)) / float(n_fft);
            buffer_st1(top_blob_data, j * p.scratch_step + i * 2, afp(fr * w));
            buffer_st1(top_blob_data, j * p.scratch_step + i * 2 + 1, afp(fi * w));
        }
    }
}

void overlap_add()
{
    const int o = int(gl_GlobalInvocationID.x);
    if (o >= p.outsize)
        return;

    const int shifted = o + (center == 1 ? n_fft / 2 : 0);
    // the frames whose span [j · hoplen, j · hoplen + n_fft) covers `shifted`
    const int first = shifted >= n_fft ? (shifted - n_fft) / hoplen + 1 : 0;
    const int last = min(p.frames - 1, shifted / hoplen);
    float re = 0.f;
    float im = 0.f;
    float sumsquare = 0.f;
    for (int j = first; j <= last; j++)
    {
        const int i = shifted - j * hoplen;
        re += float(buffer_ld1(bottom_blob_data, j * p.scratch_step + i * 2));
        im += float(buffer_ld1(bottom_blob_data, j * p.scratch_step + i * 2 + 1));
        const float w = float(buffer_ld1(window_data, i));
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

void main()
{
    if (stage == 0)
        frame_values();
    else
        overlap_add();
}
