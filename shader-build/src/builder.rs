//! The build.rs helper: compiles a folder of shaders in all variants and writes Rust code that
//! embeds them.
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), fpshader_build::Error> {
//!     fpshader_build::Builder::new()
//!         .dir("shaders")
//!         .options(&["fp16p", "fp16s", "fp16a", "image"])
//!         .shader_options("innerproduct.comp", &["fp16s", "fp16a", "lmem"])
//!         .include_dir("shaders/include")
//!         .compile()?;
//!     Ok(())
//! }
//! // lib.rs: include!(concat!(env!("OUT_DIR"), "/fpshader_shaders.rs"));
//! ```
//!
//! The generated file holds one `pub static NAME: ShaderModule` per shader, `SHADERS` (all of them
//! in name order) and an enum `Shader` indexing them (the equivalent of ncnn's built-in shader
//! index). Cargo is told to rerun when a shader, an include or the folder changes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::cache::{CACHE_DIR_ENV, Cache, LOG_ENV};
use crate::codegen::{self, Embed};
use crate::compile::Compiler;
use crate::error::{Error, Result};
use crate::options::OptionSet;
use crate::settings::{Define, Optimization, Settings, TargetEnv};
use crate::source::Source;

/// Name of the generated file in `OUT_DIR`.
pub const DEFAULT_OUT_FILE: &str = "fpshader_shaders.rs";

/// Configures and runs shader compilation from a build script.
#[derive(Clone, Debug)]
pub struct Builder {
    dirs: Vec<PathBuf>,
    files: Vec<PathBuf>,
    options: Vec<String>,
    per_shader: BTreeMap<String, Vec<String>>,
    settings: Settings,
    defines: Vec<(String, Option<String>)>,
    out_dir: Option<PathBuf>,
    out_file: String,
    cache_dir: Option<PathBuf>,
    krate: String,
    cargo_directives: bool,
    blobs: Option<(PathBuf, String)>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// What a build did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildReport {
    /// The generated Rust file.
    pub out_file: PathBuf,
    /// Shaders compiled.
    pub shaders: usize,
    /// Variants over all shaders.
    pub variants: usize,
    /// Unique blobs over all shaders.
    pub blobs: usize,
    /// Blobs found in the cache.
    pub cache_hits: usize,
    /// Blobs compiled.
    pub cache_misses: usize,
    /// Every shader and include file the build read.
    pub inputs: Vec<PathBuf>,
}

impl Builder {
    /// A builder with no shaders, fp32 only, default settings.
    pub fn new() -> Self {
        Builder {
            dirs: Vec::new(),
            files: Vec::new(),
            options: Vec::new(),
            per_shader: BTreeMap::new(),
            settings: Settings::default(),
            defines: Vec::new(),
            out_dir: None,
            out_file: DEFAULT_OUT_FILE.to_string(),
            cache_dir: None,
            krate: "::fpshader".to_string(),
            cargo_directives: std::env::var_os("OUT_DIR").is_some()
                && std::env::var_os("CARGO_MANIFEST_DIR").is_some(),
            blobs: None,
        }
    }

    /// Compiles every `*.comp` directly in `dir` (relative to `CARGO_MANIFEST_DIR`).
    #[must_use]
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dirs.push(dir.into());
        self
    }

    /// Compiles one shader file (relative to `CARGO_MANIFEST_DIR`).
    #[must_use]
    pub fn shader(mut self, file: impl Into<PathBuf>) -> Self {
        self.files.push(file.into());
        self
    }

    /// The options every shader supports (names as in [`Opt`](crate::Opt)); fp32 is always built.
    #[must_use]
    pub fn options(mut self, names: &[&str]) -> Self {
        self.options = names.iter().map(|s| s.to_string()).collect();
        self
    }

    /// The options of one shader, by file name (`"conv.comp"`), instead of [`options`](Self::options).
    #[must_use]
    pub fn shader_options(mut self, file_name: &str, names: &[&str]) -> Self {
        self.per_shader.insert(
            file_name.to_string(),
            names.iter().map(|s| s.to_string()).collect(),
        );
        self
    }

    /// Adds an include folder (relative to `CARGO_MANIFEST_DIR`).
    #[must_use]
    pub fn include_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.settings.include_dirs.push(dir.into());
        self
    }

    /// Defines a macro for every shader.
    #[must_use]
    pub fn define(mut self, name: &str, value: Option<&str>) -> Self {
        self.defines
            .push((name.to_string(), value.map(str::to_string)));
        self
    }

    /// Sets the target environment (default Vulkan 1.1).
    #[must_use]
    pub fn target_env(mut self, env: TargetEnv) -> Self {
        self.settings.target_env = env;
        self
    }

    /// Sets the optimization level (default none).
    #[must_use]
    pub fn optimization(mut self, level: Optimization) -> Self {
        self.settings.optimization = level;
        self
    }

    /// Writes to this folder instead of `OUT_DIR`.
    #[must_use]
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Names the generated file (default `fpshader_shaders.rs`).
    #[must_use]
    pub fn out_file(mut self, name: &str) -> Self {
        self.out_file = name.to_string();
        self
    }

    /// Writes the SPIR-V blobs to `dir` (default: `fpshader/` in the output folder) and has the
    /// generated code find them at `dir_expr`, a Rust expression `concat!` takes, e.g.
    /// `::core::env!("CARGO_MANIFEST_DIR"), "/builtin/spirv"`. With [`out_dir`](Self::out_dir)
    /// this makes code and blobs to check in and ship, so that a crate embeds compiled shaders
    /// without compiling them (the runtime's built-in shaders do).
    #[must_use]
    pub fn blobs_at(mut self, dir: impl Into<PathBuf>, dir_expr: &str) -> Self {
        self.blobs = Some((dir.into(), dir_expr.to_string()));
        self
    }

    /// Uses this cache folder (default: `$FPSHADER_CACHE_DIR`, else `fpshader-cache` in the target dir).
    #[must_use]
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// The path generated code uses for the runtime crate (default `::fpshader`).
    #[must_use]
    pub fn crate_path(mut self, path: &str) -> Self {
        self.krate = path.to_string();
        self
    }

    /// Whether to print `cargo:` directives (default: when run as a build script).
    #[must_use]
    pub fn cargo_directives(mut self, on: bool) -> Self {
        self.cargo_directives = on;
        self
    }

    /// Compiles everything and writes the Rust file. Failures are also printed as `cargo::error=`
    /// lines naming the shader's file and line.
    pub fn compile(self) -> Result<BuildReport> {
        let directives = self.cargo_directives;
        let result = self.run();
        if let (Err(e), true) = (&result, directives) {
            for line in e.to_string().lines() {
                println!("cargo::error={line}");
            }
        }
        result
    }

    fn run(mut self) -> Result<BuildReport> {
        let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."));
        let resolve = |p: &Path| {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                manifest_dir.join(p)
            }
        };
        let out_dir = match self
            .out_dir
            .take()
            .or_else(|| std::env::var_os("OUT_DIR").map(PathBuf::from))
        {
            Some(d) => d,
            None => {
                return Err(Error::Usage {
                    argument: "OUT_DIR".into(),
                    problem: "not set: run from a build script or call Builder::out_dir",
                });
            }
        };

        let mut settings = self.settings.clone();
        settings.include_dirs = settings.include_dirs.iter().map(|d| resolve(d)).collect();
        settings.defines = self
            .defines
            .iter()
            .map(|(n, v)| Define::new(n, v.as_deref()))
            .collect::<Result<_>>()?;
        let default_options = OptionSet::parse(&self.options.join(","))?;

        let mut files: Vec<PathBuf> = self.files.iter().map(|f| resolve(f)).collect();
        for dir in &self.dirs {
            let dir = resolve(dir);
            self.rerun(&dir);
            let entries = std::fs::read_dir(&dir).map_err(|source| Error::Io {
                path: dir.clone(),
                source,
            })?;
            for entry in entries {
                let path = entry
                    .map_err(|source| Error::Io {
                        path: dir.clone(),
                        source,
                    })?
                    .path();
                if path.extension().is_some_and(|e| e == "comp") && path.is_file() {
                    files.push(path);
                }
            }
        }
        files.sort();
        files.dedup();

        let mut names: BTreeMap<String, PathBuf> = BTreeMap::new();
        for f in &files {
            let stem = f
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if let Some(other) = names.insert(stem.clone(), f.clone()) {
                return Err(Error::DuplicateShader {
                    name: stem.to_string(),
                    first: other.to_path_buf(),
                    second: f.to_path_buf(),
                });
            }
        }
        for name in self.per_shader.keys() {
            if !files
                .iter()
                .any(|f| f.file_name().is_some_and(|n| n == name.as_str()))
            {
                return Err(Error::Usage {
                    argument: name.to_string(),
                    problem: "a shader_options name that is not among the shaders",
                });
            }
        }

        let cache_dir = self
            .cache_dir
            .clone()
            .unwrap_or_else(|| default_cache_dir(&out_dir));
        let cache = Cache::from_env(cache_dir);
        let compiler = Compiler::new(settings)?.with_cache(cache);
        if self.cargo_directives {
            println!("cargo:rerun-if-env-changed={CACHE_DIR_ENV}");
            println!("cargo:rerun-if-env-changed={LOG_ENV}");
        }

        let (blob_dir, blob_expr) = match self.blobs.take() {
            Some((dir, expr)) => (resolve(&dir), expr),
            None => (
                out_dir.join("fpshader"),
                "::core::env!(\"OUT_DIR\"), \"/fpshader\"".to_string(),
            ),
        };
        std::fs::create_dir_all(&blob_dir).map_err(|source| Error::Io {
            path: blob_dir.clone(),
            source,
        })?;
        let mut report = BuildReport::default();
        let mut code = String::from("// @generated by fpshader-build. Do not edit.\n\n");
        let mut statics = Vec::new();
        for (name, path) in &names {
            self.rerun(path);
            report.inputs.push(path.clone());
            let file_name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let supported = match self.per_shader.get(&file_name) {
                Some(list) => OptionSet::parse(&list.join(","))?,
                None => default_options,
            };
            let source = Source::from_file(path)?;
            let set = compiler.compile_variants(&source, supported)?;
            for inc in &set.includes {
                self.rerun(inc);
                if !report.inputs.contains(inc) {
                    report.inputs.push(inc.clone());
                }
            }
            for blob in &set.blobs {
                let file = blob_dir.join(format!("{}.spv", blob.hash));
                write_if_changed(&file, &crate::words_as_bytes(&blob.words))?;
            }
            report.shaders += 1;
            report.variants += set.variants.len();
            report.blobs += set.blobs.len();
            report.cache_hits += set.cache_hits;
            report.cache_misses += set.cache_misses;

            let expr = codegen::module_expr(
                &set,
                name,
                &self.krate,
                Embed::IncludeBytes {
                    dir_expr: &blob_expr,
                },
            )?;
            let ident = codegen::static_name(name);
            writeln!(
                code,
                "/// The `{name}` shader ({} variants).\n#[allow(dead_code)]\npub static {ident}: {}::meta::ShaderModule = {expr};\n",
                set.variants.len(),
                self.krate
            )
            .ok();
            statics.push((name.clone(), ident));
        }
        code.push_str(&registry(&statics, &self.krate));

        let out_file = out_dir.join(&self.out_file);
        write_if_changed(&out_file, code.as_bytes())?;
        report.out_file = out_file;
        Ok(report)
    }

    fn rerun(&self, path: &Path) {
        if self.cargo_directives {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

/// The `Shader` enum and `SHADERS` table over all modules.
fn registry(statics: &[(String, String)], krate: &str) -> String {
    let mut s = String::new();
    let n = statics.len();
    writeln!(
        s,
        "/// Every shader of this build, in name order.\n#[allow(dead_code)]"
    )
    .ok();
    writeln!(
        s,
        "pub static SHADERS: [&{krate}::meta::ShaderModule; {n}] = [{}];\n",
        statics
            .iter()
            .map(|(_, i)| format!("&{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
    .ok();
    writeln!(
        s,
        "/// Index of the shaders of this build; `Shader::X as usize` indexes `SHADERS`."
    )
    .ok();
    writeln!(
        s,
        "#[allow(dead_code)]\n#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]"
    )
    .ok();
    writeln!(s, "#[repr(usize)]\npub enum Shader {{").ok();
    for (name, _) in statics {
        writeln!(s, "    /// `{name}`\n    {},", codegen::variant_name(name)).ok();
    }
    writeln!(s, "}}\n").ok();
    writeln!(s, "#[allow(dead_code)]\nimpl Shader {{").ok();
    writeln!(
        s,
        "    /// Every shader, in index order.\n    pub const ALL: [Shader; {n}] = [{}];",
        statics
            .iter()
            .map(|(name, _)| format!("Shader::{}", codegen::variant_name(name)))
            .collect::<Vec<_>>()
            .join(", ")
    )
    .ok();
    writeln!(
        s,
        "    /// Its index in `SHADERS`.\n    pub const fn index(self) -> usize {{ self as usize }}"
    )
    .ok();
    writeln!(s, "    /// Its compiled module.\n    pub fn module(self) -> &'static {krate}::meta::ShaderModule {{ SHADERS[self as usize] }}").ok();
    writeln!(
        s,
        "    /// Its name (the file stem).\n    pub fn name(self) -> &'static str {{ match self {{"
    )
    .ok();
    for (name, _) in statics {
        writeln!(
            s,
            "        Shader::{} => {name:?},",
            codegen::variant_name(name)
        )
        .ok();
    }
    writeln!(s, "    }} }}").ok();
    writeln!(s, "    /// The shader with this name.\n    pub fn from_name(name: &str) -> Option<Shader> {{ Shader::ALL.into_iter().find(|s| s.name() == name) }}").ok();
    writeln!(s, "    /// The shader at this index.\n    pub fn from_index(index: usize) -> Option<Shader> {{ Shader::ALL.get(index).copied() }}").ok();
    writeln!(s, "}}").ok();
    s
}

/// `fpshader-cache` in the cargo target dir that holds `out_dir` (found by cargo's CACHEDIR.TAG),
/// or next to `out_dir` when there is none.
fn default_cache_dir(out_dir: &Path) -> PathBuf {
    crate::cache::target_dir_above(out_dir)
        .unwrap_or_else(|| out_dir.to_path_buf())
        .join("fpshader-cache")
}

/// Writes `bytes` unless the file already holds them, so unchanged outputs keep their mtime.
fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<()> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    std::fs::write(path, bytes).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}
