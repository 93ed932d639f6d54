// The push constants of the matrix layers' GEMMs (gemm.comp and gemm_cm.comp): shapes, row
// steps, C's broadcast and the batches' grouping, and where a batch's matrix starts.

layout (push_constant) uniform parameter
{
    int m;
    int n;
    int k;
    int a_rs;
    int b_rs;
    int c_rs;
    int out_rs;
    int a_cstep;
    int b_cstep;
    int out_cstep;
    // C's broadcast, from its shape where C is an input (-1: none)
    int c_type;
    // batches in groups of `inner` (a 4-D blob's depth within its channels): the groups
    // `*_ostep` apart
    int inner;
    int a_ostep;
    int b_ostep;
    int out_ostep;
} p;

// where batch matrix z starts, `step` apart within a group of p.inner, `ostep` between groups
int batch_at(int z, int step, int ostep)
{
    return (z / p.inner) * ostep + (z % p.inner) * step;
}
