// Convolution's int8 inference as an implicit GEMM on the device's int8 dot products
// (VK_KHR_shader_integer_dot_product, dotPacked4x8EXT): see convolution_gemm_int8_body.
#version 450
#extension GL_EXT_integer_dot_product : require

#define INT8_DOT 1
#include "convolution_gemm_int8_body.comp"
