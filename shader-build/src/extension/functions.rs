//! The function macros of the extension: `buffer_*`, the packed copies between packings,
//! `image*d_*`, local-memory conversions and matrix conversions, per float class.

use crate::options::{FloatClass, Storage};

use super::{Preamble, arith};

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

pub(super) fn buffer_functions(p: &mut Preamble, class: FloatClass) {
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

pub(super) fn image_functions(p: &mut Preamble, class: FloatClass) {
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

pub(super) fn local_functions(p: &mut Preamble, class: FloatClass) {
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
pub(super) fn matrix_functions(p: &mut Preamble, class: FloatClass) {
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
