// The push constants of the attention shaders (sdpa.comp and sdpa_cm.comp): head widths and
// counts, the blobs' channel and row steps, the scale, and where head 0 starts in each.

layout (push_constant) uniform parameter
{
    int embed;
    int src;
    int dst;
    int dv;
    int per_group;
    int q_cstep;
    int k_cstep;
    int v_cstep;
    int mask_cstep;
    int mask_channels;
    int out_cstep;
    float scale;
    int q_rs;
    int k_rs;
    int v_rs;
    int out_rs;
    // where head 0 of Q, K and V starts (their parts of one row of stacked projections)
    int q_offset;
    int k_offset;
    int v_offset;
} p;
