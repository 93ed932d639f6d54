// Fully connected layer, pack4 input to pack1 output:
//   top[o] = activation(bias[o] + sum_k dot(bottom[k], weight[o * w + k]))
// with bottom a flat blob of w vec4 elements and one row of w vec4 weights per output.
// The local-memory buffer variant stages the input in shared memory in tiles of 64 elements, one tile
// per workgroup of 64 invocations (images already go through the texture cache).
#version 450

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif

#include "vulkan_activation.comp"

layout (constant_id = 0) const int bias_term = 0;
layout (constant_id = 1) const int activation_type = 0;
layout (constant_id = 2) const float activation_param_0 = 0;
layout (constant_id = 3) const float activation_param_1 = 0;

#define shape_constant_id_offset 4
layout (constant_id = shape_constant_id_offset + 0) const int w = 0;
layout (constant_id = shape_constant_id_offset + 1) const int outw = 0;

#if NCNN_image_shader
layout (binding = 0) uniform unfp sampler1D bottom_blob;
layout (binding = 1, imfmtc1) writeonly uniform unfp image1D top_blob;
layout (binding = 2) uniform unfp sampler2D weight_blob;
layout (binding = 3) uniform unfp sampler1D bias_blob;
#else
layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
layout (binding = 2) readonly buffer weight_blob { sfpvec4 weight_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfp bias_data[]; };
#endif

layout (push_constant) uniform parameter
{
    int w;
    int outw;
} p;

#define USE_LMEM (NCNN_shader_local_memory && !NCNN_image_shader)

#if USE_LMEM
#define TILE 64
layout (local_size_x = TILE) in;
shared lfpvec4 tmp_v[TILE];
#endif

afpvec4 load_bottom(int k)
{
#if NCNN_image_shader
    return image1d_ld4(bottom_blob, k);
#else
    return buffer_ld4(bottom_blob_data, k);
#endif
}

afpvec4 load_weight(int o, int k)
{
#if NCNN_image_shader
    return image2d_ld4(weight_blob, ivec2(k, o));
#else
    return buffer_ld4(weight_data, o * psc(w) + k);
#endif
}

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);

    afp sum = afp(0.f);

#if USE_LMEM
    // every invocation of the workgroup takes part in the barriers, even past outw
    const int lx = int(gl_LocalInvocationID.x);
    for (int k0 = 0; k0 < psc(w); k0 += TILE)
    {
        if (k0 + lx < psc(w))
        {
            tmp_v[lx] = sfp2lfpvec4(bottom_blob_data[k0 + lx]);
        }
        barrier();

        const int kend = min(TILE, psc(w) - k0);
        if (gx < psc(outw))
        {
            for (int k = 0; k < kend; k++)
            {
                sum += dot(lfp2afpvec4(tmp_v[k]), load_weight(gx, k0 + k));
            }
        }
        barrier();
    }
#else
    if (gx < psc(outw))
    {
        for (int k = 0; k < psc(w); k++)
        {
            sum += dot(load_bottom(k), load_weight(gx, k));
        }
    }
#endif

    if (gx >= psc(outw))
        return;

    if (bias_term == 1)
    {
#if NCNN_image_shader
        sum += image1d_ld1(bias_blob, gx);
#else
        sum += buffer_ld1(bias_data, gx);
#endif
    }

    sum = activation_afp(sum, activation_type, activation_param_0, activation_param_1);

#if NCNN_image_shader
    image1d_st1(top_blob, gx, sum);
#else
    buffer_st1(top_blob_data, gx, sum);
#endif
}
