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
