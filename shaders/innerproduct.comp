// Fully connected layer, pack4 input to pack1 output:
//   top[o] = activation(bias[o] + sum_k dot(bottom[k], weight[o * w + k]))
// with bottom a flat blob of w vec4 elements and one row of w vec4 weights per output.
// One workgroup per output (along y): its 64 invocations read the row's consecutive vec4s
// together (coalesced, where one invocation per row would read 64 rows at a stride), sum in
// fp32 and reduce in shared memory. Buffers only: the layer keeps image nets on the CPU.
// (Four outputs per workgroup, each input vec4 loaded once for the four, was slower on an
// H200: alexnet's fc6 33 -> 37 us, its 1000-output fc8 14 -> 18.)
#version 450

#include "innerproduct_head.comp"

layout (binding = 2) readonly buffer weight_blob { sfpvec4 weight_data[]; };

shared float partial[LANES];

void main()
{
    const int lx = int(gl_LocalInvocationID.x);
    const int o = workgroup_output();
    // a folded grid's last rows lie past the outputs: the whole workgroup leaves
    if (o >= psc(outw))
        return;
    const int row = o * psc(w);

    // four loads in flight per invocation before any sum needs them
    vec4 acc0 = vec4(0.f);
    vec4 acc1 = vec4(0.f);
    vec4 acc2 = vec4(0.f);
    vec4 acc3 = vec4(0.f);
    int k = lx;
    for (; k + 3 * LANES < psc(w); k += 4 * LANES)
    {
        const vec4 w0 = vec4(buffer_ld4(weight_data, row + k));
        const vec4 w1 = vec4(buffer_ld4(weight_data, row + k + LANES));
        const vec4 w2 = vec4(buffer_ld4(weight_data, row + k + 2 * LANES));
        const vec4 w3 = vec4(buffer_ld4(weight_data, row + k + 3 * LANES));
        acc0 += vec4(buffer_ld4(bottom_blob_data, k)) * w0;
        acc1 += vec4(buffer_ld4(bottom_blob_data, k + LANES)) * w1;
        acc2 += vec4(buffer_ld4(bottom_blob_data, k + 2 * LANES)) * w2;
        acc3 += vec4(buffer_ld4(bottom_blob_data, k + 3 * LANES)) * w3;
    }
    for (; k < psc(w); k += LANES)
    {
        acc0 += vec4(buffer_ld4(bottom_blob_data, k)) * vec4(buffer_ld4(weight_data, row + k));
    }
    const vec4 acc = (acc0 + acc1) + (acc2 + acc3);
    partial[lx] = acc.x + acc.y + acc.z + acc.w;
    barrier();

    for (int s = LANES / 2; s > 0; s >>= 1)
    {
        if (lx < s)
            partial[lx] += partial[lx + s];
        barrier();
    }

    if (lx != 0 || o >= psc(outw))
        return;

    afp sum = afp(partial[0]);
    if (bias_term == 1)
        sum += buffer_ld1(bias_data, o);

    sum = activation_afp(sum, activation_type, activation_param_0, activation_param_1);
    buffer_st1(top_blob_data, o, sum);
}
