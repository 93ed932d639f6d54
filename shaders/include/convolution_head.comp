// What the convolution shaders share: their specialization constants and push constants, and
// for a shader that defines IN_PACK and OUT_PACK, its bindings: input, output, and weights and
// bias in the input's packing. Windows read the input at (x * stride + kx * dilation - pad_left, …);
// positions outside it read pad_value (ncnn pads with it, in the "same" modes too).

#include "vulkan_activation.comp"

layout (constant_id = 0) const int bias_term = 0;
layout (constant_id = 1) const int activation_type = 0;
layout (constant_id = 2) const float activation_param_0 = 0;
layout (constant_id = 3) const float activation_param_1 = 0;
layout (constant_id = 4) const int kernel_w = 1;
layout (constant_id = 5) const int kernel_h = 1;
layout (constant_id = 6) const int dilation_w = 1;
layout (constant_id = 7) const int dilation_h = 1;
layout (constant_id = 8) const int stride_w = 1;
layout (constant_id = 9) const int stride_h = 1;
layout (constant_id = 10) const int group = 1;
// pack4 only: 1 dense (one group), 2 depthwise
layout (constant_id = 11) const int kind = 0;
// the shapes, for psc(): 0 reads the push constant, anything else folds at pipeline time
layout (constant_id = 20) const int w = 0;
layout (constant_id = 21) const int h = 0;
layout (constant_id = 22) const int c = 0;
layout (constant_id = 23) const int cstep = 0;
layout (constant_id = 24) const int outw = 0;
layout (constant_id = 25) const int outh = 0;
layout (constant_id = 26) const int outc = 0;
layout (constant_id = 27) const int outcstep = 0;
// int8 inference on the float direct shaders (ncnn's int8 layers without an int8 GEMM): the
// input's scale, each loaded value (and the pad value) taken to its level over it, and the
// output's, each result requantized so; negative: no quantization
layout (constant_id = 28) const float quant_in = -1.f;
layout (constant_id = 29) const float quant_out = -1.f;
// 3-D windows (Convolution3D, Deconvolution3D) over 4-D blobs: the kernel, dilation and stride
// along d, the front pad, and the input's and output's depths; h and outh are then the 3-D
// views' h · d (depth slabs of h / depth rows). All 1 (pad 0) for 2-D windows, which fold away.
layout (constant_id = 30) const int kernel_d = 1;
layout (constant_id = 31) const int dilation_d = 1;
layout (constant_id = 32) const int stride_d = 1;
layout (constant_id = 33) const int pad_front = 0;
layout (constant_id = 34) const int depth = 1;
layout (constant_id = 35) const int outdepth = 1;

layout (push_constant) uniform parameter
{
    int w, h, c, cstep, outw, outh, outc, outcstep, pad_left, pad_top;
    float pad_value;
} p;

#ifdef IN_PACK
#include "packed_names.comp"

layout (binding = 0) readonly buffer bottom_blob { sfp_of(IN_PACK) bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp_of(OUT_PACK) top_blob_data[]; };
layout (binding = 2) readonly buffer weight_blob { sfp_of(IN_PACK) weight_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfp_of(IN_PACK) bias_data[]; };
#endif

#include "int8_levels.comp"

// rows per depth slab of the input and of the output
int slab_h()
{
    return depth == 1 ? psc(h) : psc(h) / depth;
}

int slab_outh()
{
    return outdepth == 1 ? psc(outh) : psc(outh) / outdepth;
}

// where output position n's window starts in the unpadded input: x, y within a slab, and the
// slab (n runs over the output's w × h · d rows)
ivec3 window_origin(int n)
{
    const int row = n / psc(outw);
    const int y = outdepth == 1 ? row : row % slab_outh();
    const int z = outdepth == 1 ? 0 : row / slab_outh();
    return ivec3((n % psc(outw)) * stride_w - p.pad_left, y * stride_h - p.pad_top, z * stride_d - pad_front);
}

// step k of the implicit GEMM (input channel k / taps, then the tap along d, h, w) of the
// window at `o`: where it reads within its channel's data, or -1 outside the input
int window_step(ivec3 o, int k)
{
    const int plane = kernel_w * kernel_h;
    const int ci = k / (plane * kernel_d);
    const int tap = k - ci * plane * kernel_d;
    const int kz = kernel_d == 1 ? 0 : tap / plane;
    const int rest = tap - kz * plane;
    const int ky = rest / kernel_w;
    const int x = o.x + (rest - ky * kernel_w) * dilation_w;
    const int y = o.y + ky * dilation_h;
    const int z = o.z + kz * dilation_d;
    const bool inside = x >= 0 && x < psc(w) && y >= 0 && y < slab_h() && z >= 0 && z < depth;
    return inside ? ci * psc(cstep) + (z * slab_h() + y) * psc(w) + x : -1;
}

// x's int8 level over `scale` (x · scale's level, then over the scale; 0 over a scale of 0, as
// the CPU), or x itself where the scale is negative
vec4 fake_quant4(vec4 x, float scale)
{
    if (scale < 0.f)
        return x;
    return int8_levels(x * scale) * (scale == 0.f ? 0.f : 1.f / scale);
}

float fake_quant1(float x, float scale)
{
    return fake_quant4(vec4(x), scale).x;
}
