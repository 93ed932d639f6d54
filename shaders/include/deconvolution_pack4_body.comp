// The body of deconvolution_pack4.comp and deconvolution_pack4to1.comp: a direct transposed
// convolution over a pack4 input, one invocation per output position and block of 4 output
// channels, gathering the inputs whose strided kernel footprint covers it. Per input block and
// kernel tap, four weight rows, one per output lane. The including file declares the bindings
// (after include/convolution_head.comp) and defines, for its output's packing:
//   BLOCK_SETUP               what the checks below need (may be empty)
//   BLOCK_PAST_OUTPUT(z)      whether output block z is past the output's channels
//   STORE_BLOCK(x, y, z, v)   writes the block's values

#include "deconvolution_source.comp"

void main()
{
    GLOBAL_XYZ;
    BLOCK_SETUP

    if (gx >= psc(outw) || gy >= psc(outh) || BLOCK_PAST_OUTPUT(gz))
        return;

    const int bx = gx + p.pad_left;
    const int by = gy + p.pad_top;
    const int taps = kernel_h * kernel_w;

    vec4 sum = bias_term == 1 ? vec4(buffer_ld4(bias_data, gz)) : vec4(0.f);
    for (int ky = 0; ky < kernel_h; ky++)
    {
        const int i = deconvolution_source(by, ky, dilation_h, stride_h, psc(h));
        if (i < 0)
            continue;
        for (int kx = 0; kx < kernel_w; kx++)
        {
            const int j = deconvolution_source(bx, kx, dilation_w, stride_w, psc(w));
            if (j < 0)
                continue;
            int wi = (gz * psc(c) * taps + ky * kernel_w + kx) * 4;
            int bi = i * psc(w) + j;
            for (int q = 0; q < psc(c); q++)
            {
                const vec4 v = vec4(buffer_ld4(bottom_blob_data, bi));
                sum.x += dot(v, vec4(buffer_ld4(weight_data, wi)));
                sum.y += dot(v, vec4(buffer_ld4(weight_data, wi + 1)));
                sum.z += dot(v, vec4(buffer_ld4(weight_data, wi + 2)));
                sum.w += dot(v, vec4(buffer_ld4(weight_data, wi + 3)));
                bi += psc(cstep);
                wi += taps * 4;
            }
        }
    }

    const afpvec4 res = activation_afpvec4(afpvec4(sum), activation_type, activation_param_0, activation_param_1);
    STORE_BLOCK(gx, gy, gz, res);
}
