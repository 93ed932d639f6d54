// Four int8 levels in one int, and (where the shader defines INT8_DOT) the sum of the four
// lanes' products of two such ints: the device's int8 dot product (INT8_DOT 1, the shader
// enabling GL_EXT_integer_dot_product) or the same sum from sign-extended bytes (INT8_DOT 0).

// four levels as one int, the first in the low byte
int pack_levels(ivec4 q)
{
    return (q.x & 255) | ((q.y & 255) << 8) | ((q.z & 255) << 16) | (q.w << 24);
}

#ifdef INT8_DOT
#if INT8_DOT
#define DOT4(a, b) dotPacked4x8EXT(a, b)
#else
int DOT4(int a, int b)
{
    return bitfieldExtract(a, 0, 8) * bitfieldExtract(b, 0, 8)
        + bitfieldExtract(a, 8, 8) * bitfieldExtract(b, 8, 8)
        + bitfieldExtract(a, 16, 8) * bitfieldExtract(b, 16, 8)
        + bitfieldExtract(a, 24, 8) * bitfieldExtract(b, 24, 8);
}
#endif
#endif
