//! One expanded shader through shaderc: includes, diagnostics, SPIR-V.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use crate::cache::Cache;
use crate::error::{Diagnostic, Diagnostics, Error, Result, Severity};
use crate::options::OptionSet;
use crate::settings::{Optimization, Settings, TargetEnv};
use crate::source::{self, Source};

/// SPIR-V produced for one option set.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The SPIR-V words.
    pub words: Vec<u32>,
    /// Every file pulled in through `#include`, in first-seen order.
    pub includes: Vec<PathBuf>,
    /// glslang's warnings, if any.
    pub warnings: Vec<Diagnostic>,
}

/// A shader after the preprocessor: what glslang would compile, includes inlined.
#[derive(Clone, Debug)]
pub struct Preprocessed {
    /// The preprocessed text.
    pub text: String,
    /// Every file pulled in through `#include`.
    pub includes: Vec<PathBuf>,
}

/// Compiles GLSL written with the ncnn extension. Cheap to share across threads.
pub struct Compiler {
    inner: shaderc::Compiler,
    settings: Settings,
    cache: Option<Cache>,
}

impl std::fmt::Debug for Compiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiler")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Compiler {
    /// A compiler with `settings`; fails only if shaderc cannot start or a define is malformed.
    pub fn new(settings: Settings) -> Result<Self> {
        for d in &settings.defines {
            crate::settings::Define::new(&d.name, d.value.as_deref())?;
        }
        let inner = shaderc::Compiler::new().map_err(|e| Error::Internal {
            what: "creating a compiler",
            message: e.to_string(),
        })?;
        Ok(Compiler {
            inner,
            settings,
            cache: None,
        })
    }

    /// Uses `cache` for [`compile_variants`](Compiler::compile_variants).
    #[must_use]
    pub fn with_cache(mut self, cache: Cache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The cache, if any.
    pub fn cache(&self) -> Option<&Cache> {
        self.cache.as_ref()
    }

    /// The settings this compiler uses.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The source with the preamble for `set` inserted (after canonicalizing `set`).
    pub fn expand(&self, source: &Source, set: OptionSet) -> Result<String> {
        source.expand(set.canonicalize()?)
    }

    /// Runs the preprocessor on the expanded source: includes inlined, macros applied.
    pub fn preprocess(&self, source: &Source, set: OptionSet) -> Result<Preprocessed> {
        let set = set.canonicalize()?;
        let expanded = source.expand(set)?;
        let includes = IncludeResolver::new(source, &self.settings.include_dirs);
        let options = self.options(&includes, &expanded)?;
        let result = self
            .inner
            .preprocess(&expanded, &source.name, "main", Some(&options));
        drop(options);
        match result {
            Ok(artifact) => Ok(Preprocessed {
                text: artifact.as_text(),
                includes: includes.into_resolved(),
            }),
            Err(e) => Err(includes.into_error(e, set)),
        }
    }

    /// Compiles `source` for the option set `set` (canonicalized first).
    pub fn compile(&self, source: &Source, set: OptionSet) -> Result<Compiled> {
        let set = set.canonicalize()?;
        let expanded = source.expand(set)?;
        self.compile_expanded(source, &expanded, set)
    }

    /// Compiles GLSL text (ncnn's `compile_spirv_module(const char*, opt, spirv)`); `name` is used
    /// in diagnostics, includes resolve against the include dirs.
    pub fn compile_str(&self, name: &str, text: &str, set: OptionSet) -> Result<Vec<u32>> {
        Ok(self.compile(&Source::from_str(name, text)?, set)?.words)
    }

    /// Compiles GLSL bytes, which must be UTF-8 (ncnn's `compile_spirv_module(data, size, …)`).
    pub fn compile_bytes(&self, name: &str, bytes: &[u8], set: OptionSet) -> Result<Vec<u32>> {
        Ok(self.compile(&Source::from_bytes(name, bytes)?, set)?.words)
    }

    /// Compiles an HLSL compute shader through shaderc's HLSL front end (no ncnn extension:
    /// it is GLSL-only); `entry` is the entry point.
    pub fn compile_hlsl(&self, name: &str, text: &str, entry: &str) -> Result<Vec<u32>> {
        let source = Source::from_str(name, text)?;
        let includes = IncludeResolver::new(&source, &self.settings.include_dirs);
        let mut options = self.options(&includes, text)?;
        options.set_source_language(shaderc::SourceLanguage::HLSL);
        let result = self.inner.compile_into_spirv(
            text,
            shaderc::ShaderKind::Compute,
            name,
            entry,
            Some(&options),
        );
        drop(options);
        match result {
            Ok(artifact) => Ok(artifact.as_binary().to_vec()),
            Err(e) => Err(includes.into_error(e, OptionSet::default())),
        }
    }

    /// Reads and compiles a `.comp` file.
    pub fn compile_file(&self, path: impl AsRef<Path>, set: OptionSet) -> Result<Compiled> {
        self.compile(&Source::from_file(path)?, set)
    }

    /// Compiles text that already carries the preamble for `set`.
    pub(crate) fn compile_expanded(
        &self,
        source: &Source,
        expanded: &str,
        set: OptionSet,
    ) -> Result<Compiled> {
        let includes = IncludeResolver::new(source, &self.settings.include_dirs);
        let options = self.options(&includes, expanded)?;
        let result = self.inner.compile_into_spirv(
            expanded,
            shaderc::ShaderKind::Compute,
            &source.name,
            "main",
            Some(&options),
        );
        drop(options);
        match result {
            Ok(artifact) => Ok(Compiled {
                words: artifact.as_binary().to_vec(),
                warnings: parse_diagnostics(&artifact.get_warning_messages()),
                includes: includes.into_resolved(),
            }),
            Err(e) => Err(includes.into_error(e, set)),
        }
    }

    fn options<'a>(
        &self,
        includes: &'a IncludeResolver,
        expanded: &str,
    ) -> Result<shaderc::CompileOptions<'a>> {
        let mut o = shaderc::CompileOptions::new().map_err(|e| Error::Internal {
            what: "creating compile options",
            message: e.to_string(),
        })?;
        o.set_source_language(shaderc::SourceLanguage::GLSL);
        let env = match self.settings.target_env.max(least_target_env(expanded)) {
            TargetEnv::Vulkan1_0 => shaderc::EnvVersion::Vulkan1_0,
            TargetEnv::Vulkan1_1 => shaderc::EnvVersion::Vulkan1_1,
            TargetEnv::Vulkan1_2 => shaderc::EnvVersion::Vulkan1_2,
            TargetEnv::Vulkan1_3 => shaderc::EnvVersion::Vulkan1_3,
        };
        o.set_target_env(shaderc::TargetEnv::Vulkan, env as u32);
        o.set_optimization_level(match self.settings.optimization {
            Optimization::Zero => shaderc::OptimizationLevel::Zero,
            Optimization::Size => shaderc::OptimizationLevel::Size,
            Optimization::Performance => shaderc::OptimizationLevel::Performance,
        });
        for d in &self.settings.defines {
            o.add_macro_definition(&d.name, d.value.as_deref());
        }
        o.set_include_callback(move |name, kind, from, depth| {
            includes.resolve(name, kind, from, depth)
        });
        Ok(o)
    }
}

/// GLSL extensions glslang takes only from a newer SPIR-V than the default target's, and the
/// target each needs: a shader enabling one (in its own file, not an include) is compiled
/// for that target whatever the settings ask, since it cannot be compiled for less.
const NEWER_SPIRV: [(&str, TargetEnv); 1] = [("GL_NV_cooperative_matrix2", TargetEnv::Vulkan1_3)];

/// The least target `source`'s `#extension` lines need ([`NEWER_SPIRV`]).
fn least_target_env(source: &str) -> TargetEnv {
    source
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("#extension"))
        .filter_map(|rest| {
            let name = rest.split(':').next()?.trim();
            NEWER_SPIRV
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, e)| *e)
        })
        .max()
        .unwrap_or(TargetEnv::Vulkan1_0)
}

/// Why an include failed, kept so the error can be typed instead of glslang's generic message.
enum IncludeFailure {
    Missing {
        name: String,
        from: String,
        searched: Vec<PathBuf>,
    },
    Cycle {
        from: String,
        chain: Vec<PathBuf>,
    },
    Bad(Error),
}

/// Resolves `#include` for one compilation and remembers what it resolved.
struct IncludeResolver<'s> {
    main: &'s Source,
    include_dirs: &'s [PathBuf],
    /// Canonical paths of the files being included, outermost first; index = include depth.
    stack: RefCell<Vec<PathBuf>>,
    resolved: RefCell<Vec<PathBuf>>,
    /// The first failure, with the (name, including file) it was for. shaderc retries a failed
    /// `#include "x"` as `#include <x>`; the retry must neither hide the first reason nor leave a
    /// stale one behind when it succeeds.
    failure: RefCell<Option<((String, String), IncludeFailure)>>,
}

impl<'s> IncludeResolver<'s> {
    fn new(main: &'s Source, include_dirs: &'s [PathBuf]) -> Self {
        let root = match &main.path {
            Some(path) => canonical(path),
            None => PathBuf::from(format!("<{}>", main.name)),
        };
        IncludeResolver {
            main,
            include_dirs,
            stack: RefCell::new(vec![root]),
            resolved: RefCell::new(Vec::new()),
            failure: RefCell::new(None),
        }
    }

    fn resolve(
        &self,
        name: &str,
        kind: shaderc::IncludeType,
        from: &str,
        depth: usize,
    ) -> Result<shaderc::ResolvedInclude, String> {
        let mut candidates = Vec::new();
        if kind == shaderc::IncludeType::Relative {
            let base = if from == self.main.name {
                self.main.dir.clone()
            } else {
                Path::new(from).parent().map(Path::to_path_buf)
            };
            if let Some(base) = base {
                candidates.push(base.join(name));
            }
        }
        candidates.extend(self.include_dirs.iter().map(|d| d.join(name)));

        let key = (name.to_string(), from.to_string());
        let Some(path) = candidates.iter().find(|p| p.is_file()).cloned() else {
            return self.fail(
                key,
                IncludeFailure::Missing {
                    name: name.to_string(),
                    from: from.to_string(),
                    searched: candidates,
                },
            );
        };
        let canon = canonical(&path);
        {
            let mut stack = self.stack.borrow_mut();
            stack.truncate(depth.max(1));
            if stack.contains(&canon) {
                let mut chain = stack.clone();
                chain.push(canon);
                drop(stack);
                return self.fail(
                    key,
                    IncludeFailure::Cycle {
                        from: from.to_string(),
                        chain,
                    },
                );
            }
            stack.push(canon);
        }
        let display = path.display().to_string();
        let content = std::fs::read(&path)
            .map_err(|source| Error::Io {
                path: path.clone(),
                source,
            })
            .and_then(|bytes| source::decode(&display, &bytes))
            .and_then(|text| source::check_text(&display, &text).map(|()| text));
        let content = match content {
            Ok(c) => c,
            Err(e) => return self.fail(key, IncludeFailure::Bad(e)),
        };
        let mut failure = self.failure.borrow_mut();
        if failure.as_ref().is_some_and(|(k, _)| *k == key) {
            *failure = None;
        }
        drop(failure);
        let mut resolved = self.resolved.borrow_mut();
        if !resolved.contains(&path) {
            resolved.push(path);
        }
        Ok(shaderc::ResolvedInclude {
            resolved_name: display,
            content,
        })
    }

    fn fail(
        &self,
        key: (String, String),
        failure: IncludeFailure,
    ) -> Result<shaderc::ResolvedInclude, String> {
        let message = match &failure {
            IncludeFailure::Missing { name, .. } => format!("cannot find include \"{name}\""),
            IncludeFailure::Cycle { .. } => "include cycle".to_string(),
            IncludeFailure::Bad(e) => e.to_string(),
        };
        self.failure.borrow_mut().get_or_insert((key, failure));
        Err(message)
    }

    fn into_resolved(self) -> Vec<PathBuf> {
        self.resolved.into_inner()
    }

    /// Turns a shaderc failure into a typed error, preferring what the include callback saw.
    fn into_error(self, err: shaderc::Error, set: OptionSet) -> Error {
        let text = match err {
            shaderc::Error::CompilationError(_, text) => text,
            other => {
                return Error::Internal {
                    what: "compiling",
                    message: other.to_string(),
                };
            }
        };
        let diagnostics = parse_diagnostics(&text);
        let include_site = |from: &str| {
            diagnostics
                .iter()
                .find(|d| d.file == from && d.line.is_some() && d.message.contains("include"))
                .or_else(|| diagnostics.iter().find(|d| d.line.is_some()))
                .and_then(|d| d.line)
                .unwrap_or(0)
        };
        match self.failure.into_inner().map(|(_, f)| f) {
            Some(IncludeFailure::Missing {
                name,
                from,
                searched,
            }) => Error::MissingInclude {
                line: include_site(&from),
                file: from,
                name,
                searched,
            },
            Some(IncludeFailure::Cycle { from, chain }) => Error::IncludeCycle {
                line: include_site(&from),
                file: from,
                chain,
            },
            Some(IncludeFailure::Bad(e)) => e,
            None if diagnostics.is_empty() => Error::Internal {
                what: "compiling (no diagnostics it locates)",
                message: text,
            },
            None => Error::Glsl {
                variant: set.name(),
                diagnostics: Diagnostics(diagnostics),
            },
        }
    }
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// Parses glslang's `file:line: error: message` lines (file names may hold colons).
pub(crate) fn parse_diagnostics(text: &str) -> Vec<Diagnostic> {
    text.lines()
        .filter_map(|line| {
            let (severity, at, tag) = [
                (Severity::Error, ": error: "),
                (Severity::Warning, ": warning: "),
            ]
            .into_iter()
            .find_map(|(sev, tag)| line.find(tag).map(|at| (sev, at, tag)))?;
            let location = &line[..at];
            let message = line[at + tag.len()..].trim().to_string();
            let (file, line_no) = match location.rsplit_once(':') {
                Some((file, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                    (file.to_string(), n.parse().ok())
                }
                _ => (location.to_string(), None),
            };
            Some(Diagnostic {
                file,
                line: line_no,
                severity,
                message,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_located_diagnostics() {
        let d = parse_diagnostics(
            "C:\\s\\a.comp:12: error: 'x' : undeclared identifier\n\
             a.comp: warning: something\n\
             2 errors generated.\n",
        );
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].file, "C:\\s\\a.comp");
        assert_eq!(d[0].line, Some(12));
        assert_eq!(d[0].message, "'x' : undeclared identifier");
        assert_eq!(d[1].line, None);
        assert_eq!(d[1].severity, Severity::Warning);
    }
}
