// The concat shaders' body, for one packing: `T`, `LOAD(i)`, `STORE(i, v)`. Copies one input
// (w x h x c elements, channels cstep apart) into the output at (offset_w, offset_h,
// offset_c); a layer with n inputs records n of these.

layout (push_constant) uniform parameter
{
    int w;
    int h;
    int c;
    int cstep;
    int outw;
    int outcstep;
    int offset_w;
    int offset_h;
    int offset_c;
} p;

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int gz = int(gl_GlobalInvocationID.z);

    if (gx >= p.w || gy >= p.h || gz >= p.c)
        return;

    const T v = LOAD(gz * p.cstep + gy * p.w + gx);
    STORE((gz + p.offset_c) * p.outcstep + (gy + p.offset_h) * p.outw + gx + p.offset_w, v);
}
