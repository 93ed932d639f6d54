// convolution_pack4.comp's dense window sum over a pack4 input.

// the bias and window products of output block oz at (ox, oy), in fp32: per input block of its
// group and kernel position, four weight rows (one per output lane)
vec4 dense_sum4(int ox, int oy, int oz)
{
    vec4 sum = bias_term == 1 ? vec4(buffer_ld4(bias_data, oz)) : vec4(0.f);
    const int x0 = ox * stride_w - p.pad_left;
    const int y0 = oy * stride_h - p.pad_top;
    // the output block's group: its input blocks, and its weights over them
    const int cin4_g = psc(c) / group;
    const int g = oz / (psc(outc) / group);
    int wi = oz * cin4_g * kernel_h * kernel_w * 4;
    for (int ci = g * cin4_g; ci < (g + 1) * cin4_g; ci++)
    {
        const int base = ci * psc(cstep);
        for (int ky = 0; ky < kernel_h; ky++)
        {
            const int y = y0 + ky * dilation_h;
            for (int kx = 0; kx < kernel_w; kx++, wi += 4)
            {
                const int x = x0 + kx * dilation_w;
                const bool inside = x >= 0 && x < psc(w) && y >= 0 && y < psc(h);
                const vec4 v = fake_quant4(inside ? vec4(buffer_ld4(bottom_blob_data, base + y * psc(w) + x)) : vec4(p.pad_value), quant_in);
                sum.x += dot(v, vec4(buffer_ld4(weight_data, wi)));
                sum.y += dot(v, vec4(buffer_ld4(weight_data, wi + 1)));
                sum.z += dot(v, vec4(buffer_ld4(weight_data, wi + 2)));
                sum.w += dot(v, vec4(buffer_ld4(weight_data, wi + 3)));
            }
        }
    }
    return sum;
}
