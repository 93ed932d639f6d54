//! Compiler settings shared by every variant of a build: target environment, optimization,
//! include directories and user defines.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::error::Error;

/// The Vulkan version the SPIR-V is for; it fixes the SPIR-V version too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TargetEnv {
    /// Vulkan 1.0, SPIR-V 1.0.
    Vulkan1_0,
    /// Vulkan 1.1, SPIR-V 1.3: the default, which both wgpu paths accept (FACTS §2).
    #[default]
    Vulkan1_1,
    /// Vulkan 1.2, SPIR-V 1.5.
    Vulkan1_2,
    /// Vulkan 1.3, SPIR-V 1.6.
    Vulkan1_3,
}

impl TargetEnv {
    /// Every target, oldest first.
    pub const ALL: [TargetEnv; 4] = [
        TargetEnv::Vulkan1_0,
        TargetEnv::Vulkan1_1,
        TargetEnv::Vulkan1_2,
        TargetEnv::Vulkan1_3,
    ];

    /// The glslc-style name (`vulkan1.1`).
    pub const fn name(self) -> &'static str {
        match self {
            TargetEnv::Vulkan1_0 => "vulkan1.0",
            TargetEnv::Vulkan1_1 => "vulkan1.1",
            TargetEnv::Vulkan1_2 => "vulkan1.2",
            TargetEnv::Vulkan1_3 => "vulkan1.3",
        }
    }

    /// The SPIR-V version (major, minor) this target produces.
    pub const fn spirv_version(self) -> (u8, u8) {
        match self {
            TargetEnv::Vulkan1_0 => (1, 0),
            TargetEnv::Vulkan1_1 => (1, 3),
            TargetEnv::Vulkan1_2 => (1, 5),
            TargetEnv::Vulkan1_3 => (1, 6),
        }
    }

    /// The oldest target whose SPIR-V holds a module of SPIR-V `words` (its version word,
    /// `0x00MMmm00`); `None` for no module or a version newer than every target's.
    pub fn of_module(words: &[u32]) -> Option<TargetEnv> {
        let v = words.get(1)?;
        let version = (((v >> 16) & 0xff) as u8, ((v >> 8) & 0xff) as u8);
        TargetEnv::ALL
            .into_iter()
            .find(|t| t.spirv_version() >= version)
    }
}

impl fmt::Display for TargetEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TargetEnv {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        TargetEnv::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| Error::UnknownTargetEnv {
                name: s.to_string(),
                valid: TargetEnv::ALL.iter().map(|t| t.name()).collect(),
            })
    }
}

/// spirv-opt level applied after glslang.
///
/// The default is none, as in ncnn: drivers optimize anyway, and spirv-opt's recipes strip the
/// names that reflection reports for push-constant members and specialization constants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Optimization {
    /// No optimization (`-O0`): glslang's output as is, names kept. The default.
    #[default]
    Zero,
    /// Optimize for size (`-Os`).
    Size,
    /// Optimize for speed (`-O`).
    Performance,
}

impl Optimization {
    /// The glslc flag spelling (`-O0`, `-Os`, `-O`).
    pub const fn flag(self) -> &'static str {
        match self {
            Optimization::Zero => "-O0",
            Optimization::Size => "-Os",
            Optimization::Performance => "-O",
        }
    }
}

impl FromStr for Optimization {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "0" | "zero" | "none" => Ok(Optimization::Zero),
            "s" | "size" => Ok(Optimization::Size),
            "" | "performance" | "speed" => Ok(Optimization::Performance),
            _ => Err(Error::Usage {
                argument: s.to_string(),
                problem: "not an optimization level (0, s, performance)",
            }),
        }
    }
}

/// A user macro, `NAME` or `NAME=VALUE`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Define {
    /// Macro name.
    pub name: String,
    /// Its value, if any.
    pub value: Option<String>,
}

impl Define {
    /// A checked define: `name` must be an identifier, `value` free of newlines and NULs.
    pub fn new(name: &str, value: Option<&str>) -> Result<Define, Error> {
        let valid_name = name
            .chars()
            .enumerate()
            .all(|(i, c)| c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()));
        if name.is_empty() || !valid_name {
            return Err(Error::Usage {
                argument: name.to_string(),
                problem: "a define: expected NAME or NAME=VALUE with NAME an identifier",
            });
        }
        if value.is_some_and(|v| v.contains(['\0', '\n'])) {
            return Err(Error::Usage {
                argument: name.to_string(),
                problem: "a define whose value holds a newline or NUL",
            });
        }
        Ok(Define {
            name: name.to_string(),
            value: value.map(str::to_string),
        })
    }
}

impl FromStr for Define {
    type Err = Error;

    /// Parses `NAME` or `NAME=VALUE` (as glslc's `-D`).
    fn from_str(s: &str) -> Result<Self, Error> {
        match s.split_once('=') {
            Some((name, value)) => Define::new(name, Some(value)),
            None => Define::new(s, None),
        }
    }
}

/// Everything besides the source and the option set that decides what SPIR-V comes out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Settings {
    /// Target environment (default Vulkan 1.1 / SPIR-V 1.3).
    pub target_env: TargetEnv,
    /// Optimization level (default none).
    pub optimization: Optimization,
    /// Folders searched for `#include`, after the including file's own folder.
    pub include_dirs: Vec<PathBuf>,
    /// User macros, defined before the shader's text.
    pub defines: Vec<Define>,
}

impl Settings {
    /// Sets the target environment.
    #[must_use]
    pub fn target_env(mut self, env: TargetEnv) -> Self {
        self.target_env = env;
        self
    }

    /// Sets the optimization level.
    #[must_use]
    pub fn optimization(mut self, level: Optimization) -> Self {
        self.optimization = level;
        self
    }

    /// Adds an include folder.
    #[must_use]
    pub fn include_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.include_dirs.push(dir.into());
        self
    }

    /// Adds a macro definition.
    #[must_use]
    pub fn define(mut self, name: impl Into<String>, value: Option<&str>) -> Self {
        self.defines.push(Define {
            name: name.into(),
            value: value.map(str::to_string),
        });
        self
    }
}
