// BinaryOp's operations on afpvec4, chosen by the specialization constant op_type (folded when
// the pipeline is made): 0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min, 6 pow, 7 rsub (b - a),
// 8 rdiv (b / a), 9 rpow (b ^ a), 10 atan2(a, b), 11 atan2(b, a), 12 fmod (C's, truncating),
// 13 rfmod, 14 logaddexp, 15 floor_divide, 16 rfloor_divide, 17 remainder (IEEE, the quotient
// rounded to even), 18 rremainder.

afpvec4 binary_op(afpvec4 x, afpvec4 y)
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
    const vec4 a = vec4(x);
    const vec4 b = vec4(y);
    if (op_type == 12) return afpvec4(a - b * trunc(a / b));
    if (op_type == 13) return afpvec4(b - a * trunc(b / a));
    if (op_type == 14) return afpvec4(max(a, b) + log(1.f + exp(min(a, b) - max(a, b))));
    if (op_type == 15) return afpvec4(floor(a / b));
    if (op_type == 16) return afpvec4(floor(b / a));
    if (op_type == 17) return afpvec4(a - b * roundEven(a / b));
    return afpvec4(b - a * roundEven(b / a));
}
