// ncnn's float2int8 (x rounded half away from zero, clamped to ±127), for every shader that
// quantizes: convolution_head's, innerproduct_int8_body
vec4 int8_levels(vec4 x)
{
    return clamp(trunc(x + sign(x) * 0.5f), -127.f, 127.f);
}
