//! `fpshader-build`: compiles GLSL compute shaders written with the ncnn GLSL extension into SPIR-V
//! for every meaningful precision variant.
//!
//! Data flows one way: a [`Source`] is [expanded](Source::expand) for an [`OptionSet`] (the
//! extension becomes a preamble of `#define`s), compiled by shaderc ([`Compiler::compile`]), and
//! across all option permutations deduplicated and compiled in parallel
//! ([`Compiler::compile_variants`]).
//!
//! ```no_run
//! use fpshader_build::{Compiler, OptionSet, Settings, Source};
//!
//! let compiler = Compiler::new(Settings::default())?;
//! let source = Source::from_file("shaders/relu.comp")?;
//! let variants = compiler.compile_variants(&source, OptionSet::parse("fp16p,fp16s,fp16a,image")?)?;
//! for v in &variants.variants {
//!     println!("{} -> blob {}", v.options.name(), v.blob);
//! }
//! # Ok::<(), fpshader_build::Error>(())
//! ```
//!
//! # In a build script
//!
//! [`Builder`] compiles a folder of shaders in every variant and writes Rust code that embeds
//! them (one `static` [`meta::ShaderModule`] per shader, a `SHADERS` table and a `Shader` enum),
//! with a content-addressed cache shared by builds and the `shader!` macro:
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), fpshader_build::Error> {
//!     fpshader_build::Builder::new()
//!         .dir("shaders")
//!         .include_dir("shaders/include")
//!         .options(&["fp16p", "fp16s", "fp16a", "image"])
//!         .compile()?;
//!     Ok(())
//! }
//! // src/lib.rs: mod shaders { include!(concat!(env!("OUT_DIR"), "/fpshader_shaders.rs")); }
//! ```
//!
//! The `fpshaderc` command does the same from a shell (`fpshaderc embed`), plus expansion,
//! single compiles, reflection and VGF conversion; [`vgf`] reads and writes Arm's VGF files.
//!
//! # Feature flags
//!
//! - `compiler` (default): compiling, variants, the cache, code generation and `fpshaderc`.
//!   It brings in shaderc, whose glslang and SPIRV-Tools C++ is built with cmake and a C++
//!   compiler (about 8 minutes on 2 cores, once per target dir; `SHADERC_LIB_DIR` links a
//!   build you already have).
//!
//! Without `compiler` only what the runtime shares is built ([`meta`], [`OptionSet`],
//! [`reflect`], [`vgf`]'s format): no shaderc, no C++.

#[cfg(feature = "compiler")]
mod builder;
#[cfg(feature = "compiler")]
pub mod cache;
#[cfg(feature = "compiler")]
pub mod codegen;
#[cfg(feature = "compiler")]
mod compile;
mod error;
pub mod extension;
#[cfg(feature = "compiler")]
pub mod manifest;
pub mod meta;
mod options;
pub mod reflect;
mod settings;
mod source;
pub mod spv;
#[cfg(feature = "compiler")]
mod variants;
pub mod vgf;

#[cfg(feature = "compiler")]
pub use builder::{BuildReport, Builder, DEFAULT_OUT_FILE};
#[cfg(feature = "compiler")]
pub use compile::{Compiled, Compiler, Preprocessed};
pub use error::{Diagnostic, Diagnostics, Error, Result, Severity};
pub use options::{FloatClass, Opt, OptionError, OptionSet, Storage};
pub use settings::{Define, Optimization, Settings, TargetEnv};
pub use source::Source;
#[cfg(feature = "compiler")]
pub use variants::{Blob, Variant, VariantSet};

/// The SPIR-V words as little-endian bytes (the on-disk `.spv` form).
pub fn words_as_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}
