//! The build.rs helper and the `shader!` macro, used together from a crate outside the runtime.

use fpshader::meta::{Access, DescriptorKind, LocalSize, Scalar, ShaderModule};
use fpshader::{OptionSet, shader};
use fpshader_tests::generated::{COPY, SCALE, SHADERS, Shader};

static SCALE_BY_MACRO: &ShaderModule = shader!(
    "tests/shaders/scale.comp",
    fp16p,
    fp16s,
    fp16a,
    include: ["tests/shaders/include"],
);

static INLINE: &ShaderModule = shader!(
    src: "#version 450\nlayout (binding = 0) buffer b { sfpvec4 d[]; };\nshared float tile[TILE];\nvoid main() { tile[0] = 1.0; buffer_st4(d, 0, buffer_ld4(d, 1)); }\n",
    fp16s,
    define: [("TILE", "16")],
    target_env: "vulkan1.2",
);

fn opts(s: &str) -> OptionSet {
    OptionSet::parse(s).unwrap()
}

#[test]
fn build_script_and_macro_produce_the_same_variants() {
    assert_eq!(SCALE.name, "scale");
    assert_eq!(SCALE_BY_MACRO.name, "scale");
    assert_eq!(SCALE.variants.len(), 5);
    let names: Vec<String> = SCALE.variants.iter().map(|v| v.options.name()).collect();
    assert_eq!(names, ["fp32", "fp16p", "fp16s", "fp16pa", "fp16sa"]);
    for (a, b) in SCALE.variants.iter().zip(SCALE_BY_MACRO.variants.iter()) {
        assert_eq!(a.options, b.options);
        assert_eq!(a.spirv, b.spirv, "{} differs", a.options.name());
        assert_eq!(a.reflection, b.reflection);
    }
}

#[test]
fn embedded_spirv_is_aligned_words_with_reflection() {
    for module in SHADERS {
        for v in module.variants.iter() {
            assert_eq!(
                v.spirv[0],
                0x0723_0203,
                "{} {}",
                module.name,
                v.options.name()
            );
            assert_eq!(v.spirv.as_ptr() as usize % 4, 0);
            assert_eq!(v.reflection.entry_point, "main");
            assert_eq!(v.reflection.spirv_version, (1, 3));
        }
    }
    let r = &SCALE.variant(opts("fp16s,fp16a")).unwrap().reflection;
    assert!(matches!(
        r.local_size,
        LocalSize::Literal {
            size: [1, 1, 1],
            ..
        }
    ));
    assert_eq!(r.bindings.len(), 2);
    assert_eq!(r.bindings[0].kind, DescriptorKind::StorageBuffer);
    assert_eq!(r.bindings[0].access, Access::ReadOnly);
    assert_eq!(r.bindings[1].access, Access::WriteOnly);
    let pc = r.push_constants.as_ref().unwrap();
    assert_eq!((pc.size, pc.members[0].name.as_ref()), (4, "n"));
    let names: Vec<&str> = r.spec_constants.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(names, ["scale", "n"]);
    assert_eq!(r.spec_constants[0].ty, Scalar::Float(32));
    assert_eq!(r.spec_constants[0].default, u64::from(1.0f32.to_bits()));
    assert!(r.features.contains(fpshader::meta::Features::FLOAT16));
    // fp32 needs no fp16 feature
    let r32 = &SCALE.variant(OptionSet::FP32).unwrap().reflection;
    assert_eq!(r32.features, fpshader::meta::Features::NONE);
}

#[test]
fn per_shader_options_and_registry() {
    // copy.comp was built with fp16s,fp16a only, and uses no arithmetic type
    let names: Vec<String> = COPY.variants.iter().map(|v| v.options.name()).collect();
    assert_eq!(names, ["fp32", "fp16s", "fp16sa"]);
    let s = COPY.variant(opts("fp16s")).unwrap();
    let sa = COPY.variant(opts("fp16s,fp16a")).unwrap();
    assert_eq!(
        s.spirv.as_ptr(),
        sa.spirv.as_ptr(),
        "deduplicated blobs share one static"
    );
    assert!(COPY.variant(opts("fp16p")).is_none());
    // binding gap kept: 0 and 2
    let bindings: Vec<u32> = s.reflection.bindings.iter().map(|b| b.binding).collect();
    assert_eq!(bindings, [0, 2]);

    assert_eq!(Shader::ALL.len(), SHADERS.len());
    assert_eq!(Shader::from_name("scale"), Some(Shader::Scale));
    assert_eq!(Shader::Scale.module().name, "scale");
    assert_eq!(Shader::from_index(Shader::Copy.index()), Some(Shader::Copy));
    assert!(Shader::from_name("nope").is_none());
}

#[test]
fn inline_source_with_defines_and_target_env() {
    assert_eq!(INLINE.variants.len(), 2);
    for v in INLINE.variants.iter() {
        assert_eq!(v.reflection.spirv_version, (1, 5));
    }
}

#[test]
fn runtime_exposes_builtin_shaders_by_name_and_index() {
    use fpshader::shaders::{SHADERS, Shader};
    assert!(SHADERS.len() >= 17);
    let unary = Shader::from_name("unaryop").unwrap().module();
    assert_eq!(unary.variants.len(), 24);
    assert_eq!(SHADERS[Shader::Unaryop.index()].name, "unaryop");
    // relu is the examples' shader (examples/shaders), built by this package, not the runtime
    assert!(Shader::from_name("relu").is_none());
    let relu = fpshader_tests::example_shaders::Shader::from_name("relu").unwrap();
    assert_eq!(relu.module().variants.len(), 24);
    let innerproduct = Shader::Innerproduct.module();
    let v = innerproduct.variant(opts("fp16s,fp16a,lmem")).unwrap();
    assert!(matches!(
        v.reflection.local_size,
        LocalSize::BuiltIn {
            size: [64, 1, 1],
            ..
        }
    ));
}

/// `shader!` as a `const` initializer.
const SCALE_CONST: &ShaderModule = shader!(
    "tests/shaders/scale.comp",
    fp16s,
    include: ["tests/shaders/include"],
);

/// `shader!` as the return value of a function.
fn scale_module() -> &'static ShaderModule {
    shader!("tests/shaders/scale.comp", fp16s, include: ["tests/shaders/include"])
}

/// Takes a module the way `Context::pipeline` does.
fn variant_names(module: &'static ShaderModule) -> Vec<String> {
    module.variants.iter().map(|v| v.options.name()).collect()
}

#[test]
fn shader_macro_works_in_every_expression_position() {
    // a plain `let`, as with include_bytes!
    let scale = shader!("tests/shaders/scale.comp", fp16s, include: ["tests/shaders/include"]);
    // a function argument
    let from_argument = variant_names(shader!(
        "tests/shaders/scale.comp",
        fp16s,
        include: ["tests/shaders/include"]
    ));
    for module in [scale, SCALE_CONST, scale_module()] {
        assert_eq!(module.name, "scale");
        assert_eq!(variant_names(module), ["fp32", "fp16s"]);
        assert_eq!(module.variants[1].spirv, SCALE.variants[2].spirv);
    }
    assert_eq!(from_argument, ["fp32", "fp16s"]);
    // each expansion is its own static: the same call site gives the same module every time
    assert!(std::ptr::eq(scale_module(), scale_module()));
}
