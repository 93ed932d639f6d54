// normalize_vec4.comp with its workgroup sums on subgroup arithmetic (one barrier pair per sum
// instead of one barrier per halving), where the device has subgroups.
#version 450

#extension GL_EXT_control_flow_attributes: require
#extension GL_KHR_shader_subgroup_basic: require
#extension GL_KHR_shader_subgroup_arithmetic: require

#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif

#define NORMALIZE_SUBGROUPS 1
#include "normalize_vec4_body.comp"
