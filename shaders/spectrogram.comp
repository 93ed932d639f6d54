// Spectrogram, pack1 buffers: a workgroup per frame t (y, striding over the frames past the
// grid's height) and 64 frequencies f (x). The frame's n_fft values (the centring's padding read
// as indices: zeros, the edge value or the reflection) are windowed into shared memory once per
// workgroup, CHUNK at a time, and each invocation sums them against e^{-2πi f k / n}, the angle
// 2π (f k mod n) / n kept reduced as an index stepped by f (an invocation per value with a
// modulo and its own loads per step took 76 us for 126 frames of 512 on an H200); a frequency
// past n / 2 (two-sided) is the conjugate of n - f.
// Output: power 0 [f][t][re, im] (channels cstep apart), else [f][t] magnitudes or powers.
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int n_fft = 1;
layout (constant_id = 1) const int power = 0;
layout (constant_id = 2) const int hoplen = 1;
layout (constant_id = 3) const int center = 1;
layout (constant_id = 4) const int pad_type = 2;
layout (constant_id = 5) const float scale = 1.f;

layout (local_size_x = 64) in;

// windowed values of the frame staged at a time
#define CHUNK 256
shared float frame_values[CHUNK];

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) readonly buffer window_blob { sfp window_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int size, frames, freqs, outcstep;
} p;

// value i of the padded signal
float sample_at(int i)
{
    const int j = i - (center == 1 ? n_fft / 2 : 0);
    const int last = p.size - 1;
    int at = j;
    if (j < 0 || j > last)
    {
        if (pad_type == 0)
            return 0.f;
        at = pad_type == 1 ? clamp(j, 0, last) : (j < 0 ? -j : 2 * last - j);
    }
    return float(buffer_ld1(bottom_blob_data, at));
}

void main()
{
    const int f = int(gl_GlobalInvocationID.x);
    const int lid = int(gl_LocalInvocationID.x);
    const bool inside = f < p.freqs;
    const bool mirrored = f > n_fft / 2;
    const int ff = inside ? (mirrored ? n_fft - f : f) : 0;
    const float step = 6.283185307179586 / float(n_fft);

    for (int t = int(gl_WorkGroupID.y); t < p.frames; t += int(gl_NumWorkGroups.y))
    {
        float re = 0.f;
        float im = 0.f;
        // (ff · k) mod n_fft
        int idx = 0;
        for (int k0 = 0; k0 < n_fft; k0 += CHUNK)
        {
            const int len = min(CHUNK, n_fft - k0);
            // the last chunk's readers are done
            barrier();
            for (int e = lid; e < len; e += 64)
                frame_values[e] = sample_at(t * hoplen + k0 + e) * float(buffer_ld1(window_data, k0 + e));
            barrier();
            for (int e = 0; e < len; e++)
            {
                const float v = frame_values[e];
                const float angle = float(idx) * step;
                re += v * cos(angle);
                im -= v * sin(angle);
                idx += ff;
                idx -= idx >= n_fft ? n_fft : 0;
            }
        }
        if (!inside)
            continue;
        re *= scale;
        im *= mirrored ? -scale : scale;
        if (power == 0)
        {
            const int at = f * p.outcstep + t * 2;
            buffer_st1(top_blob_data, at, afp(re));
            buffer_st1(top_blob_data, at + 1, afp(im));
        }
        else
        {
            const float m = re * re + im * im;
            buffer_st1(top_blob_data, f * p.outcstep + t, afp(power == 1 ? sqrt(m) : m));
        }
    }
}
