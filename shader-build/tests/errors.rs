//! Bad input gives a typed error naming the user's file and line, never a panic.

mod common;

use fpshader_build::{Compiler, Error, OptionError, OptionSet, Settings, Source};

const GOOD_HEAD: &str = "#version 450\nlayout (binding = 0) buffer b { sfpvec4 d[]; };\n";

#[test]
fn syntax_error_in_main_file_names_its_line() {
    let dir = common::temp_tree(&[(
        "bad.comp",
        // line 4 holds the error, whatever the preamble's length
        "#version 450\nlayout (binding = 0) buffer b { sfpvec4 d[]; };\nvoid main() {\n    afpvec4 v = buffer_ld4(d, 0) +* 2;\n}\n",
    )]);
    let path = dir.path().join("bad.comp");
    for opts in ["", "fp16s,fp16a", "fp16p,image,lmem"] {
        let err = common::compiler()
            .compile_file(&path, OptionSet::parse(opts).unwrap())
            .unwrap_err();
        let d = err
            .first_diagnostic()
            .unwrap_or_else(|| panic!("not a GLSL error: {err:?}"));
        assert_eq!(d.file, path.display().to_string(), "[{opts}] {err}");
        assert_eq!(d.line, Some(4), "[{opts}] {err}");
        assert!(err.to_string().contains(&format!("{}:4:", path.display())));
    }
}

#[test]
fn syntax_error_in_include_names_the_include() {
    let dir = common::temp_tree(&[
        (
            "main.comp",
            "#version 450\n#include \"inc/helper.comp\"\nvoid main() { afp x = helper(); }\n",
        ),
        (
            "inc/helper.comp",
            "// helper\nafp helper()\n{\n    return afp(1.0) +;\n}\n",
        ),
    ]);
    let err = common::compiler()
        .compile_file(
            dir.path().join("main.comp"),
            OptionSet::parse("fp16s,fp16a").unwrap(),
        )
        .unwrap_err();
    let d = err.first_diagnostic().unwrap_or_else(|| panic!("{err:?}"));
    assert!(d.file.ends_with("helper.comp"), "{err}");
    assert_eq!(d.line, Some(4), "{err}");
}

#[test]
fn error_after_an_include_keeps_main_file_lines() {
    let dir = common::temp_tree(&[
        (
            "main.comp",
            "#version 450\n#include \"helper.comp\"\n\nvoid main() { undefined_thing(); }\n",
        ),
        ("helper.comp", "float helper()\n{\n    return 1.0;\n}\n"),
    ]);
    let path = dir.path().join("main.comp");
    let err = common::compiler()
        .compile_file(&path, OptionSet::FP32)
        .unwrap_err();
    let d = err.first_diagnostic().unwrap();
    assert_eq!(
        (d.file.as_str(), d.line),
        (path.display().to_string().as_str(), Some(4)),
        "{err}"
    );
}

#[test]
fn missing_include_is_typed_with_location() {
    let dir = common::temp_tree(&[(
        "main.comp",
        "#version 450\n\n#include \"nowhere.comp\"\nvoid main() {}\n",
    )]);
    let path = dir.path().join("main.comp");
    let err = common::compiler()
        .compile_file(&path, OptionSet::FP32)
        .unwrap_err();
    match &err {
        Error::MissingInclude {
            file,
            line,
            name,
            searched,
        } => {
            assert_eq!(file, &path.display().to_string());
            assert_eq!(*line, 3);
            assert_eq!(name, "nowhere.comp");
            assert!(
                searched.iter().any(|p| p.starts_with(dir.path())),
                "{searched:?}"
            );
        }
        other => panic!("expected MissingInclude, got {other:?}"),
    }
    assert!(
        err.to_string()
            .contains(":3: error: cannot find include \"nowhere.comp\""),
        "{err}"
    );
}

#[test]
fn include_cycle_is_typed() {
    let dir = common::temp_tree(&[
        (
            "main.comp",
            "#version 450\n#include \"a.comp\"\nvoid main() {}\n",
        ),
        ("a.comp", "// a\n#include \"b.comp\"\n"),
        ("b.comp", "// b\n\n#include \"a.comp\"\n"),
    ]);
    let err = common::compiler()
        .compile_file(dir.path().join("main.comp"), OptionSet::FP32)
        .unwrap_err();
    match &err {
        Error::IncludeCycle { file, line, chain } => {
            assert!(file.ends_with("b.comp"), "{err}");
            assert_eq!(*line, 3, "{err}");
            let names: Vec<String> = chain
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect();
            assert_eq!(names, ["main.comp", "a.comp", "b.comp", "a.comp"]);
        }
        other => panic!("expected IncludeCycle, got {other:?}"),
    }
}

#[test]
fn self_include_is_a_cycle() {
    let dir = common::temp_tree(&[(
        "main.comp",
        "#version 450\n#include \"main.comp\"\nvoid main() {}\n",
    )]);
    let err = common::compiler()
        .compile_file(dir.path().join("main.comp"), OptionSet::FP32)
        .unwrap_err();
    assert!(
        matches!(err, Error::IncludeCycle { line: 2, .. }),
        "{err:?}"
    );
}

#[test]
fn missing_version_is_typed() {
    let err = common::compiler()
        .compile_str("noversion.comp", "void main() {}\n", OptionSet::FP32)
        .unwrap_err();
    assert!(
        matches!(&err, Error::MissingVersion { file } if file == "noversion.comp"),
        "{err:?}"
    );
}

#[test]
fn unknown_option_is_typed_and_lists_valid_names() {
    let err = OptionSet::parse("fp16s,fp16x").unwrap_err();
    match &err {
        OptionError::UnknownOption { name, valid } => {
            assert_eq!(name, "fp16x");
            assert!(valid.contains("fp16s") && valid.contains("moltenvk"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn invalid_combination_is_typed() {
    let source = Source::from_str("x.comp", GOOD_HEAD.to_string() + "void main() {}\n").unwrap();
    let err = common::compiler()
        .compile(&source, OptionSet::parse("fp16a,image").unwrap())
        .unwrap_err();
    assert!(
        matches!(err, Error::Options(OptionError::InvalidCombination { .. })),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("fp16a needs fp16p or fp16s"),
        "{err}"
    );
}

#[test]
fn missing_file_is_typed() {
    let err = common::compiler()
        .compile_file("/definitely/not/here.comp", OptionSet::FP32)
        .unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("/definitely/not/here.comp"));
}

#[test]
fn bad_bytes_are_typed() {
    let c = common::compiler();
    assert!(matches!(
        c.compile_bytes(
            "x.comp",
            b"#version 450\nvoid main() {}\xff\n",
            OptionSet::FP32
        ),
        Err(Error::BadSource { .. })
    ));
    assert!(matches!(
        c.compile_bytes(
            "x.comp",
            b"#version 450\nvoid main() {}\0\n",
            OptionSet::FP32
        ),
        Err(Error::BadSource { .. })
    ));
}

#[test]
fn malformed_define_is_typed() {
    let err = Compiler::new(Settings::default().define("1BAD", None)).unwrap_err();
    assert!(matches!(err, Error::Usage { .. }), "{err:?}");
    assert!("A=b".parse::<fpshader_build::Define>().is_ok());
    assert!("=b".parse::<fpshader_build::Define>().is_err());
}

#[test]
fn errors_in_variants_are_reported_not_panicked() {
    // compiles in fp32, fails only where fp16 arithmetic changes afp
    let src = Source::from_str(
        "v.comp",
        format!("{GOOD_HEAD}void main() {{\n    afp x = afp(1.0);\n    float y = x;\n#if NCNN_fp16_arithmetic\n    nope();\n#endif\n}}\n"),
    )
    .unwrap();
    let err = common::compiler()
        .compile_variants(&src, OptionSet::parse("fp16s,fp16a").unwrap())
        .unwrap_err();
    match &err {
        Error::Glsl {
            variant,
            diagnostics,
        } => {
            assert_eq!(variant, "fp16sa");
            assert_eq!(diagnostics.0[0].line, Some(7), "{err}");
        }
        other => panic!("{other:?}"),
    }
}
