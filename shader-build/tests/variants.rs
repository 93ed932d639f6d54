//! Permutations: enumeration, deduplication, parallel compilation; the built-in shaders.

mod common;

use fpshader_build::{OptionSet, Source, TargetEnv};

const ALL_FLOAT: &str = "fp16p,fp16s,fp16a,fp16u,image,lmem";

#[test]
fn shader_without_arithmetic_types_gets_no_fp16a_blob() {
    // only copies: no afp anywhere, so fp16 arithmetic changes nothing
    let src = Source::from_str(
        "copy.comp",
        "#version 450\n\
         #if NCNN_fp16_storage\n#extension GL_EXT_shader_16bit_storage: require\n#endif\n\
         #if NCNN_fp16_arithmetic\n#extension GL_EXT_shader_explicit_arithmetic_types_float16: require\n#endif\n\
         layout (binding = 0) readonly buffer a { sfpvec4 a_data[]; };\n\
         layout (binding = 1) writeonly buffer b { sfpvec4 b_data[]; };\n\
         void main() { int i = int(gl_GlobalInvocationID.x); buffer_cp4(b_data, i, a_data, i); }\n",
    )
    .unwrap();
    let set = common::compiler()
        .compile_variants(&src, OptionSet::parse("fp16p,fp16s,fp16a").unwrap())
        .unwrap();
    let names: Vec<String> = set.variants.iter().map(|v| v.options.name()).collect();
    assert_eq!(names, ["fp32", "fp16p", "fp16s", "fp16pa", "fp16sa"]);
    // fp32, fp16p and fp16s differ in storage type; the arithmetic variants add nothing
    assert_eq!(set.blobs.len(), 3, "{:?}", set.variants);
    let blob = |n: &str| set.get(OptionSet::parse(n).unwrap()).unwrap();
    assert_eq!(blob("fp16s,fp16a").hash, blob("fp16s").hash);
    assert_eq!(blob("fp16p,fp16a").hash, blob("fp16p").hash);
    assert_ne!(blob("fp16s").hash, blob("").hash);
    // the shared blob is the one compiled without fp16 arithmetic, so it needs no Float16
    assert_eq!(
        blob("fp16s,fp16a").compiled_for,
        OptionSet::parse("fp16s").unwrap()
    );
    for b in &set.blobs {
        common::validate(&b.words, TargetEnv::Vulkan1_1, &b.compiled_for.name());
    }
}

#[test]
fn shader_using_arithmetic_types_gets_separate_blobs() {
    let src = Source::from_str(
        "scale.comp",
        "#version 450\n\
         layout (binding = 0) buffer a { sfpvec4 a_data[]; };\n\
         void main() { int i = int(gl_GlobalInvocationID.x); afpvec4 v = buffer_ld4(a_data, i); buffer_st4(a_data, i, v * afp(2)); }\n",
    )
    .unwrap();
    let set = common::compiler()
        .compile_variants(&src, OptionSet::parse("fp16s,fp16a,fp16u").unwrap())
        .unwrap();
    // fp32, fp16s, fp16sa; fp16sau only changes lfp*, which this shader does not use
    assert_eq!(set.variants.len(), 4);
    assert_eq!(set.blobs.len(), 3);
}

#[test]
fn unsupported_options_are_not_enumerated() {
    let relu = common::builtin_dir().join("../examples/shaders/relu.comp");
    let src = Source::from_file(relu).unwrap();
    let set = common::compiler()
        .compile_variants(&src, OptionSet::FP32)
        .unwrap();
    assert_eq!(set.variants.len(), 1);
    assert_eq!(set.variants[0].options, OptionSet::FP32);
    assert!(set.get(OptionSet::parse("fp16s").unwrap()).is_none());
}

#[test]
fn builtin_shaders_compile_in_all_variants_and_validate() {
    let compiler = common::compiler();
    let mut shaders: Vec<_> = std::fs::read_dir(common::builtin_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "comp"))
        .collect();
    shaders.sort();
    assert!(shaders.len() >= 15, "{shaders:?}");
    for path in shaders {
        let src = Source::from_file(&path).unwrap();
        let set = compiler
            .compile_variants(&src, OptionSet::parse(ALL_FLOAT).unwrap())
            .unwrap_or_else(|e| panic!("{}:\n{e}", path.display()));
        assert_eq!(set.variants.len(), 24);
        assert!(
            set.blobs.len() < set.variants.len(),
            "{}: no dedupe",
            path.display()
        );
        for b in &set.blobs {
            common::validate(
                &b.words,
                TargetEnv::Vulkan1_1,
                &format!("{} {}", path.display(), b.compiled_for.name()),
            );
        }
    }
}

#[test]
fn ncnn_style_shader_with_include_resolves_and_records_includes() {
    // ncnn's shape: an included helper, a shared-memory path under lmem in lfp types
    let dir = common::temp_tree(&[
        (
            "main.comp",
            "#version 450\n\
             #if NCNN_fp16_storage\n#extension GL_EXT_shader_16bit_storage: require\n#endif\n\
             #if NCNN_fp16_arithmetic\n\
             #extension GL_EXT_shader_explicit_arithmetic_types_float16: require\n#endif\n\
             #include \"twice.comp\"\n\
             layout (binding = 0) buffer blob { sfpvec4 data[]; };\n\
             layout (local_size_x = 64) in;\n\
             #if NCNN_shader_local_memory\nshared lfpvec4 tmp[64];\n#endif\n\
             void main() {\n\
                 const int i = int(gl_GlobalInvocationID.x);\n\
                 afpvec4 v = buffer_ld4(data, i);\n\
             #if NCNN_shader_local_memory\n\
                 tmp[gl_LocalInvocationID.x] = sfp2lfpvec4(data[i]);\n\
                 barrier();\n\
                 v = lfp2afpvec4(tmp[63 - gl_LocalInvocationID.x]);\n\
             #endif\n\
                 buffer_st4(data, i, twice(v));\n\
             }\n",
        ),
        ("twice.comp", "afpvec4 twice(afpvec4 v) { return v + v; }\n"),
    ]);
    let src = Source::from_file(dir.path().join("main.comp")).unwrap();
    let set = common::compiler()
        .compile_variants(&src, OptionSet::parse(ALL_FLOAT).unwrap())
        .unwrap();
    assert_eq!(set.includes.len(), 1);
    assert!(set.includes[0].ends_with("twice.comp"));
    // the local-memory buffer path differs per lfp class: fp16sa and fp16sau do not share it
    let sa = set
        .get(OptionSet::parse("fp16s,fp16a,lmem").unwrap())
        .unwrap();
    let sau = set
        .get(OptionSet::parse("fp16s,fp16a,fp16u,lmem").unwrap())
        .unwrap();
    assert_ne!(sa.hash, sau.hash);
    // without local memory, fp16u changes nothing
    let sa = set.get(OptionSet::parse("fp16s,fp16a").unwrap()).unwrap();
    let sau = set
        .get(OptionSet::parse("fp16s,fp16a,fp16u").unwrap())
        .unwrap();
    assert_eq!(sa.hash, sau.hash);
}

#[test]
fn relative_include_wins_over_include_dirs() {
    let dir = common::temp_tree(&[
        (
            "main.comp",
            "#version 450\n#include \"h.comp\"\nvoid main() { int x = H; }\n",
        ),
        ("h.comp", "#define H 1\n"),
        ("other/h.comp", "#define H nope_this_is_the_wrong_one\n"),
    ]);
    let compiler = fpshader_build::Compiler::new(
        fpshader_build::Settings::default().include_dir(dir.path().join("other")),
    )
    .unwrap();
    compiler
        .compile_file(dir.path().join("main.comp"), OptionSet::FP32)
        .unwrap();
    // and an in-memory source finds it through the include dirs only
    let err = compiler
        .compile_str(
            "mem.comp",
            "#version 450\n#include \"h.comp\"\nvoid main() { int x = H; }\n",
            OptionSet::FP32,
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("nope_this_is_the_wrong_one"),
        "{err}"
    );
}

#[test]
fn user_defines_reach_the_shader() {
    let compiler = fpshader_build::Compiler::new(
        fpshader_build::Settings::default().define("TILE", Some("8")),
    )
    .unwrap();
    compiler
        .compile_str(
            "d.comp",
            "#version 450\nshared float tile[TILE];\nvoid main() { tile[0] = 1.0; }\n",
            OptionSet::FP32,
        )
        .unwrap();
}
