//! How fp16-storage elementwise shaders should touch memory: GB/s of a relu written with
//! different per-invocation access widths and layouts, next to ncnn's relu_pack4/pack8 (`examples/shaders`)
//! variants, same buffers, same run. This is the measurement behind the fp16-storage `sfpvec8`
//! load path (DEVELOPERS.md); run it on the GPU you care about.
//!
//! `cargo run --release --example fp16_access [-- VALUES [REPEATS]]` (defaults: 2^28, 50).
//! One line per measurement: `access NAME local L GBps X`.

use fpshader::meta::ShaderModule;
use fpshader::specialize::{SpecValue, Specialization};
use fpshader::{OptionSet, shader};
use fpshader_tests::example_shaders::Shader;

/// One f16vec4 per invocation (8-byte accesses).
static VEC4: &ShaderModule = shader!(
    src: "#version 450
#extension GL_EXT_shader_16bit_storage: require
layout (binding = 0) readonly buffer A { f16vec4 a[]; };
layout (binding = 1) writeonly buffer B { f16vec4 b[]; };
layout (push_constant) uniform P { uint w; } p;
void main() {
    uint i = gl_GlobalInvocationID.y * p.w + gl_GlobalInvocationID.x;
    b[i] = f16vec4(max(vec4(a[i]), vec4(0.0)));
}
"
);

/// Two adjacent f16vec4 per invocation (16 contiguous bytes, two 8-byte accesses).
static VEC4X2: &ShaderModule = shader!(
    src: "#version 450
#extension GL_EXT_shader_16bit_storage: require
layout (binding = 0) readonly buffer A { f16vec4 a[]; };
layout (binding = 1) writeonly buffer B { f16vec4 b[]; };
layout (push_constant) uniform P { uint w; } p;
void main() {
    uint i = gl_GlobalInvocationID.y * p.w + gl_GlobalInvocationID.x;
    vec4 x = vec4(a[2 * i]);
    vec4 y = vec4(a[2 * i + 1]);
    b[2 * i] = f16vec4(max(x, vec4(0.0)));
    b[2 * i + 1] = f16vec4(max(y, vec4(0.0)));
}
"
);

/// Eight fp16 values as one uvec4 (16-byte accesses), unpacked to fp32.
static UVEC4: &ShaderModule = shader!(
    src: "#version 450
layout (binding = 0) readonly buffer A { uvec4 a[]; };
layout (binding = 1) writeonly buffer B { uvec4 b[]; };
layout (push_constant) uniform P { uint w; } p;
uint relu2(uint v) { return packHalf2x16(max(unpackHalf2x16(v), vec2(0.0))); }
void main() {
    uint i = gl_GlobalInvocationID.y * p.w + gl_GlobalInvocationID.x;
    uvec4 v = a[i];
    b[i] = uvec4(relu2(v.x), relu2(v.y), relu2(v.z), relu2(v.w));
}
"
);

/// Eight fp16 values as one uvec4, reinterpreted as f16vec2s (16-byte accesses, fp16 math).
static UVEC4_F16: &ShaderModule = shader!(
    src: "#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
layout (binding = 0) readonly buffer A { uvec4 a[]; };
layout (binding = 1) writeonly buffer B { uvec4 b[]; };
layout (push_constant) uniform P { uint w; } p;
uint relu2(uint v) { return packFloat2x16(max(unpackFloat2x16(v), f16vec2(0.0))); }
void main() {
    uint i = gl_GlobalInvocationID.y * p.w + gl_GlobalInvocationID.x;
    uvec4 v = a[i];
    b[i] = uvec4(relu2(v.x), relu2(v.y), relu2(v.z), relu2(v.w));
}
"
);

/// One f16mat2x4 per invocation (fp16 arithmetic's `sfpvec8`).
static MAT2X4: &ShaderModule = shader!(
    src: "#version 450
#extension GL_EXT_shader_16bit_storage: require
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
layout (binding = 0) readonly buffer A { f16mat2x4 a[]; };
layout (binding = 1) writeonly buffer B { f16mat2x4 b[]; };
layout (push_constant) uniform P { uint w; } p;
void main() {
    uint i = gl_GlobalInvocationID.y * p.w + gl_GlobalInvocationID.x;
    f16mat2x4 v = a[i];
    v[0] = max(v[0], f16vec4(0.0));
    v[1] = max(v[1], f16vec4(0.0));
    b[i] = v;
}
"
);

/// One f16vec4[2] per invocation (16-bit storage's `sfpvec8`), element by element.
static ARRAY2: &ShaderModule = shader!(
    src: "#version 450
#extension GL_EXT_shader_16bit_storage: require
layout (binding = 0) readonly buffer A { f16vec4 a[][2]; };
layout (binding = 1) writeonly buffer B { f16vec4 b[][2]; };
layout (push_constant) uniform P { uint w; } p;
void main() {
    uint i = gl_GlobalInvocationID.y * p.w + gl_GlobalInvocationID.x;
    mat2x4 v = mat2x4(vec4(a[i][0]), vec4(a[i][1]));
    b[i][0] = f16vec4(max(v[0], vec4(0.0)));
    b[i][1] = f16vec4(max(v[1], vec4(0.0)));
}
"
);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (values, repeats, ctx) = fpshader_tests::bench_setup()?;
    let bytes = values * 2;
    let a = ctx.storage_buffer(bytes)?;
    let b = ctx.storage_buffer(bytes)?;
    let w = 65536u32;

    let fp16s = OptionSet::parse("fp16s")?;
    let fp16sa = OptionSet::parse("fp16s,fp16a")?;
    let probes: [(&str, &'static ShaderModule, OptionSet, u64, bool); 10] = [
        ("vec4", VEC4, OptionSet::FP32, 4, false),
        ("vec4x2", VEC4X2, OptionSet::FP32, 8, false),
        ("uvec4", UVEC4, OptionSet::FP32, 8, false),
        ("uvec4_f16", UVEC4_F16, OptionSet::FP32, 8, false),
        ("mat2x4", MAT2X4, OptionSet::FP32, 8, false),
        ("array2", ARRAY2, OptionSet::FP32, 8, false),
        (
            "builtin_relu_pack4_fp16s",
            Shader::ReluPack4.module(),
            fp16s,
            4,
            true,
        ),
        (
            "builtin_relu_pack4_fp16sa",
            Shader::ReluPack4.module(),
            fp16sa,
            4,
            true,
        ),
        (
            "builtin_relu_pack8_fp16s",
            Shader::ReluPack8.module(),
            fp16s,
            8,
            true,
        ),
        (
            "builtin_relu_pack8_fp16sa",
            Shader::ReluPack8.module(),
            fp16sa,
            8,
            true,
        ),
    ];
    for (name, module, options, per_invocation, builtin) in probes {
        for local in [64u32, 256, 1024] {
            let h = (values / per_invocation / u64::from(w)) as u32;
            let mut spec = Specialization {
                values: vec![],
                local_size: Some([local, 1, 1]),
            };
            let push = if builtin {
                // shapes specialized, as ncnn does when they are known
                spec.values.push((0, SpecValue::F32(0.0)));
                for (i, v) in [w, h, 1, w * h].into_iter().enumerate() {
                    spec.values.push((1 + i as u32, SpecValue::I32(v as i32)));
                }
                vec![0u32; 4]
            } else {
                vec![w]
            };
            let pipeline = match ctx.pipeline(module, options, &spec) {
                Ok(p) => p,
                Err(e) => {
                    println!("access {name} local {local} error {e}");
                    continue;
                }
            };
            let secs = fpshader_tests::seconds_per_dispatch(
                &ctx,
                &pipeline,
                &[&a, &b],
                &push,
                [w, h, 1],
                repeats,
            )?;
            println!(
                "access {name} ran {} local {local} GBps {:.1}",
                pipeline.options.name(),
                2.0 * bytes as f64 / secs / 1e9
            );
        }
    }
    Ok(())
}
