// BinaryOp's operations on afpvec4, chosen by the specialization constant op_type (folded when
// the pipeline is made): 0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min, 6 pow, 7 rsub (b - a),
// 8 rdiv (b / a), 9 rpow (b ^ a), 10 atan2(a, b), 11 atan2(b, a), 12 fmod (C's, truncating),
// 13 rfmod, 14 logaddexp, 15 floor_divide, 16 rfloor_divide, 17 remainder (IEEE, the quotient
// rounded to even), 18 rremainder. A pack1 shader defines BINARY_OP_SCALAR first: the same ops on
// afp.

#ifdef BINARY_OP_SCALAR
#define binary_op_t afp
#define binary_op_f32 float
#else
#define binary_op_t afpvec4
#define binary_op_f32 vec4
#endif

#include "vulkan_activation.comp"

// the activation after the op (vulkan_activation.comp's types: the activation layer after a
// BinaryOp, fused by the net); 0 none
layout (constant_id = 30) const int activation_type = 0;
layout (constant_id = 31) const float activation_param_0 = 0;
layout (constant_id = 32) const float activation_param_1 = 0;

binary_op_t binary_combine(binary_op_t x, binary_op_t y)
{
    if (op_type == 0) return x + y;
    if (op_type == 1) return x - y;
    if (op_type == 2) return x * y;
    if (op_type == 3) return x / y;
    if (op_type == 4) return max(x, y);
    if (op_type == 5) return min(x, y);
    if (op_type == 6) return pow(x, y);
    if (op_type == 7) return y - x;
    if (op_type == 8) return y / x;
    if (op_type == 9) return pow(y, x);
    if (op_type == 10) return atan(x, y);
    if (op_type == 11) return atan(y, x);
    // the rounding ops in fp32: a quotient near a whole number must round as the CPU's does
    const binary_op_f32 a = binary_op_f32(x);
    const binary_op_f32 b = binary_op_f32(y);
    if (op_type == 12) return binary_op_t(a - b * trunc(a / b));
    if (op_type == 13) return binary_op_t(b - a * trunc(b / a));
    if (op_type == 14) return binary_op_t(max(a, b) + log(1.f + exp(min(a, b) - max(a, b))));
    if (op_type == 15) return binary_op_t(floor(a / b));
    if (op_type == 16) return binary_op_t(floor(b / a));
    if (op_type == 17) return binary_op_t(a - b * roundEven(a / b));
    return binary_op_t(b - a * roundEven(b / a));
}

binary_op_t binary_op(binary_op_t x, binary_op_t y)
{
    const binary_op_t v = binary_combine(x, y);
    if (activation_type == 0)
        return v;
#ifdef BINARY_OP_SCALAR
    return activation_afp(v, activation_type, activation_param_0, activation_param_1);
#else
    return activation_afpvec4(v, activation_type, activation_param_0, activation_param_1);
#endif
}
