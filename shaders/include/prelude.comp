// What every shader includes right after its `#version` line: the extensions fp16 storage and
// fp16 arithmetic need (extension directives come before any other token), and the names most
// shaders start `main` with.
#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif

// `GLOBAL_XYZ;` declares gx, gy and gz: the invocation's global position as ints, which the
// elementwise shaders index their blobs with (w, h and packed channels).
#define GLOBAL_XYZ const int gx = int(gl_GlobalInvocationID.x); const int gy = int(gl_GlobalInvocationID.y); const int gz = int(gl_GlobalInvocationID.z)
