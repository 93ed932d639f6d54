// The elementwise functions of the activation layers, chosen by the specialization constant
// op_type (folded when the pipeline is made): 0 x * param_0 (Dropout, Noop), 1 leaky ReLU
// (param_0 = slope), 2 sigmoid, 3 tanh, 4 clip (param_0, param_1), 5 swish, 6 hardswish and
// 7 hardsigmoid (alpha = param_0, beta = param_1), 8 GELU with erf, 9 GELU, tanh form,
// 10 and 11 rounding to the nearest fp16 and bf16 value (Cast; bf16 ties to even, as the
// host cast rounds).
// Piecewise-linear ones compute in the arithmetic class (no conversions: they are what
// bounds fp16 elementwise layers); those with exp/tanh in fp32, which fp16 overflows long
// before the values these layers see.

vec4 erf_approx(vec4 x)
{
    // Abramowitz and Stegun 7.1.26, |error| < 1.5e-7
    const vec4 s = sign(x);
    const vec4 a = abs(x);
    const vec4 t = 1.f / (1.f + 0.3275911f * a);
    const vec4 y = 1.f - (((((1.061405429f * t - 1.453152027f) * t) + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f) * t * exp(-a * a);
    return s * y;
}

afpvec4 unary_op(afpvec4 v)
{
    if (op_type == 0) return v * afp(param_0);
    if (op_type == 1) return mix(v, v * afp(param_0), lessThan(v, afpvec4(0.f)));
    if (op_type == 4) return clamp(v, afp(param_0), afp(param_1));
    if (op_type == 6) return v * clamp(v * afp(param_0) + afp(param_1), afp(0.f), afp(1.f));
    if (op_type == 7) return clamp(v * afp(param_0) + afp(param_1), afp(0.f), afp(1.f));
    const vec4 x = vec4(v);
    vec4 y = x;
    if (op_type == 2) y = 1.f / (1.f + exp(-x));
    if (op_type == 3) y = tanh(x);
    if (op_type == 5) y = x / (1.f + exp(-x));
    if (op_type == 8) y = 0.5f * x * (1.f + erf_approx(x * 0.70710678f));
    if (op_type == 9) y = 0.5f * x * (1.f + tanh(0.79788456f * (x + 0.044715f * x * x * x)));
    if (op_type == 10) y = vec4(unpackHalf2x16(packHalf2x16(x.xy)), unpackHalf2x16(packHalf2x16(x.zw)));
    if (op_type == 11)
    {
        const uvec4 u = floatBitsToUint(x);
        y = uintBitsToFloat((u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u);
    }
    return afpvec4(y);
}
