// binary_op for one value of a pack1 blob: every op of include/binary_op.comp, and 12 to 18
// (the remainders, logaddexp, floor divisions and Python's remainders), computed in fp32 so that
// a quotient near a whole number rounds as the CPU's does. Reads `op_type`.

afp binary_op(afp x, afp y)
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
    const float a = float(x);
    const float b = float(y);
    if (op_type == 12) return afp(a - b * trunc(a / b));
    if (op_type == 13) return afp(b - a * trunc(b / a));
    if (op_type == 14) return afp(max(a, b) + log(1.f + exp(min(a, b) - max(a, b))));
    if (op_type == 15) return afp(floor(a / b));
    if (op_type == 16) return afp(floor(b / a));
    if (op_type == 17) return afp(a - b * roundEven(a / b));
    return afp(b - a * roundEven(b / a));
}
