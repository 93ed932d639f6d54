//! Reflection against hand-written shaders at several SPIR-V versions, and robustness against
//! malformed input.

mod common;

use fpshader_build::meta::{Access, DescriptorKind, Features, ImageDim, LocalSize, Scalar};
use fpshader_build::reflect::{ReflectError, reflect, reflect_bytes};
use fpshader_build::{Compiler, OptionSet, Settings, TargetEnv, words_as_bytes};

/// Plain GLSL (no extension): binding gaps, a uniform buffer, images, a spec-constant-sized array,
/// fp16 push constants.
const HAND_WRITTEN: &str = r#"#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

layout (local_size_x = 8, local_size_y = 4) in;

layout (constant_id = 0) const int count = 4;
layout (constant_id = 3) const float gain = 2.5;
layout (constant_id = 7) const bool enabled = true;

layout (set = 0, binding = 0) readonly buffer In { float in_data[]; };
layout (set = 0, binding = 2) writeonly buffer Out { float out_data[]; };
layout (set = 0, binding = 5) buffer InOut { vec4 io_data[]; };
layout (set = 1, binding = 1) uniform Params { vec4 bias; mat4 transform; } params;
layout (set = 0, binding = 6) uniform sampler2D tex;
layout (set = 0, binding = 7, rgba16f) writeonly uniform image3D img;
layout (set = 0, binding = 8, r32f) readonly uniform image1D img_ro;
layout (set = 0, binding = 9) uniform sampler3D textures[3];

layout (push_constant) uniform Push
{
    float16_t scale;
    float16_t offset;
    int n;
    f16vec4 weights;
    mat2 rot;
} pc;

shared float tile[count];

void main()
{
    uint i = gl_GlobalInvocationID.x;
    tile[i % count] = in_data[i];
    barrier();
    float v = tile[(i + 1) % count] * gain * float(pc.scale) + float(pc.offset) + float(pc.weights.x);
    v += texelFetch(tex, ivec2(i, 0), 0).r + texelFetch(textures[1], ivec3(0), 0).r + imageLoad(img_ro, 0).r;
    v += (params.transform * params.bias).x + pc.rot[0][0];
    if (enabled) out_data[i] = v + float(pc.n);
    io_data[i] += vec4(v);
    imageStore(img, ivec3(i, 0, 0), vec4(v));
}
"#;

fn compile(env: TargetEnv, text: &str) -> Vec<u32> {
    Compiler::new(Settings::default().target_env(env))
        .unwrap()
        .compile_str("hand.comp", text, OptionSet::FP32)
        .unwrap()
}

#[test]
fn hand_written_shader_at_every_spirv_version() {
    for env in TargetEnv::ALL {
        let words = compile(env, HAND_WRITTEN);
        let r = reflect(&words).unwrap_or_else(|e| panic!("{env}: {e}"));
        assert_eq!(r.spirv_version, env.spirv_version(), "{env}");
        assert_eq!(r.entry_point, "main");

        let b: Vec<(u32, u32, DescriptorKind, Access, u32)> = r
            .bindings
            .iter()
            .map(|b| (b.set, b.binding, b.kind, b.access, b.count))
            .collect();
        use Access::*;
        use DescriptorKind::*;
        assert_eq!(
            b,
            [
                (0, 0, StorageBuffer, ReadOnly, 1),
                (0, 2, StorageBuffer, WriteOnly, 1),
                (0, 5, StorageBuffer, ReadWrite, 1),
                (0, 6, CombinedImageSampler, ReadOnly, 1),
                (0, 7, StorageImage, WriteOnly, 1),
                (0, 8, StorageImage, ReadOnly, 1),
                (0, 9, CombinedImageSampler, ReadOnly, 3),
                (1, 1, UniformBuffer, ReadOnly, 1),
            ],
            "{env}"
        );
        let img = &r.bindings[4];
        assert_eq!(img.image_dim, Some(ImageDim::D3));
        assert_eq!(img.image_format.as_deref(), Some("Rgba16f"));
        assert_eq!(r.bindings[3].image_dim, Some(ImageDim::D2));
        assert_eq!(r.bindings[5].image_dim, Some(ImageDim::D1));
        assert_eq!(r.bindings[0].name, "In");

        match r.local_size {
            LocalSize::Literal { size, word_offset } => {
                assert_eq!(size, [8, 4, 1]);
                assert_eq!(words[word_offset as usize], 8);
                assert_eq!(words[word_offset as usize + 1], 4);
            }
            // glslang also emits a WorkgroupSize built-in when a size is declared
            LocalSize::BuiltIn { size, spec_ids } => {
                assert_eq!(size, [8, 4, 1]);
                assert_eq!(spec_ids, [None; 3]);
            }
            ref other => panic!("{env}: {other:?}"),
        }

        let spec: Vec<(u32, &str, Scalar, u64)> = r
            .spec_constants
            .iter()
            .map(|s| (s.id, s.name.as_ref(), s.ty, s.default))
            .collect();
        assert_eq!(
            spec,
            [
                (0, "count", Scalar::Int(32), 4),
                (3, "gain", Scalar::Float(32), u64::from(2.5f32.to_bits())),
                (7, "enabled", Scalar::Bool, 1),
            ],
            "{env}"
        );
        // word offsets point at the defaults (bool: at the OpSpecConstantTrue instruction)
        assert_eq!(words[r.spec_constants[0].word_offset as usize], 4);
        assert_eq!(
            words[r.spec_constants[1].word_offset as usize],
            2.5f32.to_bits()
        );
        assert_eq!(words[r.spec_constants[2].word_offset as usize] & 0xffff, 48);

        let pc = r.push_constants.as_ref().unwrap();
        let members: Vec<(&str, u32, u32, Scalar, u8, u8)> = pc
            .members
            .iter()
            .map(|m| {
                (
                    m.name.as_ref(),
                    m.offset,
                    m.size,
                    m.ty.scalar,
                    m.ty.components,
                    m.ty.columns,
                )
            })
            .collect();
        assert_eq!(
            members,
            [
                ("scale", 0, 2, Scalar::Float(16), 1, 1),
                ("offset", 2, 2, Scalar::Float(16), 1, 1),
                ("n", 4, 4, Scalar::Int(32), 1, 1),
                ("weights", 8, 8, Scalar::Float(16), 4, 1),
                ("rot", 16, 16, Scalar::Float(32), 2, 2), // std430: two vec2 columns
            ],
            "{env}"
        );
        assert_eq!(pc.size, 32);
        assert!(
            r.features.contains(Features::PUSH_CONSTANT_16BIT),
            "{env}: {}",
            r.features
        );
        // fp16 values are only converted, never computed with: no Float16 capability
        assert!(!r.features.contains(Features::FLOAT16), "{env}");
    }
}

#[test]
fn spec_constant_sized_local_size_by_id() {
    let text = "#version 450\nlayout (local_size_x_id = 3, local_size_y = 2) in;\nlayout (constant_id = 3) const int lx = 16;\nvoid main() {}\n";
    for env in [TargetEnv::Vulkan1_1, TargetEnv::Vulkan1_3] {
        let r = reflect(&compile(env, text)).unwrap();
        match r.local_size {
            LocalSize::BuiltIn { size, spec_ids } | LocalSize::Id { size, spec_ids } => {
                assert_eq!(size[1..], [2, 1], "{env}");
                assert_eq!(spec_ids, [Some(3), None, None], "{env}");
            }
            other => panic!("{env}: {other:?}"),
        }
    }
}

#[test]
fn module_without_local_size_and_bytes_of_both_orders() {
    // assembled by hand: a GLCompute entry point with no LocalSize execution mode
    let asm = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpName %main "main"
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %main = OpFunction %void None %fn
      %entry = OpLabel
               OpReturn
               OpFunctionEnd
"#;
    let compiler = shaderc::Compiler::new().unwrap();
    let words = compiler.assemble(asm, None).unwrap().as_binary().to_vec();
    let r = reflect(&words).unwrap();
    assert_eq!(r.local_size, LocalSize::Absent);
    assert!(r.bindings.is_empty() && r.push_constants.is_none());

    let le = words_as_bytes(&words);
    assert_eq!(reflect_bytes(&le).unwrap(), r);
    let be: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
    assert_eq!(reflect_bytes(&be).unwrap(), r);
}

#[test]
fn ncnn_style_shader_reflects_psc_and_names() {
    let compiler = common::compiler();
    let words = compiler
        .compile_file(
            common::builtin_dir().join("binaryop.comp"),
            OptionSet::parse("fp16s,image").unwrap(),
        )
        .unwrap()
        .words;
    let r = reflect(&words).unwrap();
    // op_type, the twelve shape constants, the fused activation's type and two parameters
    assert_eq!(r.spec_constants.len(), 16);
    assert_eq!(r.spec_constants[0].name, "op_type");
    let activation = r.spec_constants.iter().find(|c| c.id == 30);
    assert_eq!(activation.map(|c| c.name.as_ref()), Some("activation_type"));
    assert_eq!(r.push_constants.as_ref().unwrap().size, 48);
    assert_eq!(r.bindings[2].kind, DescriptorKind::StorageImage);
    // pack1 output: imfmtc1 is r16f with fp16 storage
    assert_eq!(r.bindings[2].image_format.as_deref(), Some("R16f"));
}

#[test]
fn malformed_input_is_an_error() {
    assert!(matches!(reflect(&[]), Err(ReflectError::NotSpirv { .. })));
    assert!(matches!(
        reflect(&[1, 2, 3, 4, 5]),
        Err(ReflectError::BadMagic(1))
    ));
    assert!(matches!(
        reflect_bytes(&[1, 2, 3]),
        Err(ReflectError::NotSpirv { .. })
    ));
    let words = compile(TargetEnv::Vulkan1_1, HAND_WRITTEN);
    let mut zero = words.clone();
    zero[5] = 0; // word count 0
    assert!(matches!(
        reflect(&zero),
        Err(ReflectError::Malformed { word: 5, .. })
    ));
    // word 5 starts the two-word OpCapability: cut it in half
    assert_eq!(words[5] >> 16, 2);
    assert!(matches!(
        reflect(&words[..6]),
        Err(ReflectError::Malformed { word: 5, .. })
    ));
    // no entry point: header only
    assert!(matches!(
        reflect(&words[..5]),
        Err(ReflectError::NoComputeEntryPoint)
    ));
}

/// Every truncation and many random corruptions of real modules: reflection returns, never panics.
#[test]
fn corrupted_modules_never_panic() {
    let mut modules = vec![
        compile(TargetEnv::Vulkan1_0, HAND_WRITTEN),
        compile(TargetEnv::Vulkan1_3, HAND_WRITTEN),
    ];
    modules.push(
        common::compiler()
            .compile_file(
                common::shader_dir().join("every_function.comp"),
                OptionSet::parse("fp16s,fp16a,lmem").unwrap(),
            )
            .unwrap()
            .words,
    );
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut checked = 0;
    for words in &modules {
        for len in 0..words.len() {
            let _ = reflect(&words[..len]);
            checked += 1;
        }
        for _ in 0..3000 {
            let mut m = words.clone();
            for _ in 0..1 + next() % 4 {
                let at = (next() % m.len() as u64) as usize;
                m[at] = match next() % 4 {
                    0 => next() as u32,
                    1 => m[at] ^ (1 << (next() % 32)),
                    2 => (m[at] & 0xffff) | ((next() as u32 % 8) << 16),
                    _ => u32::MAX,
                };
            }
            let _ = reflect(&m);
            let _ = reflect_bytes(&words_as_bytes(&m));
            checked += 1;
        }
    }
    assert!(checked > 9000);
}

/// Workgroup memory is the sum of the `shared` variables' sizes, a spec-constant-sized array at
/// its length's default.
#[test]
fn workgroup_memory_sums_the_shared_variables() {
    let words = compile(
        TargetEnv::Vulkan1_1,
        "#version 450\nlayout(local_size_x = 16) in;\nlayout(binding = 0) buffer B { float b[]; };\n\
         shared vec4 tile[64];\nshared float sums[10];\nshared uint flag;\n\
         void main() { uint i = gl_LocalInvocationID.x; tile[i] = vec4(b[i]); sums[i % 10u] = 1.0; flag = 1u;\n\
         barrier(); b[i] = tile[15u - i].x + sums[0] + float(flag); }\n",
    );
    assert_eq!(
        fpshader_build::reflect::workgroup_memory(&words).unwrap(),
        Some(64 * 16 + 10 * 4 + 4)
    );
    // `shared float tile[count]`, `count` 4 by default
    let spec = compile(TargetEnv::Vulkan1_1, HAND_WRITTEN);
    assert_eq!(
        fpshader_build::reflect::workgroup_memory(&spec).unwrap(),
        Some(16)
    );
}
