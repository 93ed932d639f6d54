// InnerProduct's int8 inference on the device's int8 dot products
// (VK_KHR_shader_integer_dot_product, dotPacked4x8EXT): see innerproduct_int8_body.
#version 450
#extension GL_EXT_integer_dot_product : require

#define INT8_DOT 1
#include "innerproduct_int8_body.comp"
