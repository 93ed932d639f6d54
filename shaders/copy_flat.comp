// A whole buffer copied 16 bytes per invocation, as raw bits (any storage), in rows of the
// dispatch grid: `GpuMat::record_copy`'s copy. A transfer command (vkCmdCopyBuffer) took about
// 0.7 ms for 128 or 256 MiB on an H200, where this runs at the memory's bandwidth.
#version 450

layout (local_size_x = 256) in;

layout (binding = 0) readonly buffer from_blob { uvec4 from_data[]; };
layout (binding = 1) writeonly buffer to_blob { uvec4 to_data[]; };

layout (push_constant) uniform parameter
{
    // 16-byte groups in the buffer
    int n;
    // invocations per row of the dispatch grid
    int stride;
} p;

void main()
{
    const int gi = int(gl_GlobalInvocationID.y) * p.stride + int(gl_GlobalInvocationID.x);
    if (gi >= p.n)
        return;
    to_data[gi] = from_data[gi];
}
