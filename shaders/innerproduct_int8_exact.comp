// InnerProduct's int8 inference where the device has no int8 dot products: each four-lane
// product summed from sign-extended bytes, exactly the same sums (see innerproduct_int8_body).
#version 450

#define INT8_DOT 0
#include "innerproduct_int8_body.comp"
