// The implicit GEMMs' windows without per-load arithmetic: a window's step k (input block
// k / taps, tap k % taps) reads the input at its channel's base + the window's base + the tap's
// offset, and lies inside the input where the window's bit for the tap is set. The offsets are
// a table in shared memory, the bits and the base computed once per window: the generic
// window_step (three divisions, six comparisons and the index for every load) made the
// address arithmetic as long as the tensor cores' products on an H200. Windows of more than
// MAX_TAPS taps take window_step, and so do 1×1 windows, whose step is as short without it
// (resnet50 and RRDBNet's Winograd products slower by 5-15% tabled). A shader without room for the table in its workgroup memory
// defines TAP_OFFSETS_COMPUTED: the offsets are then computed per load (two divisions by
// constants), the bits and the base still once.
#define MAX_TAPS 64
const int TAPS = kernel_w * kernel_h * kernel_d;
const bool TABLED = TAPS > 1 && TAPS <= MAX_TAPS;

// where tap t of a window reads, from where its first tap does
int tap_offset_of(int t)
{
    const int plane = kernel_w * kernel_h;
    const int kz = t / plane;
    const int ky = (t - kz * plane) / kernel_w;
    const int kx = t - kz * plane - ky * kernel_w;
    return (kz * dilation_d * slab_h() + ky * dilation_h) * psc(w) + kx * dilation_w;
}

#ifndef TAP_OFFSETS_COMPUTED
shared int tap_offset[MAX_TAPS];
#endif

// a window: where its first tap would read within a channel, and its taps inside the input
struct TabledWindow
{
    int base;
    uvec2 inside;
};

// the table of offsets, written by the first TAPS invocations (a barrier before it is read)
void fill_tap_offsets(int tid)
{
#ifndef TAP_OFFSETS_COMPUTED
    if (TABLED && tid < TAPS)
        tap_offset[tid] = tap_offset_of(tid);
#endif
}

// the window whose first tap reads the unpadded input at `o` (window_origin's)
TabledWindow tabled_window(ivec3 o)
{
    TabledWindow t;
    t.base = (o.z * slab_h() + o.y) * psc(w) + o.x;
    t.inside = uvec2(0u);
    if (!TABLED)
        return t;
    for (int kz = 0; kz < kernel_d; kz++)
    {
        const int z = o.z + kz * dilation_d;
        for (int ky = 0; ky < kernel_h; ky++)
        {
            const int y = o.y + ky * dilation_h;
            for (int kx = 0; kx < kernel_w; kx++)
            {
                const int x = o.x + kx * dilation_w;
                const int tap = (kz * kernel_h + ky) * kernel_w + kx;
                const bool inside = x >= 0 && x < psc(w) && y >= 0 && y < slab_h() && z >= 0 && z < depth;
                const uint bit = inside ? 1u << (tap & 31) : 0u;
                t.inside |= tap < 32 ? uvec2(bit, 0u) : uvec2(0u, bit);
            }
        }
    }
    return t;
}

// step k of window `t` (at `o`, for the generic path): where it reads, or -1 outside the input
int tabled_step(TabledWindow t, ivec3 o, int k)
{
    if (!TABLED)
        return window_step(o, k);
    const int ci = k / TAPS;
    const int tap = k - ci * TAPS;
    const uint bits = tap < 32 ? t.inside.x >> tap : t.inside.y >> (tap - 32);
#ifdef TAP_OFFSETS_COMPUTED
    const int offset = tap_offset_of(tap);
#else
    const int offset = tap_offset[tap];
#endif
    return (bits & 1u) != 0u ? ci * psc(cstep) + t.base + offset : -1;
}
