//! Each pipeline's SPIR-V as the driver receives it, written to a folder
//! ([`ContextOptions::spirv_dump`](crate::ContextOptions::spirv_dump)): wgpu creates pipelines
//! without asking the driver for its statistics (registers, workgroup memory, spills:
//! VK_KHR_pipeline_executable_properties), so `bench/pipeline_stats.rs` compiles these files
//! again with them asked for. What a shader's tile costs in registers decides how many of its
//! workgroups a multiprocessor holds, and no timing shows that directly.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use super::health;
use super::specialize::Specialization;
use crate::error::{DeviceError, Result};

const SETTING: &str = "FPSHADER_DUMP_SPIRV";

/// The folder asked for (else `FPSHADER_DUMP_SPIRV`), created if missing, or the error naming it.
pub(crate) fn folder(asked: Option<&Path>) -> Result<Option<PathBuf>> {
    let dir = match asked {
        Some(d) => Some(d.to_path_buf()),
        None => health::env_setting(SETTING, "a folder", |s| Some(PathBuf::from(s)))?,
    };
    if let Some(d) = &dir {
        std::fs::create_dir_all(d).map_err(|e| DeviceError::Config {
            setting: SETTING,
            value: format!("{} ({e})", d.display()),
            expected: "a folder fpshader can create and write",
        })?;
    }
    Ok(dir)
}

/// Writes `words` as `<shader>-<variant>-<hash of the words>.spv` in `dir`, and beside it a
/// `.txt` of the workgroup size and the specialization (the words carry it too: passthrough
/// sets the constants' defaults, naga's path folds them), so that a pipeline's statistics
/// can be matched to its layer's shape.
pub(crate) fn write(
    dir: &Path,
    shader: &str,
    variant: &str,
    words: &[u32],
    spec: &Specialization,
) -> std::io::Result<()> {
    let mut hash = std::collections::hash_map::DefaultHasher::new();
    words.hash(&mut hash);
    // a name is the file's alone (a `shader!` module's may hold a path's separators), and
    // its dots stay: the extensions are appended, not set
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| match c.is_ascii_alphanumeric() || "-_.".contains(c) {
                true => c,
                false => '_',
            })
            .collect()
    };
    let stem = format!("{}-{}-{:016x}", safe(shader), safe(variant), hash.finish());
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(dir.join(format!("{stem}.spv")), bytes)?;
    let mut text = match spec.local_size {
        Some([x, y, z]) => format!("local_size {x} {y} {z}\n"),
        None => String::new(),
    };
    for (id, value) in &spec.values {
        text += &format!("constant {id} = {value:?}\n");
    }
    std::fs::write(dir.join(format!("{stem}.txt")), text)
}

#[cfg(test)]
mod tests {
    /// A name with a path's separators and dots lands in the folder itself, whole.
    #[test]
    fn names_stay_in_the_folder_whole() {
        let dir = std::env::temp_dir().join(format!("fpshader-dump-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let spec = super::Specialization {
            values: vec![],
            local_size: Some([64, 1, 1]),
        };
        super::write(&dir, "probes/peak.v2", "fp32", &[0x0723_0203, 0], &spec).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names[0].starts_with("probes_peak.v2-fp32-"), "{names:?}");
        assert!(
            names[0].ends_with(".spv") && names[1].ends_with(".txt"),
            "{names:?}"
        );
    }
}
