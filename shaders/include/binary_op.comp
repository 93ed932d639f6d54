// BinaryOp's operations on afpvec4, chosen by the specialization constant op_type (folded when
// the pipeline is made): 0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min, 6 pow, 7 rsub (b - a),
// 8 rdiv (b / a), 9 rpow (b ^ a), 10 atan2(a, b), 11 atan2(b, a).

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
    return atan(y, x);
}
