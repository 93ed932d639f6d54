// The extensions fp16 storage and fp16 arithmetic need, for a shader to include right after
// its `#version` line (extension directives come before any other token).
#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif
