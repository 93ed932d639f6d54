//! The ncnn GLSL extension as a preprocessor preamble.
//!
//! For a canonical [`OptionSet`] this module produces the `#extension` lines and `#define`s that turn
//! `sfp*`/`afp*`/`lfp*`, `imfmtc*`/`unfp`, the `buffer_*`/`image*d_*` functions, the local-memory
//! conversions and `psc()` into plain GLSL for that option set. The preamble holds only
//! preprocessor lines, so a shader's own `#extension` lines that follow it stay legal.
//!
//! Every macro argument is parenthesized where it is used, so expressions may be passed
//! (`buffer_st4(out, gi, v * 2.0)`), unlike ncnn's expansion which breaks on them.
//!
//! Corrections made on top of the expansion ncnn shipped (FACTS §1):
//! - `sfpvec8` with fp16 storage is a `uvec4` of packed pairs (the same 16 bytes as eight
//!   `float16_t`), as with fp16 packed: a whole `f16mat2x4`/`f16vec4[2]` element is read as two
//!   8-byte accesses, which ran at 2.7 TB/s on an H200 where 16-byte accesses ran at 3.97 TB/s
//!   (`bench/fp16_access.rs`); ncnn's `f16mat2x4` is not even legal with 16-bit storage alone.
//!   Shaders that compile with fp16 packed treat `sfpvec8` opaquely, so they compile here too.
//!   Even with fp16 arithmetic it is unpacked with `unpackHalf2x16` (exact, and naga reads it).
//! - `sfpmat4` with fp16 storage but fp32 arithmetic is `uvec4[2]` of packed pairs (same bytes),
//!   because 16-bit storage alone can neither construct nor assign arrays of `float16_t`.
//! - `lfpvec4` with fp16 storage+arithmetic (no fp16 uniform) is a `uint64_t`; the int16/int64
//!   arithmetic extensions it needs are enabled.
//! - the image format for one channel is `imfmtc1` (`r32f`/`r16f`); the seed's `imfmt1`/`imfmt4`
//!   spellings are accepted as aliases, and its "f32f" is `r32f`.
//! - image loads are texel fetches at integer coordinates (`int`, `ivec2`, `ivec3`), as real
//!   shaders use them; pack8 through images uses two texels along x.
//!
//! `functions` holds the function macros (buffer, image, local memory, matrices and the packed
//! copies between them); this file the types, extensions and option macros.

mod functions;

use functions::{buffer_functions, image_functions, local_functions, matrix_functions};

use crate::options::{FloatClass, Opt, OptionSet, Storage};

/// `#extension` name for 16-bit storage.
const EXT_16BIT_STORAGE: &str = "GL_EXT_shader_16bit_storage";
/// `#extension` name for fp16 arithmetic (also `packFloat2x16`/`unpackFloat2x16`).
const EXT_FP16_ARITH: &str = "GL_EXT_shader_explicit_arithmetic_types_float16";
const EXT_INT16_ARITH: &str = "GL_EXT_shader_explicit_arithmetic_types_int16";
const EXT_INT64_ARITH: &str = "GL_EXT_shader_explicit_arithmetic_types_int64";
const EXT_8BIT_STORAGE: &str = "GL_EXT_shader_8bit_storage";
const EXT_INT8_ARITH: &str = "GL_EXT_shader_explicit_arithmetic_types_int8";

/// The preamble for a canonical option set: `#extension` lines, then `#define`s, one per line.
pub fn preamble(set: OptionSet) -> String {
    let class = set.float_class();
    let mut p = Preamble::default();
    extensions(&mut p, set, class);
    option_macros(&mut p, set);
    storage_types(&mut p, class);
    arithmetic_types(&mut p, class);
    local_types(&mut p, class);
    image_types(&mut p, class);
    buffer_functions(&mut p, class);
    image_functions(&mut p, class);
    local_functions(&mut p, class);
    matrix_functions(&mut p, class);
    p.define("psc(x)", "((x)==0?p.x:(x))");
    p.text
}

/// The names the preamble defines (types, function-like macros and option macros), without
/// parameter lists. Lets tests and tools check that every documented name is provided.
pub fn defined_names(set: OptionSet) -> Vec<String> {
    preamble(set)
        .lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .map(|l| {
            let end = l.find(['(', ' ']).unwrap_or(l.len());
            l[..end].to_string()
        })
        .collect()
}

#[derive(Default)]
struct Preamble {
    text: String,
}

impl Preamble {
    fn extension(&mut self, name: &str) {
        self.text
            .push_str(&format!("#extension {name} : require\n"));
    }

    fn define(&mut self, name: &str, body: &str) {
        self.text.push_str(&format!("#define {name} {body}\n"));
    }
}

fn extensions(p: &mut Preamble, set: OptionSet, class: FloatClass) {
    if class.storage == Storage::Fp16 {
        p.extension(EXT_16BIT_STORAGE);
    }
    if class.arithmetic {
        p.extension(EXT_FP16_ARITH);
    }
    if lfpvec4_is_u64(class) {
        p.extension(EXT_INT16_ARITH);
        p.extension(EXT_INT64_ARITH);
    }
    if set.contains(Opt::Int8Storage) {
        p.extension(EXT_8BIT_STORAGE);
    }
    if set.contains(Opt::Int8Arithmetic) {
        p.extension(EXT_INT8_ARITH);
    }
}

fn option_macros(p: &mut Preamble, set: OptionSet) {
    for opt in set.iter() {
        if let Some(name) = opt.macro_name() {
            p.define(name, "1");
        }
    }
}

fn lfpvec4_is_u64(class: FloatClass) -> bool {
    class.storage == Storage::Fp16 && class.arithmetic && !class.uniform
}

/// The four arithmetic type names for a class: scalar, vec2, vec4, mat2x4 (pack8), mat4.
struct ArithNames {
    scalar: &'static str,
    vec2: &'static str,
    vec4: &'static str,
    mat2x4: &'static str,
    mat4: &'static str,
}

fn arith(class: FloatClass) -> ArithNames {
    if class.arithmetic {
        ArithNames {
            scalar: "float16_t",
            vec2: "f16vec2",
            vec4: "f16vec4",
            mat2x4: "f16mat2x4",
            mat4: "f16mat4",
        }
    } else {
        ArithNames {
            scalar: "float",
            vec2: "vec2",
            vec4: "vec4",
            mat2x4: "mat2x4",
            mat4: "mat4",
        }
    }
}

fn storage_types(p: &mut Preamble, class: FloatClass) {
    let [sfp, v2, v4, v8, m4] = match class.storage {
        Storage::Fp32 => ["float", "vec2", "vec4", "mat2x4", "mat4"],
        Storage::Fp16Packed => ["float", "uint", "uvec2", "uvec4", "uvec4[2]"],
        Storage::Fp16 if class.arithmetic => {
            ["float16_t", "f16vec2", "f16vec4", "uvec4", "f16mat4"]
        }
        Storage::Fp16 => ["float16_t", "f16vec2", "f16vec4", "uvec4", "uvec4[2]"],
    };
    p.define("sfp", sfp);
    p.define("sfpvec2", v2);
    p.define("sfpvec4", v4);
    p.define("sfpvec8", v8);
    p.define("sfpmat4", m4);
}

fn arithmetic_types(p: &mut Preamble, class: FloatClass) {
    let a = arith(class);
    p.define("afp", a.scalar);
    p.define("afpvec2", a.vec2);
    p.define("afpvec4", a.vec4);
    p.define("afpvec8", a.mat2x4);
    p.define("afpmat4", a.mat4);
}

fn local_types(p: &mut Preamble, class: FloatClass) {
    let (lfp, lfpvec4) = match class.storage {
        Storage::Fp16 if class.uniform => ("float16_t", "f16vec4"),
        Storage::Fp16 if class.arithmetic => ("float", "uint64_t"),
        Storage::Fp16 | Storage::Fp16Packed => ("float", "uvec2"),
        Storage::Fp32 => ("float", "vec4"),
    };
    p.define("lfp", lfp);
    p.define("lfpvec4", lfpvec4);
}

fn image_types(p: &mut Preamble, class: FloatClass) {
    let (c1, c4, unfp) = match class.storage {
        Storage::Fp32 => ("r32f", "rgba32f", "highp"),
        Storage::Fp16Packed => ("r32f", "rgba16f", "mediump"),
        Storage::Fp16 => ("r16f", "rgba16f", "mediump"),
    };
    p.define("imfmtc1", c1);
    p.define("imfmtc4", c4);
    p.define("imfmt1", c1);
    p.define("imfmt4", c4);
    p.define("unfp", unfp);
}
