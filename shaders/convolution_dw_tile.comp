// Depthwise convolution, pack4 buffer blobs in and out, through a shared-memory tile: a
// workgroup of 16 × 8 invocations computes a 16 × 8 tile of outputs of one channel block and
// first stages the input window they share, (16 - 1) · stride + (kernel - 1) · dilation + 1
// wide and (8 - 1) · stride + (kernel - 1) · dilation + 1 high, so that each input vec4 is
// read from memory once per tile instead of once per kernel position of every output that
// covers it (9 times for a 3 × 3 kernel at stride 1). Padding is staged as pad_value.
//
// For kernels whose reach, (kernel - 1) · dilation, is at most 4 and strides of at most 2:
// the staged window is then at most 35 × 19 vec4 (10.6 KiB).
#version 450

#include "prelude.comp"

#define IN_PACK 4
#define OUT_PACK 4
#include "convolution_head.comp"
#include "convolution_residual.comp"

#define TILE_W 16
#define TILE_H 8
layout (local_size_x = TILE_W, local_size_y = TILE_H, local_size_z = 1) in;

#define MAX_IN_W 35
#define MAX_IN_H 19
shared vec4 window_data[MAX_IN_W * MAX_IN_H];

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int gz = int(gl_WorkGroupID.z);

    const int in_w = (TILE_W - 1) * stride_w + (kernel_w - 1) * dilation_w + 1;
    const int in_h = (TILE_H - 1) * stride_h + (kernel_h - 1) * dilation_h + 1;
    const int x0 = int(gl_WorkGroupID.x) * TILE_W * stride_w - p.pad_left;
    const int y0 = int(gl_WorkGroupID.y) * TILE_H * stride_h - p.pad_top;
    const int base = gz * psc(cstep);

    // every invocation stages, also those past the output's edge: all reach the barrier
    for (int i = int(gl_LocalInvocationIndex); i < in_w * in_h; i += TILE_W * TILE_H)
    {
        const int x = x0 + i % in_w;
        const int y = y0 + i / in_w;
        const bool inside = x >= 0 && x < psc(w) && y >= 0 && y < psc(h) && gz < psc(outc);
        window_data[i] = fake_quant4(inside ? vec4(buffer_ld4(bottom_blob_data, base + y * psc(w) + x)) : vec4(p.pad_value), quant_in);
    }
    barrier();

    if (gx >= psc(outw) || gy >= psc(outh) || gz >= psc(outc))
        return;

    const int lx = int(gl_LocalInvocationID.x) * stride_w;
    const int ly = int(gl_LocalInvocationID.y) * stride_h;
    vec4 sum = bias_term == 1 ? vec4(buffer_ld4(bias_data, gz)) : vec4(0.f);
    int wi = gz * kernel_h * kernel_w;
    for (int ky = 0; ky < kernel_h; ky++)
    {
        const int row = (ly + ky * dilation_h) * in_w + lx;
        for (int kx = 0; kx < kernel_w; kx++, wi++)
        {
            sum += window_data[row + kx * dilation_w] * vec4(buffer_ld4(weight_data, wi));
        }
    }

    const int index = gz * psc(outcstep) + gy * psc(outw) + gx;
    const afpvec4 res = activation_afpvec4(afpvec4(sum + residual_at(index)), activation_type, activation_param_0, activation_param_1);
    buffer_st4(top_blob_data, index, afpvec4(fake_quant4(vec4(res), quant_out)));
}
