//! Content-addressed on-disk cache of compiled SPIR-V, shared by build scripts and the macro.
//!
//! The key hashes the preprocessed text of the variant that is compiled (which inlines every
//! include and applies every macro, user defines included), the compiler version, the target env
//! and the optimization level. Entries are written to a temporary file and renamed into place, so
//! several rustc or build-script processes may fill the cache at once.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use crate::settings::Settings;

/// Environment variable that overrides the cache folder.
pub const CACHE_DIR_ENV: &str = "FPSHADER_CACHE_DIR";
/// Environment variable that, set to `1`, logs cache hits and misses to standard error.
pub const LOG_ENV: &str = "FPSHADER_LOG";

/// Bumped whenever the key's meaning or the entry format changes.
const FORMAT: &str = "fpshader-cache-1";

/// An on-disk blob cache.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
    log: bool,
}

impl Cache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Cache {
            dir: dir.into(),
            log: std::env::var(LOG_ENV).is_ok_and(|v| v == "1"),
        }
    }

    /// `$FPSHADER_CACHE_DIR` if set, else `default_dir`.
    pub fn from_env(default_dir: impl Into<PathBuf>) -> Self {
        match std::env::var_os(CACHE_DIR_ENV) {
            Some(dir) if !dir.is_empty() => Cache::new(PathBuf::from(dir)),
            _ => Cache::new(default_dir),
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of `preprocessed` text compiled with `settings`.
    pub fn key(preprocessed: &str, settings: &Settings) -> String {
        let mut h = Sha256::new();
        for part in [
            FORMAT,
            env!("CARGO_PKG_VERSION"),
            COMPILER,
            settings.target_env.name(),
            settings.optimization.flag(),
        ] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        h.update(preprocessed.as_bytes());
        hex(&h.finalize())
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir
            .join(&key[..2.min(key.len())])
            .join(format!("{key}.spv"))
    }

    /// The cached words for `key`, if present and well-formed; `what` names it in the log.
    pub fn get(&self, key: &str, what: &str) -> Option<Vec<u32>> {
        let words = std::fs::read(self.path(key)).ok().and_then(|bytes| {
            let words = crate::meta::le_words(&bytes).filter(|w| w.len() >= 5)?;
            (words[0] == 0x0723_0203).then_some(words)
        });
        if self.log {
            let verdict = if words.is_some() { "hit" } else { "miss" };
            eprintln!("fpshader: cache {verdict} {what} {key}");
        }
        words
    }

    /// Stores `words` under `key`. Failures are not fatal (the blob was compiled anyway), so they
    /// are only logged.
    pub fn put(&self, key: &str, words: &[u32]) {
        if let (Err(e), true) = (self.try_put(key, words), self.log) {
            eprintln!("fpshader: cannot write cache entry {key}: {e}");
        }
    }

    fn try_put(&self, key: &str, words: &[u32]) -> std::io::Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let path = self.path(key);
        let dir = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(
            ".{key}.{}.{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&tmp, crate::words_as_bytes(words))?;
        std::fs::rename(&tmp, &path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

/// The compiler behind the blobs: shaderc's crate line and the SPIR-V version it reports.
const COMPILER: &str = "shaderc-0.10";

/// The cargo target dir at or above `path`: the nearest ancestor holding cargo's `CACHEDIR.TAG`.
pub fn target_dir_above(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
}

/// The default cache folder for a crate whose manifest is in `manifest_dir` when no `OUT_DIR` is
/// known (the proc-macro): `fpshader-cache` in `$CARGO_TARGET_DIR`, else in the `target/` of the
/// nearest ancestor that has one, else in the system temp dir.
pub fn default_dir_for_manifest(manifest_dir: &Path) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .filter(|d| !d.is_empty())
        .map(|d| {
            let d = PathBuf::from(d);
            if d.is_absolute() {
                d
            } else {
                manifest_dir.join(d)
            }
        })
        .or_else(|| {
            manifest_dir
                .ancestors()
                .map(|dir| dir.join("target"))
                .find(|t| t.join("CACHEDIR.TAG").is_file())
        })
        .unwrap_or_else(std::env::temp_dir);
    target.join("fpshader-cache")
}

/// Lowercase hex of `bytes` (the cache's keys, and variant hashes).
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
