//! Every documented type and function of the extension, in every option class.

mod common;

use fpshader_build::{OptionSet, Source, TargetEnv, extension};

/// Every name in the seed's reference, plus the `sfpmat4`/`afpmat4` family real shaders use.
const DOCUMENTED: &[&str] = &[
    "sfp",
    "sfpvec2",
    "sfpvec4",
    "sfpvec8",
    "sfpmat4",
    "afp",
    "afpvec2",
    "afpvec4",
    "afpvec8",
    "afpmat4",
    "lfp",
    "lfpvec4",
    "imfmtc1",
    "imfmtc4",
    "imfmt1",
    "imfmt4",
    "unfp",
    "buffer_ld1",
    "buffer_ld2",
    "buffer_ld4",
    "buffer_ld8",
    "buffer_st1",
    "buffer_st2",
    "buffer_st4",
    "buffer_st8",
    "buffer_cp1",
    "buffer_cp2",
    "buffer_cp4",
    "buffer_cp8",
    "buffer_cp1to4",
    "buffer_cp1to8",
    "buffer_cp4to8",
    "buffer_cp4to1",
    "buffer_cp8to1",
    "buffer_cp8to4",
    "image1d_ld1",
    "image2d_ld1",
    "image3d_ld1",
    "image1d_ld4",
    "image2d_ld4",
    "image3d_ld4",
    "image1d_ld8",
    "image2d_ld8",
    "image3d_ld8",
    "image1d_st1",
    "image2d_st1",
    "image3d_st1",
    "image1d_st4",
    "image2d_st4",
    "image3d_st4",
    "image1d_st8",
    "image2d_st8",
    "image3d_st8",
    "image1d_cp1",
    "image2d_cp1",
    "image3d_cp1",
    "image1d_cp4",
    "image2d_cp4",
    "image3d_cp4",
    "image1d_cp8",
    "image2d_cp8",
    "image3d_cp8",
    "sfp2lfp",
    "sfp2lfpvec4",
    "lfp2afp",
    "lfp2afpvec4",
    "sfp2afpmat4",
    "afp2sfpmat4",
    "psc",
];

fn all_float_image_lmem() -> Vec<OptionSet> {
    OptionSet::enumerate(OptionSet::parse("fp16p,fp16s,fp16a,fp16u,image,lmem").unwrap())
}

#[test]
fn every_documented_name_is_defined_in_every_class() {
    for set in all_float_image_lmem() {
        let names = extension::defined_names(set);
        for name in DOCUMENTED {
            assert!(
                names.iter().any(|n| n == name),
                "{name} missing in {}",
                set.name()
            );
        }
    }
}

#[test]
fn option_macros_follow_the_set() {
    let names = extension::defined_names(
        OptionSet::parse("fp16p,fp16s,fp16a,image,lmem,moltenvk")
            .unwrap()
            .canonicalize()
            .unwrap(),
    );
    for m in [
        "NCNN_fp16_storage",
        "NCNN_fp16_arithmetic",
        "NCNN_image_shader",
        "NCNN_shader_local_memory",
        "NCNN_moltenvk",
    ] {
        assert!(names.iter().any(|n| n == m), "{m} not defined");
    }
    // storage wins: packed is not announced
    assert!(!names.iter().any(|n| n == "NCNN_fp16_packed"));
    let fp32 = extension::defined_names(OptionSet::FP32);
    assert!(!fp32.iter().any(|n| n.starts_with("NCNN_")));
}

#[test]
fn every_function_compiles_in_every_class_image_and_lmem() {
    let compiler = common::compiler();
    let source = Source::from_file(common::shader_dir().join("every_function.comp")).unwrap();
    let sets = all_float_image_lmem();
    assert_eq!(sets.len(), 24);
    for set in sets {
        let compiled = compiler
            .compile(&source, set)
            .unwrap_or_else(|e| panic!("{}:\n{e}", set.name()));
        common::validate(&compiled.words, TargetEnv::Vulkan1_1, &set.name());
    }
}

#[test]
fn every_function_compiles_with_int8_and_moltenvk_flags() {
    let compiler = common::compiler();
    let source = Source::from_file(common::shader_dir().join("every_function.comp")).unwrap();
    for opts in [
        "int8p",
        "int8s",
        "int8p,int8a",
        "int8s,int8a,int8u",
        "fp16s,fp16a,int8s,int8a",
        "moltenvk",
        "fp16p,moltenvk,image",
    ] {
        let set = OptionSet::parse(opts).unwrap();
        let compiled = compiler
            .compile(&source, set)
            .unwrap_or_else(|e| panic!("{opts}:\n{e}"));
        common::validate(&compiled.words, TargetEnv::Vulkan1_1, opts);
    }
}

#[test]
fn every_function_compiles_for_each_target_env() {
    for env in TargetEnv::ALL {
        let compiler =
            fpshader_build::Compiler::new(fpshader_build::Settings::default().target_env(env))
                .unwrap();
        let source = Source::from_file(common::shader_dir().join("every_function.comp")).unwrap();
        let set = OptionSet::parse("fp16s,fp16a,lmem").unwrap();
        let words = compiler.compile(&source, set).unwrap().words;
        let (major, minor) = env.spirv_version();
        assert_eq!(
            words[1],
            (u32::from(major) << 16) | (u32::from(minor) << 8),
            "{env}"
        );
        common::validate(&words, env, env.name());
    }
}
