// Interp's body on 3-D buffer blobs of one packing (PACK: 1, or 4 with the channels in blocks,
// each lane resized as a channel): nearest, bilinear or bicubic resizing of every channel, the
// source coordinates computed per output the way ncnn's coefficient tables are (half-pixel
// centres, or corners aligned; bilinear and bicubic taps moved inside the image at its
// borders). Reads are clamped into the image, where ncnn would read outside a 1-wide one.
// 1 nearest, 2 bilinear, 3 bicubic
layout (constant_id = 0) const int resize_type = 1;
layout (constant_id = 1) const int align_corner = 0;

// an element's value in fp32 (fpN): a lane per channel of its block
#include "packed_names.comp"

layout (binding = 0) readonly buffer bottom_blob { sfpN bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpN top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int w, h, c, cstep, outw, outh, outc, outcstep;
    // nearest: source per output step; others: the coefficient tables' scale
    float scale_x, scale_y;
} p;

fpN load(int q, int y, int x)
{
    return fpN(buffer_ldN(bottom_blob_data, q * p.cstep + clamp(y, 0, p.h - 1) * p.w + clamp(x, 0, p.w - 1)));
}

// the bilinear tap: first source index and the weight of the second
void linear_tap(int d, float scale, int size, out int s, out float f)
{
    float fx = align_corner == 1 ? float(d) * scale : (float(d) + 0.5f) * scale - 0.5f;
    s = int(floor(fx));
    f = fx - float(s);
    if (s < 0)
    {
        s = 0;
        f = 0.f;
    }
    if (s >= size - 1)
    {
        s = size - 2;
        f = 1.f;
    }
}

// the bicubic taps: the index of the second of four sources and their weights
void cubic_tap(int d, float scale, int size, out int s, out vec4 c)
{
    float fx = align_corner == 1 ? float(d) * scale : (float(d) + 0.5f) * scale - 0.5f;
    s = int(floor(fx));
    fx -= float(s);
    const float A = -0.75f;
    const float fx0 = fx + 1.f;
    const float fx1 = fx;
    const float fx2 = 1.f - fx;
    c.x = A * fx0 * fx0 * fx0 - 5.f * A * fx0 * fx0 + 8.f * A * fx0 - 4.f * A;
    c.y = (A + 2.f) * fx1 * fx1 * fx1 - (A + 3.f) * fx1 * fx1 + 1.f;
    c.z = (A + 2.f) * fx2 * fx2 * fx2 - (A + 3.f) * fx2 * fx2 + 1.f;
    c.w = 1.f - c.x - c.y - c.z;
    if (s <= -1)
    {
        s = 1;
        c = vec4(c.x + c.y + c.z, c.w, 0.f, 0.f);
    }
    if (s == 0)
    {
        s = 1;
        c = vec4(c.x + c.y, c.z, c.w, 0.f);
    }
    if (s == size - 2)
    {
        s = size - 3;
        c = vec4(0.f, c.x, c.y, c.z + c.w);
    }
    if (s >= size - 1)
    {
        s = size - 3;
        c = vec4(0.f, 0.f, c.x, 1.f - c.x);
    }
}

void main()
{
    GLOBAL_XYZ;

    if (gx >= p.outw || gy >= p.outh || gz >= p.outc)
        return;

    fpN v;
    if (resize_type == 1)
    {
        const int sx = min(int(float(gx) * p.scale_x), p.w - 1);
        const int sy = min(int(float(gy) * p.scale_y), p.h - 1);
        v = load(gz, sy, sx);
    }
    else if (resize_type == 2)
    {
        int sx;
        int sy;
        float fx;
        float fy;
        linear_tap(gx, p.scale_x, p.w, sx, fx);
        linear_tap(gy, p.scale_y, p.h, sy, fy);
        const fpN r0 = load(gz, sy, sx) * (1.f - fx) + load(gz, sy, sx + 1) * fx;
        const fpN r1 = load(gz, sy + 1, sx) * (1.f - fx) + load(gz, sy + 1, sx + 1) * fx;
        v = r0 * (1.f - fy) + r1 * fy;
    }
    else
    {
        int sx;
        int sy;
        vec4 cx;
        vec4 cy;
        cubic_tap(gx, p.scale_x, p.w, sx, cx);
        cubic_tap(gy, p.scale_y, p.h, sy, cy);
        v = fpN(0.f);
        for (int j = 0; j < 4; j++)
        {
            const int y = sy - 1 + j;
            const fpN row = load(gz, y, sx - 1) * cx.x + load(gz, y, sx) * cx.y
                + load(gz, y, sx + 1) * cx.z + load(gz, y, sx + 2) * cx.w;
            v += row * cy[j];
        }
    }

    buffer_stN(top_blob_data, gz * p.outcstep + gy * p.outw + gx, afpN(v));
}
