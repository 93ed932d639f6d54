// Flat storage: 16 bytes per invocation whatever the packing (four fp32 values, or eight
// 16-bit ones read as uvec4: fp16 storage and fp16 packed lay halves out alike), over the
// whole buffer, padding included. Mats of one layout only; wide accesses are what reach full
// memory bandwidth (8-byte f16vec4 accesses reach about a third of it on an H100).
#if NCNN_fp16_storage || NCNN_fp16_packed
#define flat_t uvec4
// The eight values of a flat element as two afpvec4, and back. Through fp32 even with fp16
// arithmetic: naga 30 rejects the uint <-> f16vec2 bitcasts (unpackFloat2x16), and on an H100
// the conversions measured no slower.
void flat_unpack(uvec4 u, out afpvec4 lo, out afpvec4 hi)
{
    lo = afpvec4(vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y)));
    hi = afpvec4(vec4(unpackHalf2x16(u.z), unpackHalf2x16(u.w)));
}
uvec4 flat_pack(afpvec4 lo, afpvec4 hi)
{
    const vec4 l = vec4(lo);
    const vec4 h = vec4(hi);
    return uvec4(packHalf2x16(l.xy), packHalf2x16(l.zw), packHalf2x16(h.xy), packHalf2x16(h.zw));
}
#else
#define flat_t vec4
#endif

layout (local_size_x = 256) in;

layout (push_constant) uniform parameter
{
    // flat elements in each buffer
    int n;
    // invocations per row of the dispatch grid (x is limited, rows run along y)
    int stride;
#ifdef FLAT_PUSH_EXTRA
    // the shader's own parameters, after the two above
    FLAT_PUSH_EXTRA
#endif
} p;

int flat_index()
{
    return int(gl_GlobalInvocationID.y) * p.stride + int(gl_GlobalInvocationID.x);
}
