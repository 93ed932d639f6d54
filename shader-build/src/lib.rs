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

mod compile;
mod error;
pub mod extension;
pub mod manifest;
mod options;
mod settings;
mod source;
mod variants;

pub use compile::{Compiled, Compiler, Preprocessed};
pub use error::{Diagnostic, Diagnostics, Error, Result, Severity};
pub use options::{FloatClass, Opt, OptionSet, Storage};
pub use settings::{Define, Optimization, Settings, TargetEnv};
pub use source::Source;
pub use variants::{Blob, Variant, VariantSet, words_as_bytes};
