// The elementwise functions of the activation layers, chosen by the specialization constant
// op_type (folded when the pipeline is made): 0 x * param_0 (Dropout, Noop), 1 leaky ReLU
// (param_0 = slope), 2 sigmoid, 3 tanh, 4 clip (param_0, param_1), 5 swish, 6 hardswish and
// 7 hardsigmoid (alpha = param_0, beta = param_1), 8 GELU with erf, 9 GELU, tanh form,
// 10 and 11 rounding to the nearest fp16 and bf16 value (Cast; bf16 ties to even, as the
// host cast rounds), 12 ELU (alpha = param_0), 13 SELU (alpha, lambda), 14 Mish, 15 Softplus,
// 16 Erf, 17 Exp, 18 Log and 19 Power (base or power = param_0, scale = param_1,
// shift = param_2; base -1 is e), 20 int8 fake quantization (x · param_0 rounded half away
// from zero as ncnn's SIMD does, clamped to ±127, times param_1), 21 BNLL, 22 Threshold (param_0), 23 Shrink
// (bias = param_0, lambd = param_1), 24 CELU (alpha = param_0); 32 + k is UnaryOp's operation k (0 abs … 27 log1p;
// AbsVal is 32).
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

// C's powf for the bases Power meets: a negative base takes an integer exponent
vec4 pow_c(vec4 b, float e)
{
    const vec4 m = pow(abs(b), vec4(e));
    const bool odd = e == trunc(e) && mod(abs(e), 2.f) == 1.f;
    const bool whole = e == trunc(e);
    return mix(m, whole ? (odd ? -m : m) : vec4(uintBitsToFloat(0x7fc00000u)), lessThan(b, vec4(0.f)));
}

// UnaryOp's operations (ncnn's unaryop.h numbering), in fp32
vec4 unaryop_k(vec4 x, int k)
{
    if (k == 0) return abs(x);
    if (k == 1) return -x;
    if (k == 2) return floor(x);
    if (k == 3) return ceil(x);
    if (k == 4) return x * x;
    if (k == 5) return sqrt(x);
    if (k == 6) return 1.f / sqrt(x);
    if (k == 7) return exp(x);
    if (k == 8) return log(x);
    if (k == 9) return sin(x);
    if (k == 10) return cos(x);
    if (k == 11) return tan(x);
    if (k == 12) return asin(x);
    if (k == 13) return acos(x);
    if (k == 14) return atan(x);
    if (k == 15) return 1.f / x;
    if (k == 16) return tanh(x);
    if (k == 17) return log(x) * 0.43429448f;
    if (k == 18) return roundEven(x);
    if (k == 19) return trunc(x);
    if (k == 20) return sign(x);
    // expm1 and log1p: a short series near 0, where exp(x) - 1 and log(1 + x) cancel
    if (k == 21) return mix(exp(x) - 1.f, x + x * x * (0.5f + x * (1.f / 6.f + x * (1.f / 24.f))), lessThan(abs(x), vec4(1e-3f)));
    if (k == 22) return sinh(x);
    if (k == 23) return asinh(x);
    if (k == 24) return cosh(x);
    if (k == 25) return acosh(x);
    if (k == 26) return atanh(x);
    if (k == 27) return mix(log(1.f + x), x * (1.f - x * (0.5f - x * (1.f / 3.f))), lessThan(abs(x), vec4(1e-3f)));
    return x;
}

// x rounded to the nearest fp16 value (ties to even; past 65504 infinite) in exact fp32 steps:
// the NVIDIA driver folds unpackHalf2x16(packHalf2x16(x)) into x
vec4 round_fp16(vec4 x)
{
    const ivec4 e = max(ivec4((floatBitsToUint(x) >> 23) & 0xffu) - 127, ivec4(-14));
    const vec4 y = ldexp(roundEven(ldexp(x, 10 - e)), e - 10);
    return mix(y, sign(x) * uintBitsToFloat(0x7f800000u), greaterThan(abs(y), vec4(65504.f)));
}

afpvec4 unary_op(afpvec4 v)
{
    if (op_type == 0) return v * afp(param_0);
    if (op_type == 1) return mix(v, v * afp(param_0), lessThan(v, afpvec4(0.f)));
    if (op_type == 4) return clamp(v, afp(param_0), afp(param_1));
    if (op_type == 6) return v * clamp(v * afp(param_0) + afp(param_1), afp(0.f), afp(1.f));
    if (op_type == 7) return clamp(v * afp(param_0) + afp(param_1), afp(0.f), afp(1.f));
    if (op_type == 22) return mix(afpvec4(0.f), afpvec4(1.f), greaterThan(v, afpvec4(param_0)));
    if (op_type == 23) return mix(mix(afpvec4(0.f), v - afp(param_0), greaterThan(v, afpvec4(param_1))), v + afp(param_0), lessThan(v, afpvec4(-param_1)));
    if (op_type == 32 || op_type == 33) return op_type == 32 ? abs(v) : -v;
    const vec4 x = vec4(v);
    vec4 y = x;
    if (op_type == 2) y = 1.f / (1.f + exp(-x));
    if (op_type == 3) y = tanh(x);
    if (op_type == 5) y = x / (1.f + exp(-x));
    if (op_type == 8) y = 0.5f * x * (1.f + erf_approx(x * 0.70710678f));
    if (op_type == 9) y = 0.5f * x * (1.f + tanh(0.79788456f * (x + 0.044715f * x * x * x)));
    if (op_type == 10) y = round_fp16(x);
    if (op_type == 12) y = mix(x, param_0 * (exp(x) - 1.f), lessThan(x, vec4(0.f)));
    if (op_type == 13) y = mix(x * param_1, (exp(x) - 1.f) * (param_0 * param_1), lessThan(x, vec4(0.f)));
    if (op_type == 24) y = mix(x, (exp(x / param_0) - 1.f) * param_0, lessThan(x, vec4(0.f)));
    if (op_type == 14) y = x * tanh(log(exp(x) + 1.f));
    if (op_type == 15) y = log(exp(x) + 1.f);
    if (op_type == 16) y = erf_approx(x);
    if (op_type == 17) y = param_0 == -1.f ? exp(param_2 + x * param_1) : pow(vec4(param_0), param_2 + x * param_1);
    if (op_type == 18) y = param_0 == -1.f ? log(param_2 + x * param_1) : log(param_2 + x * param_1) / log(param_0);
    if (op_type == 19) y = pow_c(param_2 + x * param_1, param_0);
    if (op_type == 20)
    {
        const vec4 t = x * param_0;
        y = clamp(trunc(t + mix(vec4(0.5f), vec4(-0.5f), lessThan(t, vec4(0.f)))), -127.f, 127.f) * param_1;
    }
    if (op_type == 21) y = mix(log(1.f + exp(x)), x + log(1.f + exp(-x)), greaterThan(x, vec4(0.f)));
    if (op_type >= 32) y = unaryop_k(x, op_type - 32);
    if (op_type == 11)
    {
        const uvec4 u = floatBitsToUint(x);
        y = uintBitsToFloat((u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u);
    }
    return afpvec4(y);
}
