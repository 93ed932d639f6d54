//! `ContextOptions::spirv_dump`: each pipeline's SPIR-V as the driver receives it, with its
//! workgroup size and specialization beside it.

use super::*;
use fpshader::DeviceError;

/// On both Vulkan paths: one `.spv` (SPIR-V's magic number first, whole words) and one `.txt`
/// per pipeline created, named for the shader and variant; the `.txt` holds the workgroup size
/// and the constants asked for; a pipeline from the cache writes nothing again.
#[test]
fn each_pipeline_is_written_once_with_its_specialization() {
    if std::env::var_os("FPSHADER_SKIP_GPU").is_some() {
        return;
    }
    for path in [ShaderPath::Passthrough, ShaderPath::Naga] {
        let dir =
            std::env::temp_dir().join(format!("fpshader-dump-{}-{path:?}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let ctx = Context::new(ContextOptions {
            backends: Some(wgpu::Backends::VULKAN),
            path: Some(path),
            allow_cpu_adapter: true,
            spirv_dump: Some(dir.clone()),
            ..Default::default()
        })
        .unwrap();
        let files = || {
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            names.sort();
            names
        };
        assert!(files().is_empty(), "{path:?}: {:?}", files());
        let spec = Specialization {
            values: vec![],
            local_size: Some([32, 1, 1]),
        };
        for _ in 0..2 {
            ctx.pipeline(RELU, OptionSet::FP32, &spec).unwrap();
        }
        let names = files();
        assert_eq!(names.len(), 2, "{path:?}: {names:?}");
        assert!(
            names[0].starts_with("relu-fp32-") && names[0].ends_with(".spv"),
            "{names:?}"
        );
        assert_eq!(names[1], names[0].replace(".spv", ".txt"));
        let spirv = std::fs::read(dir.join(&names[0])).unwrap();
        assert_eq!(spirv.len() % 4, 0);
        assert_eq!(spirv[..4], 0x0723_0203u32.to_le_bytes(), "{path:?}");
        let text = std::fs::read_to_string(dir.join(&names[1])).unwrap();
        assert!(text.starts_with("local_size 32 1 1\n"), "{path:?}: {text}");
        // another specialization is another pipeline, and another pair of files
        ctx.pipeline(RELU, OptionSet::FP32, &Specialization::default())
            .unwrap();
        assert_eq!(files().len(), 4, "{path:?}: {:?}", files());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A folder that cannot be created (its parent is a file) is a configuration error naming it,
/// when the context is made, not when its first pipeline is.
#[test]
fn a_dump_folder_that_cannot_be_made_is_a_config_error() {
    if std::env::var_os("FPSHADER_SKIP_GPU").is_some() {
        return;
    }
    let file = std::env::temp_dir().join(format!("fpshader-dump-file-{}", std::process::id()));
    std::fs::write(&file, b"not a folder").unwrap();
    let err = Context::new(ContextOptions {
        backends: Some(wgpu::Backends::VULKAN),
        allow_cpu_adapter: true,
        spirv_dump: Some(file.join("inside")),
        ..Default::default()
    })
    .err()
    .expect("a folder inside a file");
    let _ = std::fs::remove_file(&file);
    match err {
        Error::Device(DeviceError::Config { setting, value, .. }) => {
            assert_eq!(setting, "FPSHADER_DUMP_SPIRV");
            assert!(value.contains("inside"), "{value}");
        }
        other => panic!("{other}"),
    }
}
