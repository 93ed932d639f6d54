// What the cooperative-matrix shaders (gemm_cm, sdpa_cm, convolution_gemm_cm) include right after
// their `#version` line, in place of prelude.comp: its lines, and the extensions for
// VK_KHR_cooperative_matrix with fp16 operands summed in fp32 (fp16 arithmetic in every variant:
// the operands are fp16 whatever the variant computes in).
#include "prelude.comp"
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#extension GL_KHR_memory_scope_semantics: require
#extension GL_KHR_cooperative_matrix: require
#extension GL_KHR_shader_subgroup_basic: require
#extension GL_EXT_control_flow_attributes: require
