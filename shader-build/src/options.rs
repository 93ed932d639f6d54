//! Option flags that select how the ncnn GLSL extension expands, and their canonical sets.
//!
//! The flags mirror ncnn's `Option` fields (`use_fp16_packed`, `use_fp16_storage`, …). A set is
//! *canonical* once redundant flags are dropped the way ncnn resolves them: fp16 storage wins over
//! fp16 packed, int8 storage over int8 packed, and the "uniform" flags only matter together with
//! storage and arithmetic. Two sets that canonicalize alike expand identically.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// An option name or option set that cannot be.
#[derive(Debug, thiserror::Error)]
pub enum OptionError {
    /// An option name that does not exist.
    #[error("unknown option `{name}`; valid options are: {valid}")]
    UnknownOption {
        /// The name as given.
        name: String,
        /// The valid names, comma separated.
        valid: String,
    },
    /// A set of options that no device configuration can mean.
    #[error("invalid option combination `{set}`: {reason}")]
    InvalidCombination {
        /// The set as given.
        set: String,
        /// Why it is impossible.
        reason: String,
    },
}

/// One option flag, named as on the command line and in `shader!`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub enum Opt {
    /// `fp16p`: fp16 values packed two to a `uint` (`packHalf2x16`), ncnn `use_fp16_packed`.
    Fp16Packed,
    /// `fp16s`: 16-bit storage buffers (`float16_t`), ncnn `use_fp16_storage`.
    Fp16Storage,
    /// `fp16a`: fp16 arithmetic (`afp*` become `float16_t`), ncnn `use_fp16_arithmetic`.
    Fp16Arithmetic,
    /// `fp16u`: fp16 in shared memory (`lfp*` become `float16_t`), ncnn `use_fp16_uniform`.
    Fp16Uniform,
    /// `int8p`: int8 values packed four to an `int`, ncnn `use_int8_packed`.
    Int8Packed,
    /// `int8s`: 8-bit storage buffers (`int8_t`), ncnn `use_int8_storage`.
    Int8Storage,
    /// `int8a`: int8 arithmetic, ncnn `use_int8_arithmetic`.
    Int8Arithmetic,
    /// `int8u`: int8 in shared memory, ncnn `use_int8_uniform`.
    Int8Uniform,
    /// `image`: tensors live in images instead of buffers, ncnn `use_image_storage`.
    Image,
    /// `lmem`: shaders may use the shared-local-memory code path, ncnn `use_shader_local_memory`.
    LocalMemory,
    /// `moltenvk`: target platform is MoltenVK (macOS/iOS), for platform workarounds.
    MoltenVk,
}

impl Opt {
    /// Every flag, in canonical order.
    pub const ALL: [Opt; 11] = [
        Opt::Fp16Packed,
        Opt::Fp16Storage,
        Opt::Fp16Arithmetic,
        Opt::Fp16Uniform,
        Opt::Int8Packed,
        Opt::Int8Storage,
        Opt::Int8Arithmetic,
        Opt::Int8Uniform,
        Opt::Image,
        Opt::LocalMemory,
        Opt::MoltenVk,
    ];

    /// The short name used in option lists (`fp16s`, `image`, …).
    pub const fn name(self) -> &'static str {
        match self {
            Opt::Fp16Packed => "fp16p",
            Opt::Fp16Storage => "fp16s",
            Opt::Fp16Arithmetic => "fp16a",
            Opt::Fp16Uniform => "fp16u",
            Opt::Int8Packed => "int8p",
            Opt::Int8Storage => "int8s",
            Opt::Int8Arithmetic => "int8a",
            Opt::Int8Uniform => "int8u",
            Opt::Image => "image",
            Opt::LocalMemory => "lmem",
            Opt::MoltenVk => "moltenvk",
        }
    }

    /// The preprocessor macro this flag defines in the shader, if any.
    ///
    /// The uniform flags define none: the seed documents no macro for them, they only change `lfp*`.
    pub const fn macro_name(self) -> Option<&'static str> {
        match self {
            Opt::Fp16Packed => Some("NCNN_fp16_packed"),
            Opt::Fp16Storage => Some("NCNN_fp16_storage"),
            Opt::Fp16Arithmetic => Some("NCNN_fp16_arithmetic"),
            Opt::Int8Packed => Some("NCNN_int8_packed"),
            Opt::Int8Storage => Some("NCNN_int8_storage"),
            Opt::Int8Arithmetic => Some("NCNN_int8_arithmetic"),
            Opt::Image => Some("NCNN_image_shader"),
            Opt::LocalMemory => Some("NCNN_shader_local_memory"),
            Opt::MoltenVk => Some("NCNN_moltenvk"),
            Opt::Fp16Uniform | Opt::Int8Uniform => None,
        }
    }

    /// The valid names, comma separated, for error messages.
    pub fn valid_names() -> String {
        Opt::ALL.map(Opt::name).join(", ")
    }

    const fn bit(self) -> u16 {
        1 << self as u16
    }
}

impl fmt::Display for Opt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Opt {
    type Err = OptionError;

    fn from_str(s: &str) -> Result<Self, OptionError> {
        let s = s.trim();
        Opt::ALL
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| OptionError::UnknownOption {
                name: s.to_string(),
                valid: Opt::valid_names(),
            })
    }
}

impl From<Opt> for &'static str {
    fn from(o: Opt) -> Self {
        o.name()
    }
}

impl TryFrom<String> for Opt {
    type Error = OptionError;

    fn try_from(s: String) -> Result<Self, OptionError> {
        s.parse()
    }
}

/// How storage-buffer floats are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Storage {
    /// Plain `float`.
    Fp32,
    /// fp16 pairs packed into `uint` words.
    Fp16Packed,
    /// Native `float16_t` through 16-bit storage.
    Fp16,
}

/// The six float classes that expand differently (ncnn's analysis: these are all that matter).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FloatClass {
    /// Storage layout of `sfp*`.
    pub storage: Storage,
    /// Whether `afp*` are fp16.
    pub arithmetic: bool,
    /// Whether `lfp*` are fp16 (only with fp16 storage and arithmetic).
    pub uniform: bool,
}

impl FloatClass {
    /// The class's short name: `fp32`, `fp16p`, `fp16pa`, `fp16s`, `fp16sa` or `fp16sau`.
    pub fn name(self) -> &'static str {
        match (self.storage, self.arithmetic, self.uniform) {
            (Storage::Fp32, _, _) => "fp32",
            (Storage::Fp16Packed, false, _) => "fp16p",
            (Storage::Fp16Packed, true, _) => "fp16pa",
            (Storage::Fp16, false, _) => "fp16s",
            (Storage::Fp16, true, false) => "fp16sa",
            (Storage::Fp16, true, true) => "fp16sau",
        }
    }
}

/// A set of [`Opt`] flags. Build one with [`OptionSet::parse`] or [`OptionSet::from_opts`], then
/// [`canonicalize`](OptionSet::canonicalize) it before expanding. Serialized as a list of names.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OptionSet(u16);

impl Serialize for OptionSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for OptionSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let opts = Vec::<Opt>::deserialize(d)?;
        Ok(OptionSet::from_opts(&opts))
    }
}

impl OptionSet {
    /// The empty set: plain fp32 buffers.
    pub const FP32: OptionSet = OptionSet(0);

    /// The set with these raw bits (one per [`Opt`], in [`Opt::ALL`] order); unknown bits are
    /// dropped. Generated code uses this to build sets in `static`s.
    pub const fn from_bits(bits: u16) -> Self {
        OptionSet(bits & ((1 << Opt::ALL.len()) - 1))
    }

    /// The raw bits.
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// A set holding exactly `opts` (not canonicalized).
    pub fn from_opts(opts: &[Opt]) -> Self {
        OptionSet(opts.iter().fold(0, |acc, o| acc | o.bit()))
    }

    /// Parses a comma- or space-separated list of option names (`"fp16s,fp16a"`); the empty string
    /// and `fp32` mean the empty set. The result is not canonicalized.
    pub fn parse(list: &str) -> Result<Self, OptionError> {
        let mut set = OptionSet::FP32;
        for name in list.split([',', ' ', '+']).filter(|s| !s.trim().is_empty()) {
            if name.trim() == "fp32" {
                continue;
            }
            set = set.with(name.parse()?);
        }
        Ok(set)
    }

    /// Whether `opt` is in the set.
    pub const fn contains(self, opt: Opt) -> bool {
        self.0 & opt.bit() != 0
    }

    /// The set with `opt` added.
    #[must_use]
    pub const fn with(self, opt: Opt) -> Self {
        OptionSet(self.0 | opt.bit())
    }

    /// The set with `opt` removed.
    #[must_use]
    pub const fn without(self, opt: Opt) -> Self {
        OptionSet(self.0 & !opt.bit())
    }

    /// Number of flags in the set.
    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether the set is empty (plain fp32).
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether every flag of `self` is also in `other`.
    pub const fn is_subset_of(self, other: OptionSet) -> bool {
        self.0 & !other.0 == 0
    }

    /// The flags, in canonical order.
    pub fn iter(self) -> impl Iterator<Item = Opt> {
        Opt::ALL.into_iter().filter(move |o| self.contains(*o))
    }

    /// Resolves the set the way ncnn resolves its options, or explains why it is impossible.
    ///
    /// - fp16 storage wins over fp16 packed (and int8 storage over int8 packed);
    /// - fp16 arithmetic needs fp16 packed or storage (and int8 arithmetic int8 packed or storage):
    ///   without either, fp16 values could never reach a buffer, so the set is an error;
    /// - `fp16u` only changes anything with fp16 storage and arithmetic, elsewhere it is dropped
    ///   (likewise `int8u`).
    pub fn canonicalize(self) -> Result<OptionSet, OptionError> {
        let mut set = self;
        for (packed, storage, arith, uniform) in [
            (
                Opt::Fp16Packed,
                Opt::Fp16Storage,
                Opt::Fp16Arithmetic,
                Opt::Fp16Uniform,
            ),
            (
                Opt::Int8Packed,
                Opt::Int8Storage,
                Opt::Int8Arithmetic,
                Opt::Int8Uniform,
            ),
        ] {
            if set.contains(storage) {
                set = set.without(packed);
            }
            if set.contains(arith) && !set.contains(packed) && !set.contains(storage) {
                return Err(OptionError::InvalidCombination {
                    set: self.to_string(),
                    reason: format!(
                        "{arith} needs {packed} or {storage}: arithmetic in reduced precision \
                         needs a reduced-precision storage layout"
                    ),
                });
            }
            if !(set.contains(storage) && set.contains(arith)) {
                set = set.without(uniform);
            }
        }
        Ok(set)
    }

    /// The float class a canonical set expands to.
    pub fn float_class(self) -> FloatClass {
        let storage = if self.contains(Opt::Fp16Storage) {
            Storage::Fp16
        } else if self.contains(Opt::Fp16Packed) {
            Storage::Fp16Packed
        } else {
            Storage::Fp32
        };
        let arithmetic = storage != Storage::Fp32 && self.contains(Opt::Fp16Arithmetic);
        FloatClass {
            storage,
            arithmetic,
            uniform: storage == Storage::Fp16 && arithmetic && self.contains(Opt::Fp16Uniform),
        }
    }

    /// Every distinct canonical set that can be built from `supported` (the empty fp32 set always
    /// comes first), ordered so that sets needing fewer device features come first.
    pub fn enumerate(supported: OptionSet) -> Vec<OptionSet> {
        let flags: Vec<Opt> = supported.iter().collect();
        let mut sets: Vec<OptionSet> = (0u32..1 << flags.len())
            .filter_map(|mask| {
                let picked: Vec<Opt> = flags
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| mask & (1 << i) != 0)
                    .map(|(_, o)| *o)
                    .collect();
                OptionSet::from_opts(&picked).canonicalize().ok()
            })
            .collect();
        sets.sort_by_key(|s| (s.len(), s.0));
        sets.dedup();
        sets
    }

    /// A stable, human-readable name: the float class, then the int8 class and other flags, joined
    /// by `-` (`fp32`, `fp16sa-image-lmem`, `fp16s-int8sa`). Only meaningful for canonical sets.
    pub fn name(self) -> String {
        let mut parts = vec![self.float_class().name().to_string()];
        let int8 = [
            (Opt::Int8Storage, "s"),
            (Opt::Int8Packed, "p"),
            (Opt::Int8Arithmetic, "a"),
            (Opt::Int8Uniform, "u"),
        ]
        .iter()
        .filter(|(o, _)| self.contains(*o))
        .map(|(_, s)| *s)
        .collect::<String>();
        if !int8.is_empty() {
            parts.push(format!("int8{int8}"));
        }
        for opt in [Opt::Image, Opt::LocalMemory, Opt::MoltenVk] {
            if self.contains(opt) {
                parts.push(opt.name().to_string());
            }
        }
        parts.join("-")
    }
}

impl fmt::Display for OptionSet {
    /// The flags as a comma-separated list, or `fp32` for the empty set.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("fp32");
        }
        let names: Vec<&str> = self.iter().map(Opt::name).collect();
        f.write_str(&names.join(","))
    }
}

impl fmt::Debug for OptionSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OptionSet({self})")
    }
}

impl FromStr for OptionSet {
    type Err = OptionError;

    fn from_str(s: &str) -> Result<Self, OptionError> {
        OptionSet::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(s: &str) -> OptionSet {
        OptionSet::parse(s).unwrap()
    }

    #[test]
    fn storage_wins_over_packed() {
        assert_eq!(set("fp16p,fp16s").canonicalize().unwrap(), set("fp16s"));
        assert_eq!(set("int8p,int8s").canonicalize().unwrap(), set("int8s"));
    }

    #[test]
    fn uniform_only_with_storage_and_arithmetic() {
        assert_eq!(set("fp16s,fp16u").canonicalize().unwrap(), set("fp16s"));
        assert_eq!(
            set("fp16p,fp16a,fp16u").canonicalize().unwrap(),
            set("fp16p,fp16a")
        );
        assert_eq!(
            set("fp16s,fp16a,fp16u").canonicalize().unwrap(),
            set("fp16s,fp16a,fp16u")
        );
    }

    #[test]
    fn arithmetic_alone_is_an_error() {
        let err = set("fp16a").canonicalize().unwrap_err();
        assert!(
            matches!(err, OptionError::InvalidCombination { .. }),
            "{err}"
        );
        assert!(set("int8a,image").canonicalize().is_err());
    }

    #[test]
    fn unknown_option_lists_valid_names() {
        let err = OptionSet::parse("fp16s,fp61a").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("fp61a") && msg.contains("fp16a") && msg.contains("lmem"),
            "{msg}"
        );
    }

    #[test]
    fn float_classes_enumerate_to_six() {
        let all = OptionSet::enumerate(set("fp16p,fp16s,fp16a,fp16u"));
        let names: Vec<String> = all.iter().map(|s| s.name()).collect();
        assert_eq!(
            names,
            ["fp32", "fp16p", "fp16s", "fp16pa", "fp16sa", "fp16sau"]
        );
        let with_image_lmem = OptionSet::enumerate(set("fp16p,fp16s,fp16a,fp16u,image,lmem"));
        assert_eq!(with_image_lmem.len(), 24);
        assert_eq!(with_image_lmem[0], OptionSet::FP32);
    }

    #[test]
    fn names_are_stable() {
        assert_eq!(set("lmem,fp16a,fp16s,image").name(), "fp16sa-image-lmem");
        assert_eq!(set("int8s,int8a").name(), "fp32-int8sa");
        assert_eq!(set("").to_string(), "fp32");
    }
}
