// Concat along the channels of inputs that lie as the output's channels do (width, height,
// channel step, packing and storage): two inputs a and b (or one, b then empty) copied as raw
// bits, 16 bytes per invocation in rows of the dispatch grid, into the output from 16-byte
// group `at` on, b right after a. One dispatch per pair of inputs, as concat_body.comp, at
// twice the bytes per second of its value-by-value copy on an H200. With one input from group
// 0 it is `GpuMat::record_copy`'s copy of a whole buffer (a transfer command, vkCmdCopyBuffer,
// took about 0.7 ms for 128 or 256 MiB on an H200, where this runs at the memory's bandwidth).
#version 450

layout (local_size_x = 256) in;

layout (binding = 0) readonly buffer a_blob { uvec4 a_data[]; };
layout (binding = 1) readonly buffer b_blob { uvec4 b_data[]; };
layout (binding = 2) writeonly buffer top_blob { uvec4 top_data[]; };

layout (push_constant) uniform parameter
{
    // 16-byte groups of a and of b
    int na;
    int nb;
    // invocations per row of the dispatch grid
    int stride;
    // the output's group where a begins
    int at;
} p;

void main()
{
    const int gi = int(gl_GlobalInvocationID.y) * p.stride + int(gl_GlobalInvocationID.x);
    if (gi < p.na)
        top_data[p.at + gi] = a_data[gi];
    else if (gi < p.na + p.nb)
        top_data[p.at + gi] = b_data[gi - p.na];
}
