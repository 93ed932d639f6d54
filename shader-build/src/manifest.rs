//! Writing a [`VariantSet`] to a folder: one `.spv` per unique blob and a `manifest.json`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::options::Opt;
use crate::settings::Settings;
use crate::variants::VariantSet;
use crate::words_as_bytes;

/// The `manifest.json` that `fpshaderc compile` writes next to the `.spv` files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The shader as named on the command line.
    pub shader: String,
    /// Target environment (`vulkan1.1`).
    pub target_env: String,
    /// Optimization flag (`-O`).
    pub optimization: String,
    /// Variant name (`fp16sa-image`) → its file.
    pub variants: BTreeMap<String, ManifestVariant>,
}

/// One variant in the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestVariant {
    /// File name of its SPIR-V, relative to the manifest; shared by variants that deduplicated.
    pub file: String,
    /// Its canonical option flags.
    pub options: Vec<Opt>,
    /// SHA-256 of the SPIR-V bytes.
    pub hash: String,
}

impl Manifest {
    /// Writes `set` under `dir` (created if needed) and returns the manifest it wrote.
    pub fn write(set: &VariantSet, settings: &Settings, dir: &Path) -> Result<Manifest> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let stem = Path::new(&set.name)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "shader".to_string());

        let mut files = Vec::with_capacity(set.blobs.len());
        for blob in &set.blobs {
            let file = format!("{stem}.{}.spv", blob.compiled_for.name());
            let path = dir.join(&file);
            std::fs::write(&path, words_as_bytes(&blob.words)).map_err(io(&path))?;
            files.push(file);
        }

        let variants = set
            .variants
            .iter()
            .map(|v| {
                let entry = ManifestVariant {
                    file: files[v.blob].clone(),
                    options: v.options.iter().collect(),
                    hash: set.blobs[v.blob].hash.clone(),
                };
                (v.options.name(), entry)
            })
            .collect();
        let manifest = Manifest {
            shader: set.name.clone(),
            target_env: settings.target_env.name().to_string(),
            optimization: settings.optimization.flag().to_string(),
            variants,
        };
        let json = serde_json::to_string_pretty(&manifest).map_err(|e| Error::Json {
            what: "the manifest",
            source: std::sync::Arc::new(e),
        })?;
        let path = dir.join("manifest.json");
        std::fs::write(&path, json + "\n").map_err(io(&path))?;
        Ok(manifest)
    }
}
