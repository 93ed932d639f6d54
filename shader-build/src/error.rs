//! The error type of `fpshader-build`.

use std::fmt;
use std::path::PathBuf;

/// Severity of a compiler diagnostic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The shader does not compile.
    Error,
    /// The shader compiles, but glslang has a remark.
    Warning,
}

/// One compiler message, located in the user's source (never in the generated preamble).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file the message is about: the shader itself or one of its includes.
    pub file: String,
    /// 1-based line in `file`, when glslang names one.
    pub line: Option<u32>,
    /// Error or warning.
    pub severity: Severity,
    /// glslang's message text, without the location prefix.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        match self.line {
            Some(line) => write!(f, "{}:{}: {}: {}", self.file, line, sev, self.message),
            None => write!(f, "{}: {}: {}", self.file, sev, self.message),
        }
    }
}

/// A list of diagnostics shown one per line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

/// Everything that can go wrong between a `.comp` file and its SPIR-V.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An option name or set that does not exist.
    #[error(transparent)]
    Options(#[from] crate::options::OptionError),
    /// The shader has no `#version` line before its first statement.
    #[error("{file}: missing `#version` directive (it must come first, e.g. `#version 450`)")]
    MissingVersion {
        /// The shader's name.
        file: String,
    },
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Source bytes that are not UTF-8, or contain a NUL byte.
    #[error("{file}: {problem}")]
    BadSource {
        /// The shader or include.
        file: String,
        /// What is wrong with the bytes.
        problem: String,
    },
    /// An `#include` that names no file in the including file's folder or the include dirs.
    #[error(
        "{file}:{line}: error: cannot find include \"{name}\" (searched: {})",
        searched_list(searched)
    )]
    MissingInclude {
        /// The file holding the `#include`.
        file: String,
        /// Its line.
        line: u32,
        /// The name in the directive.
        name: String,
        /// Every path tried.
        searched: Vec<PathBuf>,
    },
    /// A file that includes itself, directly or through others.
    #[error("{file}:{line}: error: include cycle: {}", cycle_list(chain))]
    IncludeCycle {
        /// The file holding the `#include` that closes the cycle.
        file: String,
        /// Its line.
        line: u32,
        /// The chain of files, from the shader to the file included again.
        chain: Vec<PathBuf>,
    },
    /// glslang rejected the shader.
    #[error("{diagnostics}")]
    Glsl {
        /// The variant being compiled (`fp16sa-image`).
        variant: String,
        /// glslang's messages, located in the user's files.
        diagnostics: Diagnostics,
    },
    /// Bad command-line or API arguments (a malformed `-D`, an unknown target env, …).
    #[error("`{argument}`: {problem}")]
    Usage {
        /// The argument as given.
        argument: String,
        /// What is wrong with it, and what is taken.
        problem: &'static str,
    },
    /// A target env name that does not exist.
    #[error("unknown target env `{name}`; valid: {}", valid.join(", "))]
    UnknownTargetEnv {
        /// The name given.
        name: String,
        /// The names there are.
        valid: Vec<&'static str>,
    },
    /// Two shaders of one build with the same name (their file stem).
    #[error("two shaders named `{name}`: {} and {}", first.display(), second.display())]
    DuplicateShader {
        /// The name.
        name: String,
        /// One file.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
    /// A reflection, manifest, scenario or dump that JSON could not hold.
    #[error("cannot write {what} as JSON: {source}")]
    Json {
        /// What was written.
        what: &'static str,
        /// serde_json's error.
        source: std::sync::Arc<serde_json::Error>,
    },
    /// SPIR-V that cannot be reflected.
    #[error(transparent)]
    Reflect(#[from] crate::reflect::ReflectError),
    /// A VGF file or a TOSA model that cannot be read or converted.
    #[error(transparent)]
    Vgf(#[from] crate::vgf::VgfError),
    /// shaderc failed internally (initialization, or a failure it does not attribute to the source).
    #[error("shaderc: {what}: {message}")]
    Internal {
        /// What was asked of it.
        what: &'static str,
        /// What it said.
        message: String,
    },
}

impl Error {
    /// The first located diagnostic of a GLSL error, if this is one.
    pub fn first_diagnostic(&self) -> Option<&Diagnostic> {
        match self {
            Error::Glsl { diagnostics, .. } => diagnostics.0.first(),
            _ => None,
        }
    }
}

fn searched_list(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "no include directories".to_string();
    }
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn cycle_list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" -> ")
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
