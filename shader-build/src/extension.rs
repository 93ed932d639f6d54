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
//!   (`examples/fp16_access.rs`); ncnn's `f16mat2x4` is not even legal with 16-bit storage alone.
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

/// Unpacks a packed fp16 pair (a `uint` expression) into the arithmetic vec2 type.
fn unpack2(class: FloatClass, x: &str) -> String {
    if class.arithmetic {
        format!("unpackFloat2x16({x})")
    } else {
        format!("unpackHalf2x16({x})")
    }
}

/// Packs an arithmetic vec2 expression into a `uint`.
fn pack2(class: FloatClass, x: &str) -> String {
    if class.arithmetic {
        format!("packFloat2x16({x})")
    } else {
        format!("packHalf2x16({x})")
    }
}

fn buffer_functions(p: &mut Preamble, class: FloatClass) {
    let a = arith(class);
    let ident = |x: &str| x.to_string();
    // How a value read from storage becomes arithmetic, per width; and back.
    match class.storage {
        Storage::Fp32 | Storage::Fp16Packed => {
            // The scalar storage type is `float` in both.
            let conv = |t: &str, x: &str| {
                if class.arithmetic {
                    format!("{t}({x})")
                } else {
                    x.to_string()
                }
            };
            p.define("buffer_ld1(buf,i)", &conv(a.scalar, "buf[i]"));
            p.define("buffer_st1(buf,i,v)", "{buf[i]=float(v);}");
        }
        Storage::Fp16 => {
            let load = if class.arithmetic {
                ident("buf[i]")
            } else {
                "float(buf[i])".into()
            };
            p.define("buffer_ld1(buf,i)", &load);
            p.define("buffer_st1(buf,i,v)", "{buf[i]=float16_t(v);}");
        }
    }
    match class.storage {
        Storage::Fp32 => {
            let conv = |t: &str| {
                if class.arithmetic {
                    format!("{t}(buf[i])")
                } else {
                    "buf[i]".to_string()
                }
            };
            p.define("buffer_ld2(buf,i)", &conv(a.vec2));
            p.define("buffer_ld4(buf,i)", &conv(a.vec4));
            p.define("buffer_ld8(buf,i)", &conv(a.mat2x4));
            p.define("buffer_st2(buf,i,v)", "{buf[i]=vec2(v);}");
            p.define("buffer_st4(buf,i,v)", "{buf[i]=vec4(v);}");
            p.define("buffer_st8(buf,i,v)", "{buf[i]=mat2x4(v);}");
        }
        Storage::Fp16Packed => {
            p.define("buffer_ld2(buf,i)", &unpack2(class, "buf[i]"));
            p.define(
                "buffer_ld4(buf,i)",
                &format!(
                    "{}({},{})",
                    a.vec4,
                    unpack2(class, "buf[i].x"),
                    unpack2(class, "buf[i].y")
                ),
            );
            p.define(
                "buffer_ld8(buf,i)",
                &format!(
                    "{m}({v}({},{}),{v}({},{}))",
                    unpack2(class, "buf[i].r"),
                    unpack2(class, "buf[i].g"),
                    unpack2(class, "buf[i].b"),
                    unpack2(class, "buf[i].a"),
                    m = a.mat2x4,
                    v = a.vec4
                ),
            );
            let (cast2, cast4) = (a.vec2, a.vec4);
            p.define(
                "buffer_st2(buf,i,v)",
                &format!("{{buf[i]={};}}", pack2(class, &format!("{cast2}(v)"))),
            );
            p.define(
                "buffer_st4(buf,i,v)",
                &format!(
                    "{{buf[i]=uvec2({},{});}}",
                    pack2(class, &format!("{cast4}(v).rg")),
                    pack2(class, &format!("{cast4}(v).ba"))
                ),
            );
            p.define(
                "buffer_st8(buf,i,v)",
                &format!(
                    "{{buf[i]=uvec4({},{},{},{});}}",
                    pack2(class, &format!("{cast4}((v)[0]).rg")),
                    pack2(class, &format!("{cast4}((v)[0]).ba")),
                    pack2(class, &format!("{cast4}((v)[1]).rg")),
                    pack2(class, &format!("{cast4}((v)[1]).ba"))
                ),
            );
        }
        Storage::Fp16 => {
            if class.arithmetic {
                p.define("buffer_ld2(buf,i)", "buf[i]");
                p.define("buffer_ld4(buf,i)", "buf[i]");
            } else {
                p.define("buffer_ld2(buf,i)", "vec2(buf[i])");
                p.define("buffer_ld4(buf,i)", "vec4(buf[i])");
            }
            p.define("buffer_st2(buf,i,v)", "{buf[i]=f16vec2(v);}");
            p.define("buffer_st4(buf,i,v)", "{buf[i]=f16vec4(v);}");
            // sfpvec8 is a uvec4 of packed pairs: one 16-byte access
            let un = |c: &str| format!("unpackHalf2x16(buf[i].{c})");
            p.define(
                "buffer_ld8(buf,i)",
                &format!(
                    "{m}({v}({},{}),{v}({},{}))",
                    un("r"),
                    un("g"),
                    un("b"),
                    un("a"),
                    m = a.mat2x4,
                    v = a.vec4
                ),
            );
            let pk = |col: &str, half: &str| format!("packHalf2x16(vec4((v)[{col}]).{half})");
            p.define(
                "buffer_st8(buf,i,v)",
                &format!(
                    "{{buf[i]=uvec4({},{},{},{});}}",
                    pk("0", "rg"),
                    pk("0", "ba"),
                    pk("1", "rg"),
                    pk("1", "ba")
                ),
            );
        }
    }

    // Same-type copies never touch arithmetic types, so no precision is lost on the way.
    for n in ["1", "2", "4"] {
        p.define(
            &format!("buffer_cp{n}(buf,i,sbuf,si)"),
            "{buf[i]=sbuf[si];}",
        );
    }
    p.define("buffer_cp8(buf,i,sbuf,si)", "{buf[i]=sbuf[si];}");
    pack_copies(p, class);
}

/// The pack/unpack copies (`buffer_cp1to4`, …). With fp16 storage they copy component by component
/// in fp16, which works with and without fp16 arithmetic and loses nothing.
fn pack_copies(p: &mut Preamble, class: FloatClass) {
    const R: [&str; 4] = ["r", "g", "b", "a"];
    let gather = |idx: &str| -> Vec<String> { R.map(|c| format!("sbuf[({idx}).{c}]")).to_vec() };
    match class.storage {
        Storage::Fp32 => {
            p.define(
                "buffer_cp1to4(buf,i,sbuf,si4)",
                &format!("{{buf[i]=vec4({});}}", gather("si4").join(",")),
            );
            p.define(
                "buffer_cp1to8(buf,i,sbuf,si4,sii4)",
                &format!(
                    "{{buf[i]=mat2x4({},{});}}",
                    gather("si4").join(","),
                    gather("sii4").join(",")
                ),
            );
            p.define(
                "buffer_cp4to8(buf,i,sbuf,si2)",
                "{buf[i]=mat2x4(sbuf[(si2).r],sbuf[(si2).g]);}",
            );
        }
        Storage::Fp16Packed | Storage::Fp16 => {
            // fp16 values widen exactly to fp32 and pack back to the same bits
            let pairs = |idx: &str| -> Vec<String> {
                let g = gather(idx);
                vec![
                    format!("packHalf2x16(vec2({},{}))", g[0], g[1]),
                    format!("packHalf2x16(vec2({},{}))", g[2], g[3]),
                ]
            };
            if class.storage == Storage::Fp16Packed {
                p.define(
                    "buffer_cp1to4(buf,i,sbuf,si4)",
                    &format!("{{buf[i]=uvec2({});}}", pairs("si4").join(",")),
                );
                p.define(
                    "buffer_cp4to8(buf,i,sbuf,si2)",
                    "{buf[i]=uvec4(sbuf[(si2).r],sbuf[(si2).g]);}",
                );
            } else {
                let to4: String = R
                    .iter()
                    .map(|c| format!("buf[i].{c}=sbuf[(si4).{c}];"))
                    .collect();
                p.define("buffer_cp1to4(buf,i,sbuf,si4)", &format!("{{{to4}}}"));
                let halves = |idx: &str| {
                    format!("packHalf2x16(vec4(sbuf[{idx}]).rg),packHalf2x16(vec4(sbuf[{idx}]).ba)")
                };
                p.define(
                    "buffer_cp4to8(buf,i,sbuf,si2)",
                    &format!(
                        "{{buf[i]=uvec4({},{});}}",
                        halves("(si2).r"),
                        halves("(si2).g")
                    ),
                );
            }
            p.define(
                "buffer_cp1to8(buf,i,sbuf,si4,sii4)",
                &format!(
                    "{{buf[i]=uvec4({},{});}}",
                    pairs("si4").join(","),
                    pairs("sii4").join(",")
                ),
            );
        }
    }

    // Unpacking copies: the source element's components, as storage scalars or vec4s.
    let unpacked8 = |wrap: &str| -> Vec<String> {
        ["r", "g", "b", "a"]
            .iter()
            .flat_map(|w| ["x", "y"].map(|h| format!("{wrap}(unpackHalf2x16(sbuf[si].{w}).{h})")))
            .collect()
    };
    let (comp4, comp8, half8): (Vec<String>, Vec<String>, [&str; 2]) = match class.storage {
        Storage::Fp32 => (
            R.map(|c| format!("sbuf[si].{c}")).to_vec(),
            ["0", "1"]
                .iter()
                .flat_map(|col| R.map(|c| format!("sbuf[si][{col}].{c}")))
                .collect(),
            ["sbuf[si][0]", "sbuf[si][1]"],
        ),
        Storage::Fp16 => (
            R.map(|c| format!("sbuf[si].{c}")).to_vec(),
            unpacked8("float16_t"),
            [
                "f16vec4(vec4(unpackHalf2x16(sbuf[si].r),unpackHalf2x16(sbuf[si].g)))",
                "f16vec4(vec4(unpackHalf2x16(sbuf[si].b),unpackHalf2x16(sbuf[si].a)))",
            ],
        ),
        Storage::Fp16Packed => (
            ["x", "y"]
                .iter()
                .flat_map(|w| ["x", "y"].map(|h| format!("unpackHalf2x16(sbuf[si].{w}).{h}")))
                .collect(),
            unpacked8(""),
            ["sbuf[si].rg", "sbuf[si].ba"],
        ),
    };
    let scatter = |idx: &str, vals: &[String]| -> String {
        R.iter()
            .zip(vals)
            .map(|(c, v)| format!("buf[({idx}).{c}]={v};"))
            .collect()
    };
    p.define(
        "buffer_cp4to1(buf,i4,sbuf,si)",
        &format!("{{{}}}", scatter("i4", &comp4)),
    );
    p.define(
        "buffer_cp8to1(buf,i4,ii4,sbuf,si)",
        &format!(
            "{{{}{}}}",
            scatter("i4", &comp8[..4]),
            scatter("ii4", &comp8[4..])
        ),
    );
    p.define(
        "buffer_cp8to4(buf,i2,sbuf,si)",
        &format!("{{buf[(i2).r]={};buf[(i2).g]={};}}", half8[0], half8[1]),
    );
}

fn image_functions(p: &mut Preamble, class: FloatClass) {
    let a = arith(class);
    let cast = |t: &str, x: String| {
        if class.arithmetic {
            format!("{t}({x})")
        } else {
            x
        }
    };
    for (dim, lo, hi) in [
        ("1", "(p)*2", "(p)*2+1"),
        ("2", "ivec2((p).x*2,(p).y)", "ivec2((p).x*2+1,(p).y)"),
        (
            "3",
            "ivec3((p).x*2,(p).y,(p).z)",
            "ivec3((p).x*2+1,(p).y,(p).z)",
        ),
    ] {
        let f = |name: &str| format!("image{dim}d_{name}");
        p.define(
            &format!("{}(tex,p)", f("ld1")),
            &cast(a.scalar, "texelFetch(tex,p,0).r".into()),
        );
        p.define(
            &format!("{}(tex,p)", f("ld4")),
            &cast(a.vec4, "texelFetch(tex,p,0)".into()),
        );
        let (lo_t, hi_t) = (
            format!("texelFetch(tex,{lo},0)"),
            format!("texelFetch(tex,{hi},0)"),
        );
        let ld8 = if class.arithmetic {
            format!("{}({v}({lo_t}),{v}({hi_t}))", a.mat2x4, v = a.vec4)
        } else {
            format!("mat2x4({lo_t},{hi_t})")
        };
        p.define(&format!("{}(tex,p)", f("ld8")), &ld8);
        p.define(
            &format!("{}(img,p,v)", f("st1")),
            "{imageStore(img,p,vec4(v));}",
        );
        p.define(
            &format!("{}(img,p,v)", f("st4")),
            "{imageStore(img,p,vec4(v));}",
        );
        p.define(
            &format!("{}(img,p,v)", f("st8")),
            &format!("{{imageStore(img,{lo},vec4((v)[0]));imageStore(img,{hi},vec4((v)[1]));}}"),
        );
        for n in ["cp1", "cp4"] {
            p.define(
                &format!("{}(img,p,tex,sp)", f(n)),
                "{imageStore(img,p,texelFetch(tex,sp,0));}",
            );
        }
        let (slo, shi) = (lo.replace("(p)", "(sp)"), hi.replace("(p)", "(sp)"));
        p.define(
            &format!("{}(img,p,tex,sp)", f("cp8")),
            &format!(
                "{{imageStore(img,{lo},texelFetch(tex,{slo},0));imageStore(img,{hi},texelFetch(tex,{shi},0));}}"
            ),
        );
    }
}

fn local_functions(p: &mut Preamble, class: FloatClass) {
    let [s2l, s2l4, l2a, l2a4]: [String; 4] = match (class.storage, class.arithmetic) {
        (Storage::Fp16, true) if class.uniform => ["(v)", "(v)", "(v)", "(v)"].map(String::from),
        (Storage::Fp16, true) => [
            "float(v)".into(),
            "pack64(float16BitsToUint16(v))".into(),
            "float16_t(v)".into(),
            "uint16BitsToFloat16(unpack16(v))".into(),
        ],
        (Storage::Fp16, false) => [
            "float(v)".into(),
            "uvec2(packHalf2x16(vec4(v).rg),packHalf2x16(vec4(v).ba))".into(),
            "(v)".into(),
            "vec4(unpackHalf2x16((v).x),unpackHalf2x16((v).y))".into(),
        ],
        (Storage::Fp16Packed, arithmetic) => [
            "(v)".into(),
            "(v)".into(),
            if arithmetic {
                "float16_t(v)".into()
            } else {
                "(v)".into()
            },
            format!(
                "{}({},{})",
                arith(class).vec4,
                unpack2(class, "(v).x"),
                unpack2(class, "(v).y")
            ),
        ],
        // fp32 storage never comes with fp16 arithmetic: canonicalize() rejects it.
        (Storage::Fp32, _) => ["(v)", "(v)", "(v)", "(v)"].map(String::from),
    };
    p.define("sfp2lfp(v)", &s2l);
    p.define("sfp2lfpvec4(v)", &s2l4);
    p.define("lfp2afp(v)", &l2a);
    p.define("lfp2afpvec4(v)", &l2a4);
}

/// `sfp2afpmat4`/`afp2sfpmat4`: not in the seed's table, but shaders that keep 4x4 weight blocks in
/// `sfpmat4` need them (later ncnn has the same names), since a storage matrix is not always a matrix.
/// With fp16 storage but fp32 arithmetic `sfpmat4` is `uvec4[2]`: 16-bit storage alone can neither
/// construct nor assign arrays of `float16_t`; the packed pairs have the same bytes.
fn matrix_functions(p: &mut Preamble, class: FloatClass) {
    let a = arith(class);
    let (to_a, to_s) = match class.storage {
        Storage::Fp32 if class.arithmetic => ("f16mat4(v)".to_string(), "mat4(v)".to_string()),
        Storage::Fp32 => ("(v)".to_string(), "(v)".to_string()),
        Storage::Fp16 if class.arithmetic => ("(v)".to_string(), "(v)".to_string()),
        // 16-bit storage alone can neither construct nor assign arrays of float16, so the storage
        // matrix is packed pairs: the same bytes as sixteen float16_t, converted exactly.
        Storage::Fp16 | Storage::Fp16Packed => {
            let col = |(i, lo, hi): (usize, &str, &str)| {
                format!(
                    "{}({},{})",
                    a.vec4,
                    unpack2(class, &format!("(v)[{i}].{lo}")),
                    unpack2(class, &format!("(v)[{i}].{hi}"))
                )
            };
            let cols = [(0, "x", "y"), (0, "z", "w"), (1, "x", "y"), (1, "z", "w")];
            let to_a = format!("{}({})", a.mat4, cols.map(col).join(","));
            let pk = |c: usize| {
                format!(
                    "{},{}",
                    pack2(class, &format!("{}((v)[{c}]).rg", a.vec4)),
                    pack2(class, &format!("{}((v)[{c}]).ba", a.vec4))
                )
            };
            let to_s = format!(
                "uvec4[2](uvec4({},{}),uvec4({},{}))",
                pk(0),
                pk(1),
                pk(2),
                pk(3)
            );
            (to_a, to_s)
        }
    };
    p.define("sfp2afpmat4(v)", &to_a);
    p.define("afp2sfpmat4(v)", &to_s);
}
