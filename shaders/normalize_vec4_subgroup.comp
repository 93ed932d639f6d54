// normalize_vec4.comp with its workgroup sums on subgroup arithmetic (one barrier pair per sum
// instead of one barrier per halving), where the device has subgroups.
#version 450

#extension GL_EXT_control_flow_attributes: require
#extension GL_KHR_shader_subgroup_basic: require
#extension GL_KHR_shader_subgroup_arithmetic: require

#include "prelude.comp"

#define NORMALIZE_SUBGROUPS 1
#include "normalize_vec4_body.comp"
