// Spectrogram, pack1 buffers: one invocation per frame t (x) and frequency f (y), the frame's
// n_fft values (the centring's padding read as indices: zeros, the edge value or the
// reflection) windowed and summed against e^{-2πi f k / n}, the angle reduced to
// 2π (f k mod n) / n first; a frequency past n / 2 (two-sided) is the conjugate of n - f.
// Output: power 0 [f][t][re, im] (channels cstep apart), else [f][t] magnitudes or powers.
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int n_fft = 1;
layout (constant_id = 1) const int power = 0;
layout (constant_id = 2) const int hoplen = 1;
layout (constant_id = 3) const int center = 1;
layout (constant_id = 4) const int pad_type = 2;
layout (constant_id = 5) const float scale = 1.f;

layout (local_size_x = 64, local_size_y = 4) in;

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
    const int t = int(gl_GlobalInvocationID.x);
    const int f = int(gl_GlobalInvocationID.y);
    if (t >= p.frames || f >= p.freqs)
        return;

    const bool mirrored = f > n_fft / 2;
    const int ff = mirrored ? n_fft - f : f;
    float re = 0.f;
    float im = 0.f;
    for (int k = 0; k < n_fft; k++)
    {
        const float v = sample_at(t * hoplen + k) * float(buffer_ld1(window_data, k));
        const float angle = 6.283185307179586 * float((ff * k) % n_fft) / float(n_fft);
        re += v * cos(angle);
        im -= v * sin(angle);
    }
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
