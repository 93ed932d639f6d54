//! Every meaningful option permutation of one shader, deduplicated and compiled in parallel.
//!
//! Deduplication compares the *preprocessed* text of each variant (macros applied, includes
//! inlined, `#extension` lines left out), which is exact: two variants whose preprocessed bodies
//! match compile to the same program. The variant needing the fewest options is compiled on behalf
//! of its group, so its SPIR-V also asks the device for the fewest features.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use sha2::{Digest, Sha256};

use crate::cache::{Cache, hex};
use crate::compile::Compiler;
use crate::error::Result;
use crate::options::OptionSet;
use crate::source::Source;
use crate::words_as_bytes;

/// One compiled, deduplicated SPIR-V module.
#[derive(Clone, Debug)]
pub struct Blob {
    /// The SPIR-V words.
    pub words: Vec<u32>,
    /// SHA-256 of the SPIR-V bytes, lowercase hex.
    pub hash: String,
    /// The option set that was compiled for this blob (the smallest of those sharing it).
    pub compiled_for: OptionSet,
}

/// One option set and the blob that serves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The canonical option set.
    pub options: OptionSet,
    /// Index into [`VariantSet::blobs`].
    pub blob: usize,
}

/// All variants of one shader.
#[derive(Clone, Debug)]
pub struct VariantSet {
    /// The shader's name.
    pub name: String,
    /// The options the shader declared it supports.
    pub supported: OptionSet,
    /// Every canonical option set, fewest options first (fp32 first).
    pub variants: Vec<Variant>,
    /// The unique blobs.
    pub blobs: Vec<Blob>,
    /// Every include file any variant pulled in.
    pub includes: Vec<PathBuf>,
    /// Blobs taken from the cache.
    pub cache_hits: usize,
    /// Blobs compiled (and stored in the cache, if there is one).
    pub cache_misses: usize,
}

impl VariantSet {
    /// The SPIR-V for `set` (canonicalized), if that set was compiled.
    pub fn get(&self, set: OptionSet) -> Option<&Blob> {
        let set = set.canonicalize().ok()?;
        self.variants
            .iter()
            .find(|v| v.options == set)
            .map(|v| &self.blobs[v.blob])
    }
}

impl Blob {
    /// A blob for `words`, compiled for `compiled_for`; computes the hash.
    pub fn new(words: Vec<u32>, compiled_for: OptionSet) -> Self {
        let hash = hex(&Sha256::digest(words_as_bytes(&words)));
        Blob {
            words,
            hash,
            compiled_for,
        }
    }
}

impl Compiler {
    /// Compiles `source` for the single option set `set`, shaped like [`compile_variants`]'s result.
    ///
    /// [`compile_variants`]: Compiler::compile_variants
    pub fn compile_single(&self, source: &Source, set: OptionSet) -> Result<VariantSet> {
        let set = set.canonicalize()?;
        let compiled = self.compile(source, set)?;
        Ok(VariantSet {
            name: source.name.clone(),
            supported: set,
            variants: vec![Variant {
                options: set,
                blob: 0,
            }],
            blobs: vec![Blob::new(compiled.words, set)],
            includes: compiled.includes,
            cache_hits: 0,
            cache_misses: 1,
        })
    }

    /// Compiles `source` for every valid option set that can be built from `supported` (fp32
    /// always), compiling each distinct preprocessed text once, in parallel across cores.
    /// Errors are reported for the first failing variant in enumeration order.
    pub fn compile_variants(&self, source: &Source, supported: OptionSet) -> Result<VariantSet> {
        let sets = OptionSet::enumerate(supported);

        let preprocessed = parallel_map(&sets, |set| self.preprocess(source, *set))?;

        let mut groups: HashMap<[u8; 32], usize> = HashMap::new();
        // (option set, its preprocessed text) for the first set of each group
        let mut representatives: Vec<(OptionSet, String)> = Vec::new();
        let mut variants = Vec::with_capacity(sets.len());
        let mut includes: Vec<PathBuf> = Vec::new();
        for (set, pre) in sets.iter().zip(preprocessed) {
            let blob = *groups.entry(dedupe_key(&pre.text)).or_insert_with(|| {
                representatives.push((*set, pre.text));
                representatives.len() - 1
            });
            variants.push(Variant {
                options: *set,
                blob,
            });
            for inc in pre.includes {
                if !includes.contains(&inc) {
                    includes.push(inc);
                }
            }
        }

        let hits = AtomicUsize::new(0);
        let blobs = parallel_map(&representatives, |(set, text)| {
            let cached = self.cache().map(|cache| {
                let key = Cache::key(text, self.settings());
                let hit = cache.get(&key, &format!("{} {}", source.name, set.name()));
                (cache, key, hit)
            });
            let words = match cached {
                Some((_, _, Some(words))) => {
                    hits.fetch_add(1, Ordering::Relaxed);
                    words
                }
                Some((cache, key, None)) => {
                    let words = self.compile(source, *set)?.words;
                    cache.put(&key, &words);
                    words
                }
                None => self.compile(source, *set)?.words,
            };
            Ok(Blob::new(words, *set))
        })?;
        let cache_hits = hits.into_inner();

        Ok(VariantSet {
            name: source.name.clone(),
            supported,
            variants,
            cache_misses: blobs.len() - cache_hits,
            blobs,
            includes,
            cache_hits,
        })
    }
}

/// Hash of preprocessed text with `#extension` and `#line` lines dropped: they never change what a
/// program that compiles computes.
fn dedupe_key(preprocessed: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    for line in preprocessed.lines() {
        let t = line.trim_start();
        if t.starts_with("#extension") || t.starts_with("#line") || t.is_empty() {
            continue;
        }
        h.update(line.as_bytes());
        h.update(b"\n");
    }
    h.finalize().into()
}

/// Runs `f` over `items` on up to one thread per core; results keep the items' order, and the
/// first error in item order is returned.
fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut results: Vec<(usize, Result<R>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        out.push((i, f(item)));
                    }
                    out
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| match w.join() {
                Ok(out) => out,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}
