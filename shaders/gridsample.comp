// GridSample, pack1 buffers: each output value is the image's channel sampled at its grid
// point (bilinear, nearest or bicubic; zeros, border or reflection outside; ncnn's rounding),
// the grid's normalized coordinates unnormalized with or without aligned corners. A 4-D image
// (d slabs of h rows per channel) is sampled in 3-D (bilinear or nearest). The grid holds a
// point's coordinates together (x, y[, z] innermost), or with permute_fusion one channel per
// coordinate. Dispatch [outw, outh · outd, channels].
#version 450

#include "prelude.comp"

layout (constant_id = 0) const int sample_type = 1;
layout (constant_id = 1) const int padding_mode = 1;
layout (constant_id = 2) const int align_corner = 0;
layout (constant_id = 3) const int permute_fusion = 0;

layout (local_size_x = 8, local_size_y = 8, local_size_z = 4) in;

layout (binding = 0) readonly buffer image_blob { sfp image_data[]; };
layout (binding = 1) readonly buffer grid_blob { sfp grid_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_blob_data[]; };

// the 3-D views (w, h · d, c, cstep) of the image, the grid and the output; the image's and
// the output's depths, the coordinates per point (2, or 3 for a 4-D image)
layout (push_constant) uniform parameter
{
    int w, h, c, cstep;
    int gw, gh, gc, gcstep;
    int outw, outh, outc, outcstep;
    int d, outd, k;
} p;

float unnormalize(float v, int n)
{
    return align_corner == 1 ? (v + 1.f) / 2.f * float(n - 1) : ((v + 1.f) * float(n) - 1.f) / 2.f;
}

float pad_coord(float x, int n)
{
    const float last = float(n - 1);
    if (padding_mode == 2)
        return clamp(x, 0.f, last);
    if (padding_mode == 3)
    {
        if (align_corner == 1)
            return last - abs(abs(x) - last);
        const float r = float(n) - abs(abs(x + 0.5f) - float(n)) - 0.5f;
        return clamp(r, 0.f, last);
    }
    return x;
}

// the image's value of channel q at (x, y, z), 0 outside
float at(int q, int x, int y, int z, int ih)
{
    const bool inside = x >= 0 && x < p.w && y >= 0 && y < ih && z >= 0 && z < p.d;
    const float v = float(buffer_ld1(image_data, inside ? q * p.cstep + (z * ih + y) * p.w + x : 0));
    return inside ? v : 0.f;
}

// grid point n's coordinate along axis a: with permute_fusion channel a's value n, else
// value a of point n (the grid's view has one row of k values per point, gh rows a channel)
float grid_coord(int n, int a)
{
    const int i = permute_fusion == 1 ? a * p.gcstep + n : (n / p.gh) * p.gcstep + (n % p.gh) * p.k + a;
    return float(buffer_ld1(grid_data, i));
}

vec4 cubic(float t)
{
    const float A = -0.75f;
    const float x0 = t + 1.f;
    const float x1 = t;
    const float x2 = 1.f - t;
    const float c0 = A * x0 * x0 * x0 - 5.f * A * x0 * x0 + 8.f * A * x0 - 4.f * A;
    const float c1 = (A + 2.f) * x1 * x1 * x1 - (A + 3.f) * x1 * x1 + 1.f;
    const float c2 = (A + 2.f) * x2 * x2 * x2 - (A + 3.f) * x2 * x2 + 1.f;
    return vec4(c0, c1, c2, 1.f - c0 - c1 - c2);
}

void main()
{
    const int x = int(gl_GlobalInvocationID.x);
    const int yz = int(gl_GlobalInvocationID.y);
    const int q = int(gl_GlobalInvocationID.z);
    if (x >= p.outw || yz >= p.outh || q >= p.outc)
        return;

    const int ih = p.h / p.d;
    const bool three = p.k == 3;
    const int n = yz * p.outw + x;
    float sx = unnormalize(grid_coord(n, 0), p.w);
    float sy = unnormalize(grid_coord(n, 1), ih);
    float v;
    if (sample_type == 3)
    {
        const float x1 = floor(sx);
        const float y1 = floor(sy);
        const vec4 cx = cubic(sx - x1);
        const vec4 cy = cubic(sy - y1);
        v = 0.f;
        for (int j = 0; j < 4; j++)
        {
            const int yi = int(pad_coord(y1 - 1.f + float(j), ih));
            float row = 0.f;
            for (int i = 0; i < 4; i++)
                row += at(q, int(pad_coord(x1 - 1.f + float(i), p.w)), yi, 0, ih) * cx[i];
            v += row * cy[j];
        }
    }
    else
    {
        sx = pad_coord(sx, p.w);
        sy = pad_coord(sy, ih);
        const float sz = three ? pad_coord(unnormalize(grid_coord(n, 2), p.d), p.d) : 0.f;
        if (sample_type == 2)
        {
            v = at(q, int(floor(sx + 0.5f)), int(floor(sy + 0.5f)), int(floor(sz + 0.5f)), ih);
        }
        else
        {
            const float x0 = floor(sx);
            const float y0 = floor(sy);
            const float z0 = floor(sz);
            const float a = sx - x0;
            const float b = sy - y0;
            const float g = sz - z0;
            const int xi = int(x0);
            const int yi = int(y0);
            const int zi = int(z0);
            const float v00 = at(q, xi, yi, zi, ih) * (1.f - a) + at(q, xi + 1, yi, zi, ih) * a;
            const float v01 = at(q, xi, yi + 1, zi, ih) * (1.f - a) + at(q, xi + 1, yi + 1, zi, ih) * a;
            v = v00 * (1.f - b) + v01 * b;
            if (three)
            {
                const float v10 = at(q, xi, yi, zi + 1, ih) * (1.f - a) + at(q, xi + 1, yi, zi + 1, ih) * a;
                const float v11 = at(q, xi, yi + 1, zi + 1, ih) * (1.f - a) + at(q, xi + 1, yi + 1, zi + 1, ih) * a;
                v = v * (1.f - g) + (v10 * (1.f - b) + v11 * b) * g;
            }
        }
    }
    buffer_st1(top_blob_data, q * p.outcstep + yz * p.outw + x, afp(v));
}
