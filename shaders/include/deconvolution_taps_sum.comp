// What deconvolution_taps{,_pack4to1}.comp share: the sum of the tap products that reach one
// output element, read from the batched GEMM's products (pack4 [taps][output blocks][w · h],
// bound as m_data). The full result's coordinate (fx, fy) gathers tap (ky, kx) of input (j, i)
// where fx = j · stride + kx · dilation (and so for y), as the direct shaders do.
#include "deconvolution_source.comp"

vec4 tap_sum(int fx, int fy, int ob, int out_blocks)
{
    const int positions = psc(w) * psc(h);
    vec4 sum = vec4(0.f);
    for (int ky = 0; ky < kernel_h; ky++)
    {
        const int i = deconvolution_source(fy, ky, dilation_h, stride_h, psc(h));
        if (i < 0)
            continue;
        for (int kx = 0; kx < kernel_w; kx++)
        {
            const int j = deconvolution_source(fx, kx, dilation_w, stride_w, psc(w));
            if (j < 0)
                continue;
            const int tap = ky * kernel_w + kx;
            sum += vec4(buffer_ld4(m_data, (tap * out_blocks + ob) * positions + i * psc(w) + j));
        }
    }
    return sum;
}
