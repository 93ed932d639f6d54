// The packed box copies' body (copy_box_pack4/8): each invocation copies one pack of the box
// that starts at (off_x, off_y, off_z, off_c) of the input, in the GPU mat axes (w, h, d, c;
// c counts packs, rows of a 4-D mat are d slabs of h). `COPY(dst, src)` copies one pack.
// Crop and Slice of packed blobs: one pack per invocation, where the pack1 gather over the
// scalar views moved one value per invocation with its general index map.

layout (push_constant) uniform parameter
{
    int w, h, d, c, cstep, outw, outh, outd, outc, outcstep, off_x, off_y, off_z, off_c;
} p;

void main()
{
    GLOBAL_XYZ;

    if (gx >= p.outw || gy >= p.outh * p.outd || gz >= p.outc)
        return;

    const int y = gy % p.outh + p.off_y;
    const int z = gy / p.outh + p.off_z;
    const int si = (gz + p.off_c) * p.cstep + (z * p.h + y) * p.w + gx + p.off_x;
    COPY(gz * p.outcstep + gy * p.outw + gx, si);
}
