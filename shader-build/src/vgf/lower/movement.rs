//! Data movement and resampling: slice, tile, pad, concat, reverse, gather, scatter, transpose,
//! resize.

use super::index::{coord, strides, sum};
use super::operand::{axis_attr, constant_operand, ints_attr};
use super::tosa::{Elem, Graph, Op, TensorType};
use super::{LowerError, Parts, ty, unsupported};

/// `slice`, `tile` and `pad`: each output coordinate's input coordinate (TOSA 1.0's shape
/// operands as constants); `pad` reads its value outside.
pub(super) fn slice_tile_pad(
    graph: &Graph,
    op: &Op,
    out: &TensorType,
) -> Result<Parts, LowerError> {
    let ins = ty(graph, op, 0)?.to_vec();
    let rank = ins.len();
    if out.shape.len() != rank {
        return Err(unsupported(op, "input and output ranks differ"));
    }
    let in_strides = strides(&ins);
    let kind = op.kind();
    let shape = constant_operand(graph, op, 1)?;
    let want = if kind == "pad" { 2 * rank } else { rank };
    if shape.len() != want {
        return Err(unsupported(
            op,
            format!(
                "operand 1 has {} values, rank {rank} takes {want}",
                shape.len()
            ),
        ));
    }
    // each output coordinate's input coordinate, and (pad) whether it is inside
    let mut index = Vec::new();
    let mut inside = Vec::new();
    for d in 0..rank {
        let c = coord(&out.shape, d);
        let (n, o) = (ins[d], out.shape[d]);
        let at = match kind {
            "slice" => {
                let start = shape[d];
                if start < 0 || start + o > n {
                    return Err(unsupported(
                        op,
                        format!("slice {start}..{} of dimension {d} ({n})", start + o),
                    ));
                }
                format!("({c} + {start}u)")
            }
            "tile" => {
                if shape[d] < 1 || n * shape[d] != o {
                    return Err(unsupported(op, "multiples do not give the output"));
                }
                format!("({c} % {n}u)")
            }
            _ => {
                let (before, after) = (shape[2 * d], shape[2 * d + 1]);
                if before < 0 || after < 0 || n + before + after != o {
                    return Err(unsupported(op, "padding does not give the output"));
                }
                inside.push(format!("{c} >= {before}u && {c} < {}u", before + n));
                format!("({c} - {before}u)")
            }
        };
        index.push(format!("{at} * {}u", in_strides[d]));
    }
    let index = sum(index);
    Ok(if kind == "pad" {
        let inside = if inside.is_empty() {
            "true".to_string()
        } else {
            inside.join(" && ")
        };
        let helper =
            format!("float value(uint i) {{ return ({inside}) ? a0[{index}] : a1[0]; }}\n");
        (vec![0, 2], "value(i)".into(), helper)
    } else {
        (vec![0], format!("a0[{index}]"), String::new())
    })
}

/// `concat` along `axis`: the operand whose range of the axis holds the coordinate.
pub(super) fn concat(graph: &Graph, op: &Op, out: &TensorType) -> Result<Parts, LowerError> {
    let rank = out.shape.len();
    let axis = axis_attr(op, rank)?;
    let c = coord(&out.shape, axis);
    let out_strides = strides(&out.shape);
    let mut offset = 0i64;
    let mut branches = Vec::new();
    for k in 0..op.operands.len() {
        let ins = ty(graph, op, k)?;
        if ins.len() != rank || (0..rank).any(|d| d != axis && ins[d] != out.shape[d]) {
            return Err(unsupported(op, "operands do not fit the output"));
        }
        // the element's index in operand k: its coordinates with the axis shifted
        let in_strides = strides(ins);
        let terms: Vec<String> = (0..rank)
            .map(|d| {
                let cd = if d == axis {
                    format!("({c} - {offset}u)")
                } else {
                    format!("((i / {}u) % {}u)", out_strides[d], out.shape[d].max(1))
                };
                format!("{cd} * {}u", in_strides[d])
            })
            .collect();
        offset += ins[axis];
        branches.push((offset, format!("a{k}[{}]", terms.join(" + "))));
    }
    if offset != out.shape[axis] {
        return Err(unsupported(op, "operands do not fill the output's axis"));
    }
    let mut expr = branches.last().map(|b| b.1.clone()).unwrap_or_default();
    for (end, value) in branches.iter().rev().skip(1) {
        expr = format!("({c} < {end}u ? {value} : {expr})");
    }
    Ok(((0..op.operands.len()).collect(), expr, String::new()))
}

/// `reverse` along `axis`.
pub(super) fn reverse(graph: &Graph, op: &Op, out: &TensorType) -> Result<Parts, LowerError> {
    let ins = ty(graph, op, 0)?.to_vec();
    let axis = axis_attr(op, ins.len())?;
    let in_strides = strides(&ins);
    let terms: Vec<String> = (0..ins.len())
        .map(|d| {
            let c = coord(&out.shape, d);
            let c = if d == axis {
                format!("({}u - 1u - {c})", ins[d])
            } else {
                c
            };
            format!("{c} * {}u", in_strides[d])
        })
        .collect();
    Ok((vec![0], format!("a0[{}]", terms.join(" + ")), String::new()))
}

/// `gather`: values `[N, K, C]`, indices `[N, W]` → `[N, W, C]`.
pub(super) fn gather(graph: &Graph, op: &Op, out: &TensorType) -> Result<Parts, LowerError> {
    // values [N, K, C], indices [N, W] -> [N, W, C]
    let (values, indices) = (ty(graph, op, 0)?, ty(graph, op, 1)?);
    let (&[n, k, c], &[ni, w]) = (values, indices) else {
        return Err(unsupported(
            op,
            "gather takes values [N,K,C] and indices [N,W]",
        ));
    };
    if ni != n || out.shape != [n, w, c] {
        return Err(unsupported(op, "values, indices and output disagree"));
    }
    let helper = format!(
        "float value(uint i) {{ uint ch = i % {c}u; uint nw = i / {c}u; \
         uint at = uint(clamp(a1[nw], 0, {})); \
         return a0[((nw / {w}u) * {k}u + at) * {c}u + ch]; }}\n",
        k - 1
    );
    Ok((vec![0, 1], "value(i)".into(), helper))
}

/// `scatter`: values_in `[N, K, C]`, indices `[N, W]`, input `[N, W, C]` → `[N, K, C]`.
pub(super) fn scatter(graph: &Graph, op: &Op, out: &TensorType) -> Result<Parts, LowerError> {
    // values_in [N, K, C], indices [N, W], input [N, W, C] -> [N, K, C]
    let (values, indices, input) = (ty(graph, op, 0)?, ty(graph, op, 1)?, ty(graph, op, 2)?);
    let (&[n, k, c], &[ni, w]) = (values, indices) else {
        return Err(unsupported(
            op,
            "scatter takes values [N,K,C] and indices [N,W]",
        ));
    };
    if ni != n || input != [n, w, c] || out.shape != [n, k, c] {
        return Err(unsupported(
            op,
            "values, indices, input and output disagree",
        ));
    }
    // the input row written at this row, if any (TOSA's indices are unique)
    let helper = format!(
        "float value(uint i) {{ uint ch = i % {c}u; uint row = (i / {c}u) % {k}u; \
         uint b = i / {c}u / {k}u; float v = a0[i]; \
         for (uint j = 0u; j < {w}u; j++) {{ if (a1[b * {w}u + j] == int(row)) \
         v = a2[(b * {w}u + j) * {c}u + ch]; }} return v; }}\n"
    );
    Ok((vec![0, 1, 2], "value(i)".into(), helper))
}

/// `transpose` by `perms`.
pub(super) fn transpose(graph: &Graph, op: &Op, out: &TensorType) -> Result<Parts, LowerError> {
    let ins = ty(graph, op, 0)?;
    let perms = ints_attr(op, "perms", ins.len())?;
    if perms.iter().any(|&p| p < 0 || p as usize >= ins.len()) {
        return Err(unsupported(op, "perms do not fit the input's rank"));
    }
    // output dim d is input dim perms[d]
    let mut in_strides = vec![1i64; ins.len()];
    for d in (0..ins.len().saturating_sub(1)).rev() {
        in_strides[d] = in_strides[d + 1] * ins[d + 1];
    }
    let mut terms = Vec::new();
    let mut out_stride = 1i64;
    for d in (0..out.shape.len()).rev() {
        terms.push(format!(
            "((i / {out_stride}u) % {}u) * {}u",
            out.shape[d], in_strides[perms[d] as usize]
        ));
        out_stride *= out.shape[d];
    }
    Ok((vec![0], format!("a0[{}]", terms.join(" + ")), String::new()))
}

/// `resize`: nearest neighbour or bilinear at TOSA's scale, offset and border; f32, or int8 in
/// (nearest to int8, bilinear to i32: the four values weighted by the integer distances, not
/// divided, as TOSA defines it).
pub(super) fn resize(graph: &Graph, op: &Op, out: &TensorType) -> Result<Parts, LowerError> {
    let ins = ty(graph, op, 0)?;
    let (Ok([n, ih, iw, c]), Ok([on, oh, ow, oc])) = (
        <[i64; 4]>::try_from(ins),
        <[i64; 4]>::try_from(&out.shape[..]),
    ) else {
        return Err(unsupported(op, "input and output must be NHWC (rank 4)"));
    };
    let (scale, offset, border) = (
        constant_operand(graph, op, 1)?,
        constant_operand(graph, op, 2)?,
        constant_operand(graph, op, 3)?,
    );
    let (&[syn, syd, sxn, sxd], &[oy0, ox0], &[by, bx]) = (&scale[..], &offset[..], &border[..])
    else {
        return Err(unsupported(op, "scale takes 4 values, offset and border 2"));
    };
    if [syn, syd, sxn, sxd].iter().any(|&v| v < 1) {
        return Err(unsupported(op, "scales must be positive"));
    }
    // TOSA: OH = ((IH - 1) * scale_y_n - offset_y + border_y) / scale_y_d + 1, the
    // division exact
    let (ny, nx) = ((ih - 1) * syn - oy0 + by, (iw - 1) * sxn - ox0 + bx);
    if on != n
        || oc != c
        || ny % syd != 0
        || nx % sxd != 0
        || oh != ny / syd + 1
        || ow != nx / sxd + 1
    {
        return Err(unsupported(
            op,
            "the output shape does not follow from scale, offset and border",
        ));
    }
    let mode = super::tosa::resize_mode(op.attrs.get("mode"))
        .ok_or_else(|| unsupported(op, "mode is not NEAREST_NEIGHBOR or BILINEAR"))?;
    let elem = |v: usize| graph.values[v].ty.elem;
    let int = match (elem(op.operands[0]), out.elem, mode) {
        (Elem::F32, Elem::F32, _) => false,
        (Elem::I8, Elem::I8, 1) | (Elem::I8, Elem::I32, 2) => true,
        (i, o, _) => {
            return Err(unsupported(
                op,
                format!(
                    "{i:?} to {o:?} in this mode (f32 to f32, int8 to int8 nearest, int8 to i32 \
                     bilinear)"
                ),
            ));
        }
    };
    // the source position: integer part (floor division) and remainder, per axis
    let at = |iy: &str, ix: &str| {
        let index = format!(
            "((n * {ih}u + uint(clamp({iy}, 0, {}))) * {iw}u + uint(clamp({ix}, 0, {}))) * {c}u + ch",
            ih - 1,
            iw - 1
        );
        if int {
            format!("(int(byte_(0, {index}) << 24u) >> 24)")
        } else {
            format!("a0[{index}]")
        }
    };
    let (ty, wy, wx, ny, nx, near_y, near_x) = if int {
        // integer weights out of scale_n per axis; nearest rounds at 2·d ≥ scale_n
        (
            "int",
            "dy",
            "dx",
            format!("({syn} - dy)"),
            format!("({sxn} - dx)"),
            format!("2 * dy >= {syn}"),
            format!("2 * dx >= {sxn}"),
        )
    } else {
        (
            "float",
            "fy",
            "fx",
            "(1.0 - fy)".to_string(),
            "(1.0 - fx)".to_string(),
            "fy >= 0.5".to_string(),
            "fx >= 0.5".to_string(),
        )
    };
    let body = if mode == 1 {
        format!(
            "iy += {near_y} ? 1 : 0; ix += {near_x} ? 1 : 0; return {};",
            at("iy", "ix")
        )
    } else {
        format!(
            "return {} * {ny} * {nx} + {} * {ny} * {wx} + {} * {wy} * {nx} + {} * {wy} * {wx};",
            at("iy", "ix"),
            at("iy", "ix + 1"),
            at("iy + 1", "ix"),
            at("iy + 1", "ix + 1")
        )
    };
    let helper = format!(
        "int floordiv(int a, int b) {{ return a >= 0 ? a / b : -((-a + b - 1) / b); }}\n\
         {ty} value(uint i) {{ uint ch = i % {c}u; uint t = i / {c}u; \
         int ox = int(t % {ow}u); t /= {ow}u; int oy = int(t % {oh}u); uint n = t / {oh}u;\n\
         int y = oy * {syd} + {oy0}; int x = ox * {sxd} + {ox0};\n\
         int iy = floordiv(y, {syn}); int ix = floordiv(x, {sxn});\n\
         int dy = y - iy * {syn}; int dx = x - ix * {sxn};\n\
         float fy = float(dy) / {syn}.0; float fx = float(dx) / {sxn}.0;\n\
         {body} }}\n"
    );
    Ok((vec![0], "value(i)".into(), helper))
}
