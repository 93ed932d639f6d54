//! Shader sources and the insertion of the extension preamble after `#version`.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::extension;
use crate::options::OptionSet;

/// A shader's text with the name diagnostics use and the folder its relative includes start from.
#[derive(Clone, Debug)]
pub struct Source {
    /// Name shown in diagnostics (the path as the user gave it, or a tag for in-memory sources).
    pub name: String,
    /// The GLSL text.
    pub text: String,
    /// Folder for `#include "…"` relative to this file; `None` for in-memory sources.
    pub dir: Option<PathBuf>,
    /// The file it was read from, if any.
    pub path: Option<PathBuf>,
}

impl Source {
    /// An in-memory source; relative includes are searched in the include dirs only.
    pub fn from_str(name: impl Into<String>, text: impl Into<String>) -> Result<Self> {
        let name = name.into();
        let text = text.into();
        check_text(&name, &text)?;
        Ok(Source {
            name,
            text,
            dir: None,
            path: None,
        })
    }

    /// An in-memory source given as bytes, which must be UTF-8 (ncnn's `comp_data, comp_data_size`).
    pub fn from_bytes(name: impl Into<String>, bytes: &[u8]) -> Result<Self> {
        let name = name.into();
        let text = decode(&name, bytes)?;
        Source::from_str(name, text)
    }

    /// Reads a shader file; its folder becomes the base of its relative includes.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let name = path.display().to_string();
        let text = decode(&name, &bytes)?;
        check_text(&name, &text)?;
        Ok(Source {
            name,
            text,
            dir: Some(
                path.parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| PathBuf::from(".")),
            ),
            path: Some(path.to_path_buf()),
        })
    }

    /// The source with the preamble for `set` (a canonical set) inserted after its `#version` line,
    /// followed by a `#line` directive so diagnostics keep the user's line numbers.
    pub fn expand(&self, set: OptionSet) -> Result<String> {
        let (head, rest, next_line) = split_after_version(&self.name, &self.text)?;
        let preamble = extension::preamble(set);
        let mut out = String::with_capacity(self.text.len() + preamble.len() + 32);
        out.push_str(head);
        if !head.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&preamble);
        out.push_str(&format!("#line {next_line}\n"));
        out.push_str(rest);
        Ok(out)
    }
}

/// Decodes source bytes: UTF-8, an optional byte-order mark dropped.
pub(crate) fn decode(name: &str, bytes: &[u8]) -> Result<String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    String::from_utf8(bytes.to_vec()).map_err(|e| Error::BadSource {
        file: name.to_string(),
        problem: format!("not valid UTF-8 (at byte {})", e.utf8_error().valid_up_to()),
    })
}

/// Rejects text that shaderc cannot take: it passes sources to C as NUL-terminated strings.
pub(crate) fn check_text(name: &str, text: &str) -> Result<()> {
    match text.find('\0') {
        Some(at) => Err(Error::BadSource {
            file: name.to_string(),
            problem: format!("contains a NUL byte at offset {at}"),
        }),
        None => Ok(()),
    }
}

/// Splits `text` just after its `#version` line. Returns the head (through the version line and its
/// newline), the rest, and the 1-based number of the first line of the rest.
///
/// Only blank lines and comments may precede `#version`; the whole line is kept intact, so forms
/// like `#version 450 core` survive.
fn split_after_version<'a>(name: &str, text: &'a str) -> Result<(&'a str, &'a str, usize)> {
    let missing = || Error::MissingVersion {
        file: name.to_string(),
    };
    let mut in_block_comment = false;
    let mut offset = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let end = offset + line.len();
        let mut rest = line.trim();
        loop {
            if in_block_comment {
                match rest.find("*/") {
                    Some(at) => {
                        rest = rest[at + 2..].trim_start();
                        in_block_comment = false;
                    }
                    None => break,
                }
            } else if let Some(after) = rest.strip_prefix("/*") {
                rest = after;
                in_block_comment = true;
            } else {
                break;
            }
        }
        if in_block_comment || rest.is_empty() || rest.starts_with("//") {
            offset = end;
            continue;
        }
        let directive = rest.strip_prefix('#').map(str::trim_start);
        return match directive {
            Some(d) if d.starts_with("version") => Ok((&text[..end], &text[end..], index + 2)),
            _ => Err(missing()),
        };
    }
    Err(missing())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_version_core_line_whole() {
        let (head, rest, next) =
            split_after_version("x", "// c\n/* a\n b */\n#version 450 core\nvoid main(){}\n")
                .unwrap();
        assert_eq!(head, "// c\n/* a\n b */\n#version 450 core\n");
        assert_eq!(rest, "void main(){}\n");
        assert_eq!(next, 5);
    }

    #[test]
    fn missing_version_is_an_error() {
        assert!(matches!(
            split_after_version("x", "void main(){}\n#version 450\n"),
            Err(Error::MissingVersion { .. })
        ));
        assert!(matches!(
            split_after_version("x", ""),
            Err(Error::MissingVersion { .. })
        ));
    }

    #[test]
    fn version_without_trailing_newline() {
        let (head, rest, next) = split_after_version("x", "#version 450").unwrap();
        assert_eq!((head, rest, next), ("#version 450", "", 2));
    }

    #[test]
    fn bytes_must_be_utf8_without_nul() {
        assert!(matches!(
            Source::from_bytes("x", b"#version 450\n\xff"),
            Err(Error::BadSource { .. })
        ));
        assert!(matches!(
            Source::from_bytes("x", b"#version 450\n\0"),
            Err(Error::BadSource { .. })
        ));
        assert!(Source::from_bytes("x", b"\xEF\xBB\xBF#version 450\n").is_ok());
    }
}
