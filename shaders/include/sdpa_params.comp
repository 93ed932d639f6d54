// The push constants of the attention shaders (sdpa, sdpa_cm, sdpa_cm2, sdpa_combine): head
// widths and counts, the blobs' channel and row steps, the scale, and where head 0 starts in
// each.

layout (push_constant) uniform parameter
{
    int embed, src, dst, dv, per_group, q_cstep, k_cstep, v_cstep, mask_cstep, mask_channels;
    int out_cstep;
    float scale;
    int q_rs, k_rs, v_rs, out_rs;
    // where head 0 of Q, K and V starts (their parts of one row of stacked projections)
    int q_offset, k_offset, v_offset;
} p;

// the query rows padded to the tensor-core workgroups' 64: the rows of each part of a split
// head (sdpa_cm2 writes them, sdpa_combine reads them)
#define PART_ROWS ((p.src + 63) / 64 * 64)
