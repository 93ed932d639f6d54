// The start of the implicit GEMMs' main() (convolution_gemm.comp, convolution_gemm_cm.comp):
// this workgroup's tile of positions (a grid past the workgroup limit goes on along z) and of
// output blocks (TILE_ROWS of them), its slice of the steps, a batch's bases, and the GEMM's
// sizes N (positions) and M (output blocks); a workgroup past the positions leaves.

    const int tid = int(gl_LocalInvocationID.x);
    // unsplit and unbatched, z is free: past 65535 tiles of positions (the workgroups a grid
    // dimension may have: a 2048 × 2048 output's 64-position tiles) the grid goes on along z
    const bool folds = splits == 1 && batched == 0;
    const int n_tile = int(gl_WorkGroupID.x) + (folds ? int(gl_WorkGroupID.z * gl_NumWorkGroups.x) : 0);
    const int n0 = n_tile * TILE_N;
    const int m0 = int(gl_WorkGroupID.y) * TILE_ROWS;
    const int slice = folds || batched == 1 ? 0 : int(gl_WorkGroupID.z);
    if (batched == 1)
    {
        const int b = int(gl_WorkGroupID.z);
        in_base = b * psc(c) * psc(cstep);
        out_base = b * psc(outc) * psc(outcstep);
        w_base = b * psc(c) * kernel_w * kernel_h * kernel_d * psc(outc) * 4;
    }

    const int N = psc(outw) * psc(outh);
    // a folded grid's last tiles lie past the positions: the whole workgroup leaves
    if (n0 >= N)
        return;
    const int M = psc(outc);
