//! TOSA operations lowered to compute shaders: one generated GLSL shader per operation, its
//! shapes folded in as constants, one invocation per output element. Used ahead of time by
//! `fpshaderc vgf --compute-only` (compiled with shaderc) and at load time by the runtime for
//! the data-graph segments of VGFs that Arm's converter wrote (compiled with naga), so the
//! text stays within what both GLSL front ends accept.

use std::fmt::Write as _;

use super::tosa::{Attr, Elem, Graph, Op};

/// Invocations per workgroup of the lowered ML shaders.
pub const LOWERED_LOCAL_SIZE: u32 = 64;

/// A TOSA operation the compute lowering does not have, or one whose attributes it cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{loc}: `{name}` cannot be lowered to a compute shader: {problem}")]
pub struct LowerError {
    /// Where the op is: `line:column` in MLIR, `%id` in SPIR-V.
    pub loc: String,
    /// The op's name.
    pub name: String,
    /// Why.
    pub problem: String,
}

/// A lowered ML operation: GLSL reading `operands` (bindings 0…) and writing the result
/// (the last binding), dispatched over `invocations` in x.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lowered {
    /// The generated GLSL.
    pub glsl: String,
    /// Which of the op's operands the shader binds, in binding order.
    pub operands: Vec<usize>,
    /// Invocations in x (one per output element).
    pub invocations: u32,
}

fn unsupported(op: &Op, problem: impl Into<String>) -> LowerError {
    LowerError {
        loc: op.loc.to_string(),
        name: op.name.clone(),
        problem: problem.into(),
    }
}

/// The index into an input of `in_shape` for output element `i` of `out_shape`, broadcasting
/// dimensions of size 1 (TOSA's rule: equal ranks).
fn broadcast_index(in_shape: &[i64], out_shape: &[i64]) -> String {
    if in_shape == out_shape {
        return "i".into();
    }
    let mut terms = Vec::new();
    let (mut out_stride, mut in_stride) = (1i64, 1i64);
    for d in (0..out_shape.len()).rev() {
        let (o, n) = (out_shape[d], in_shape.get(d).copied().unwrap_or(1));
        if n != 1 {
            terms.push(format!("((i / {out_stride}u) % {o}u) * {in_stride}u"));
        }
        out_stride *= o;
        in_stride *= n;
    }
    sum(terms)
}

/// A boolean attribute: MLIR's `true`, or the SPIR-V graph's constant 1.
fn flag(op: &Op, name: &str) -> bool {
    match op.attrs.get(name) {
        Some(Attr::Bool(b)) => *b,
        Some(Attr::Number(n)) => *n != 0.0,
        _ => false,
    }
}

fn float_attr(op: &Op, name: &str) -> Result<f64, LowerError> {
    match op.attrs.get(name) {
        Some(Attr::Number(n)) => Ok(*n),
        _ => Err(unsupported(
            op,
            format!("attribute `{name}` is missing or not a number"),
        )),
    }
}

/// An integer-array attribute of exactly `len` entries (`pad`, `stride`, `kernel`, `perms`).
fn ints_attr(op: &Op, name: &str, len: usize) -> Result<Vec<i64>, LowerError> {
    match op.attrs.get(name) {
        Some(Attr::Numbers(v)) if v.len() == len && v.iter().all(|x| x.fract() == 0.0) => {
            Ok(v.iter().map(|&x| x as i64).collect())
        }
        _ => Err(unsupported(
            op,
            format!("attribute `{name}` is missing or not {len} integers"),
        )),
    }
}

/// The values of operand `v` of `op`, which a constant (`const_shape` for shapes) must give.
fn constant_operand(graph: &Graph, op: &Op, v: usize) -> Result<Vec<i64>, LowerError> {
    let id = *op
        .operands
        .get(v)
        .ok_or_else(|| unsupported(op, format!("operand {v} is missing")))?;
    let values = graph
        .producer(id)
        .and_then(|p| graph.ops[p].attrs.get("values"));
    match values {
        Some(Attr::Dense(values, ty)) if values.iter().all(|x| x.fract() == 0.0) => {
            let n = ty.elements().max(1);
            // shapes, zero points, multipliers: a few values per axis or channel
            if n > MAX_CONSTANT_VALUES {
                return Err(unsupported(
                    op,
                    format!(
                        "operand {v} has {n} values, more than the {MAX_CONSTANT_VALUES} a lowered shader folds in"
                    ),
                ));
            }
            Ok(match values[..] {
                // a splat
                [x] => vec![x as i64; n],
                _ => values.iter().map(|&x| x as i64).collect(),
            })
        }
        _ => Err(unsupported(
            op,
            format!("operand {v} must be a constant of integers (`tosa.const_shape`)"),
        )),
    }
}

/// The most values of a constant operand folded into a generated shader.
const MAX_CONSTANT_VALUES: usize = 1 << 16;

/// `terms` as a GLSL sum, `0u` for none.
fn sum(terms: Vec<String>) -> String {
    if terms.is_empty() {
        "0u".into()
    } else {
        terms.join(" + ")
    }
}

/// The input index of output element `i` with the input's `axis` at 0: the output has the
/// other axes, and the axis itself as 1 where `kept` (reductions) or not at all (argmax).
fn axis_base(ins: &[i64], out_shape: &[i64], axis: usize, kept: bool) -> String {
    let in_strides = strides(ins);
    sum((0..ins.len())
        .filter(|&d| d != axis)
        .enumerate()
        .map(|(k, d)| {
            let at = if kept { d } else { k };
            format!("{} * {}u", coord(out_shape, at), in_strides[d])
        })
        .collect())
}

/// Row-major strides of `shape`.
fn strides(shape: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

/// GLSL for coordinate `d` of output element `i` of `out_shape`.
fn coord(out_shape: &[i64], d: usize) -> String {
    format!(
        "((i / {}u) % {}u)",
        strides(out_shape)[d],
        out_shape[d].max(1)
    )
}

/// The `axis` attribute, checked against a rank.
fn axis_attr(op: &Op, rank: usize) -> Result<usize, LowerError> {
    let axis = float_attr(op, "axis")?;
    if axis < 0.0 || axis as usize >= rank || axis.fract() != 0.0 {
        return Err(unsupported(
            op,
            format!("axis {axis} is outside rank {rank}"),
        ));
    }
    Ok(axis as usize)
}

/// `scaled(v, m, s, double_round)`: TOSA's `apply_scale_32`, `(v * m + round) >> s` in 64 bits
/// (the product in 16-bit halves, so no 64-bit integers are needed), `round` half of `1 << s`
/// and, with double rounding past 31 bits, 2^30 more away from zero.
const SCALE64: &str = "int scaled(int a, int b, uint s, bool dbl) {
uint ua = uint(a < 0 ? -a : a); uint ub = uint(b < 0 ? -b : b);
uint a0 = ua & 65535u; uint a1 = ua >> 16; uint b0 = ub & 65535u; uint b1 = ub >> 16;
uint p00 = a0 * b0; uint p01 = a0 * b1; uint p10 = a1 * b0; uint p11 = a1 * b1;
uint mid = (p00 >> 16) + (p01 & 65535u) + (p10 & 65535u);
uint lo = (p00 & 65535u) | (mid << 16);
uint hi = p11 + (p01 >> 16) + (p10 >> 16) + (mid >> 16);
if ((a < 0) != (b < 0) && (lo != 0u || hi != 0u)) { lo = ~lo + 1u; hi = ~hi + (lo == 0u ? 1u : 0u); }
uint rlo = 0u; uint rhi = 0u;
if (s - 1u < 32u) { rlo = 1u << (s - 1u); } else { rhi = 1u << (s - 33u); }
if (dbl && s > 31u) { if (a >= 0) { rlo += 1073741824u; } else { if (rlo < 1073741824u) { rhi -= 1u; } rlo -= 1073741824u; } }
uint l2 = lo + rlo; hi = hi + rhi + (l2 < lo ? 1u : 0u); lo = l2;
if (s < 32u) { return int((lo >> s) | (hi << (32u - s))); }
return int(hi) >> (s - 32u);
}
";

/// `erf(x)`: a series near zero, Abramowitz and Stegun 7.1.26 (error below 1.5e-7) beyond.
const ERF: &str = "float erf_(float x) { float a = abs(x); if (a < 0.5) { float x2 = x * x; \
return x * 1.1283791671 * (1.0 + x2 * (-1.0 / 3.0 + x2 * (0.1 + x2 * (-1.0 / 42.0 + x2 / 216.0)))); } \
float t = 1.0 / (1.0 + 0.3275911 * a); \
float y = 1.0 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + \
t * 1.061405429)))) * exp(-a * a); return x < 0.0 ? -y : y; }\n";

/// NHWC geometry of a 2-D window operation, checked against the output's shape.
struct Window {
    /// Input and output `[N, H, W, C]`.
    input: [i64; 4],
    output: [i64; 4],
    kernel: [i64; 2],
    stride: [i64; 2],
    dilation: [i64; 2],
    /// Top and left padding.
    pad: [i64; 2],
}

impl Window {
    fn new(
        op: &Op,
        input: &[i64],
        output: &[i64],
        kernel: [i64; 2],
        dilation: [i64; 2],
    ) -> Result<Self, LowerError> {
        let (Ok(input), Ok(output)) = (<[i64; 4]>::try_from(input), <[i64; 4]>::try_from(output))
        else {
            return Err(unsupported(op, "input and output must be NHWC (rank 4)"));
        };
        let pad = ints_attr(op, "pad", 4)?;
        let stride = ints_attr(op, "stride", 2)?;
        if stride.iter().any(|&s| s < 1) || dilation.iter().any(|&d| d < 1) {
            return Err(unsupported(op, "stride and dilation must be at least 1"));
        }
        if pad.iter().any(|&p| p < 0) || kernel.iter().any(|&k| k < 1) {
            return Err(unsupported(
                op,
                "padding must not be negative nor kernels empty",
            ));
        }
        // TOSA: OH = (IH - 1 + pad_top + pad_bottom - (KH - 1) * dilation_y) / stride_y + 1
        let expect = |d: usize| {
            (input[1 + d] - 1 + pad[2 * d] + pad[2 * d + 1] - (kernel[d] - 1) * dilation[d])
                / stride[d]
                + 1
        };
        if output[1] != expect(0) || output[2] != expect(1) || output[0] != input[0] {
            return Err(unsupported(
                op,
                format!(
                    "output shape {output:?} does not follow from input {input:?}, kernel \
                     {kernel:?}, stride {stride:?}, pad {pad:?}"
                ),
            ));
        }
        Ok(Window {
            input,
            output,
            kernel,
            stride: [stride[0], stride[1]],
            dilation,
            pad: [pad[0], pad[2]],
        })
    }

    /// A convolution's window: its `dilation` attribute read too.
    fn dilated(
        op: &Op,
        input: &[i64],
        output: &[i64],
        kernel: [i64; 2],
    ) -> Result<Self, LowerError> {
        let dilation = ints_attr(op, "dilation", 2)?;
        Window::new(op, input, output, kernel, [dilation[0], dilation[1]])
    }

    /// The `value(i)` helper of a convolution: `body` adds the window's products to `s` (see
    /// [`Window::loops`]), then the bias of `bias_shape` is added.
    fn summed(&self, body: &str, bias_shape: &[i64]) -> String {
        format!(
            "float value(uint i) {{ float s = 0.0;\n{}return s + {}; }}\n",
            self.loops(body),
            bias(bias_shape)
        )
    }

    /// GLSL that splits output element `i` into `n, oy, ox, oc` and loops `ky, kx` over the
    /// window, with `iy, ix` the input position and `inside` whether it is not padding; `body`
    /// runs inside both loops.
    fn loops(&self, body: &str) -> String {
        let [_, ih, iw, _] = self.input;
        let [_, oh, ow, oc] = self.output;
        let ([kh, kw], [sy, sx], [dy, dx], [pt, pl]) =
            (self.kernel, self.stride, self.dilation, self.pad);
        format!(
            "uint oc = i % {oc}u; uint t = i / {oc}u; int ox = int(t % {ow}u); t /= {ow}u; \
             int oy = int(t % {oh}u); uint n = t / {oh}u;\n\
             for (int ky = 0; ky < {kh}; ky++) {{ for (int kx = 0; kx < {kw}; kx++) {{\n\
             int iy = oy * {sy} - {pt} + ky * {dy}; int ix = ox * {sx} - {pl} + kx * {dx};\n\
             bool inside = iy >= 0 && iy < {ih} && ix >= 0 && ix < {iw};\n\
             {body}\n}} }}\n"
        )
    }
}

/// The bias term for output channel `oc` (TOSA allows a bias of one element for all).
fn bias(shape: &[i64]) -> &'static str {
    if shape.iter().product::<i64>() == 1 {
        "a2[0]"
    } else {
        "a2[oc]"
    }
}

/// Lowers one ML op of `graph` (not a constant) to a compute shader.
pub fn lower(graph: &Graph, op: &Op) -> Result<Lowered, LowerError> {
    let [result] = op.results[..] else {
        return Err(unsupported(op, "it does not have exactly one result"));
    };
    let out = &graph.values[result].ty;
    let ty = |v: usize| -> Result<&[i64], LowerError> {
        op.operands
            .get(v)
            .map(|&id| graph.values[id].ty.shape.as_slice())
            .ok_or_else(|| unsupported(op, format!("operand {v} is missing")))
    };
    let n = out.elements();
    let unary = |expr: &str| (vec![0usize], expr.replace('X', "a0[i]"), String::new());
    let binary = |f: &dyn Fn(&str, &str) -> String| -> Result<_, LowerError> {
        let a = format!("a0[{}]", broadcast_index(ty(0)?, &out.shape));
        let b = format!("a1[{}]", broadcast_index(ty(1)?, &out.shape));
        Ok((vec![0usize, 1], f(&a, &b), String::new()))
    };
    let (operands, expr, helper) = match op.kind() {
        "abs" => unary("abs(X)"),
        "exp" => unary("exp(X)"),
        "log" => unary("log(X)"),
        "negate" => unary("-(X)"),
        "reciprocal" => unary("1.0 / X"),
        "rsqrt" => unary("inversesqrt(X)"),
        "sigmoid" => unary("1.0 / (1.0 + exp(-(X)))"),
        "tanh" => unary("tanh(X)"),
        "floor" => unary("floor(X)"),
        "ceil" => unary("ceil(X)"),
        "sin" => unary("sin(X)"),
        "cos" => unary("cos(X)"),
        "erf" => (vec![0], "erf_(a0[i])".into(), ERF.to_string()),
        "slice" | "tile" | "pad" => {
            let ins = ty(0)?.to_vec();
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
            if kind == "pad" {
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
            }
        }
        "concat" => {
            let rank = out.shape.len();
            let axis = axis_attr(op, rank)?;
            let c = coord(&out.shape, axis);
            let out_strides = strides(&out.shape);
            let mut offset = 0i64;
            let mut branches = Vec::new();
            for k in 0..op.operands.len() {
                let ins = ty(k)?;
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
            ((0..op.operands.len()).collect(), expr, String::new())
        }
        "reduce_sum" | "reduce_max" | "reduce_min" | "reduce_product" => {
            let ins = ty(0)?.to_vec();
            let axis = axis_attr(op, ins.len())?;
            let mut expect = ins.clone();
            expect[axis] = 1;
            if out.shape != expect {
                return Err(unsupported(
                    op,
                    "the output is not the input with the axis 1",
                ));
            }
            let (init, step) = match op.kind() {
                "reduce_sum" => ("0.0", "s += v;"),
                "reduce_product" => ("1.0", "s *= v;"),
                "reduce_max" => ("-3.402823466e+38", "s = max(s, v);"),
                _ => ("3.402823466e+38", "s = min(s, v);"),
            };
            let in_strides = strides(&ins);
            let base = axis_base(&ins, &out.shape, axis, true);
            let helper = format!(
                "float value(uint i) {{ uint b = {base}; float s = {init}; \
                 for (uint r = 0u; r < {}u; r++) {{ float v = a0[b + r * {}u]; {step} }} \
                 return s; }}\n",
                ins[axis], in_strides[axis]
            );
            (vec![0], "value(i)".into(), helper)
        }
        "table" => return table(graph, op, n),
        "identity" | "reshape" => unary("X"),
        "cast" => {
            let from = graph.values[op.operands[0]].ty.elem;
            let float = |e: Elem| matches!(e, Elem::F32 | Elem::F16);
            // the value read: int8 sign-extended from its byte, a boolean from its byte,
            // fp16 widened (by `finish`'s loader), f32 and i32 as stored
            let x = match from {
                Elem::I8 => "(int(byte_(0, i) << 24u) >> 24)".to_string(),
                Elem::Bool => byte(0, "i"),
                Elem::F32 | Elem::F16 | Elem::I32 => "a0[i]".to_string(),
                _ => return Err(unsupported(op, "casts from int16 or int64 are not lowered")),
            };
            let expr = match (from, out.elem) {
                (Elem::Bool, Elem::Bool) => x,
                (Elem::Bool, Elem::I8 | Elem::I32) => format!("({x} ? 1 : 0)"),
                (Elem::Bool, Elem::F32 | Elem::F16) => format!("({x} ? 1.0 : 0.0)"),
                (f, Elem::Bool) if float(f) => format!("({x} != 0.0)"),
                (_, Elem::Bool) => format!("({x} != 0)"),
                // TOSA: floating point to integer rounds to the nearest, ties to even, and
                // saturates
                (f, Elem::I8) if float(f) => format!("clamp(int(roundEven({x})), -128, 127)"),
                (f, Elem::I32) if float(f) => format!("int(roundEven({x}))"),
                // integers narrow to their low bits, widen with their sign
                (_, Elem::I8) => format!("((({x}) << 24) >> 24)"),
                (_, Elem::I32) => x,
                (f, Elem::F32 | Elem::F16) if float(f) => x,
                (_, Elem::F32 | Elem::F16) => format!("float({x})"),
                _ => return Err(unsupported(op, "casts to int16 or int64 are not lowered")),
            };
            (vec![0], expr, String::new())
        }
        "resize" => {
            let ins = ty(0)?;
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
            let (&[syn, syd, sxn, sxd], &[oy0, ox0], &[by, bx]) =
                (&scale[..], &offset[..], &border[..])
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
            // the source position: integer part (floor division) and fraction, per axis
            let at = |iy: &str, ix: &str| {
                format!(
                    "a0[((n * {ih}u + uint(clamp({iy}, 0, {}))) * {iw}u + uint(clamp({ix}, 0, {}))) * {c}u + ch]",
                    ih - 1,
                    iw - 1
                )
            };
            let body = if mode == 1 {
                format!(
                    "iy += fy >= 0.5 ? 1 : 0; ix += fx >= 0.5 ? 1 : 0; return {};",
                    at("iy", "ix")
                )
            } else {
                format!(
                    "return {} * (1.0 - fy) * (1.0 - fx) + {} * (1.0 - fy) * fx + \
                     {} * fy * (1.0 - fx) + {} * fy * fx;",
                    at("iy", "ix"),
                    at("iy", "ix + 1"),
                    at("iy + 1", "ix"),
                    at("iy + 1", "ix + 1")
                )
            };
            let helper = format!(
                "int floordiv(int a, int b) {{ return a >= 0 ? a / b : -((-a + b - 1) / b); }}\n\
                 float value(uint i) {{ uint ch = i % {c}u; uint t = i / {c}u; \
                 int ox = int(t % {ow}u); t /= {ow}u; int oy = int(t % {oh}u); uint n = t / {oh}u;\n\
                 int y = oy * {syd} + {oy0}; int x = ox * {sxd} + {ox0};\n\
                 int iy = floordiv(y, {syn}); int ix = floordiv(x, {sxn});\n\
                 float fy = float(y - iy * {syn}) / {syn}.0; float fx = float(x - ix * {sxn}) / {sxn}.0;\n\
                 {body} }}\n"
            );
            (vec![0], "value(i)".into(), helper)
        }
        // i32 bit operations (TOSA: shift amounts 0-31, intdiv truncates toward zero)
        "bitwise_and" => binary(&|a, b| format!("{a} & {b}"))?,
        "bitwise_or" => binary(&|a, b| format!("{a} | {b}"))?,
        "bitwise_xor" => binary(&|a, b| format!("{a} ^ {b}"))?,
        "bitwise_not" => unary("~(X)"),
        "logical_left_shift" => binary(&|a, b| format!("int(uint({a}) << uint({b} & 31))"))?,
        "logical_right_shift" => binary(&|a, b| format!("int(uint({a}) >> uint({b} & 31))"))?,
        "arithmetic_right_shift" => {
            let round = flag(op, "round");
            binary(&|a, b| {
                let shifted = format!("({a} >> ({b} & 31))");
                if round {
                    format!("{shifted} + (({b} & 31) > 0 ? (({a} >> (({b} & 31) - 1)) & 1) : 0)")
                } else {
                    shifted
                }
            })?
        }
        "intdiv" => binary(&|a, b| format!("({b} == 0 ? 0 : {a} / {b})"))?,
        // a loop, not findMSB: naga types findMSB(uint) as uint where glslang's SPIR-V has int
        "clz" => (
            vec![0],
            "clz_(uint(a0[i]))".into(),
            "int clz_(uint x) { int n = 0; for (int b = 31; b >= 0; b--) { \
             if ((x >> uint(b)) != 0u) break; n++; } return n; }\n"
                .into(),
        ),
        "equal" => binary(&|a, b| format!("{a} == {b}"))?,
        "greater" => binary(&|a, b| format!("{a} > {b}"))?,
        "greater_equal" => binary(&|a, b| format!("{a} >= {b}"))?,
        "logical_and" | "logical_or" | "logical_xor" => {
            let a = byte(0, &broadcast_index(ty(0)?, &out.shape));
            let b = byte(1, &broadcast_index(ty(1)?, &out.shape));
            let f = match op.kind() {
                "logical_and" => "&&",
                "logical_or" => "||",
                _ => "!=",
            };
            (vec![0, 1], format!("{a} {f} {b}"), String::new())
        }
        "logical_not" => (vec![0], format!("!{}", byte(0, "i")), String::new()),
        "select" => {
            let c = byte(0, &broadcast_index(ty(0)?, &out.shape));
            let a = format!("a1[{}]", broadcast_index(ty(1)?, &out.shape));
            let b = format!("a2[{}]", broadcast_index(ty(2)?, &out.shape));
            (vec![0, 1, 2], format!("{c} ? {a} : {b}"), String::new())
        }
        "reverse" => {
            let ins = ty(0)?.to_vec();
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
            (vec![0], format!("a0[{}]", terms.join(" + ")), String::new())
        }
        "argmax" => {
            let ins = ty(0)?.to_vec();
            let axis = axis_attr(op, ins.len())?;
            let mut expect = ins.clone();
            expect.remove(axis);
            if out.shape != expect {
                return Err(unsupported(
                    op,
                    "the output is not the input without the axis",
                ));
            }
            let in_strides = strides(&ins);
            let base = axis_base(&ins, &out.shape, axis, false);
            let helper = format!(
                "int value(uint i) {{ uint b = {base}; float m = a0[b]; int at = 0; \
                 for (uint r = 1u; r < {}u; r++) {{ float v = a0[b + r * {}u]; \
                 if (v > m) {{ m = v; at = int(r); }} }} return at; }}\n",
                ins[axis], in_strides[axis]
            );
            (vec![0], "value(i)".into(), helper)
        }
        "gather" => {
            // values [N, K, C], indices [N, W] -> [N, W, C]
            let (values, indices) = (ty(0)?, ty(1)?);
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
            (vec![0, 1], "value(i)".into(), helper)
        }
        "scatter" => {
            // values_in [N, K, C], indices [N, W], input [N, W, C] -> [N, K, C]
            let (values, indices, input) = (ty(0)?, ty(1)?, ty(2)?);
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
            (vec![0, 1, 2], "value(i)".into(), helper)
        }
        "clamp" => {
            let (lo, hi) = (float_attr(op, "min_val")?, float_attr(op, "max_val")?);
            if out.elem == Elem::I32 {
                unary(&format!("clamp(X, {}, {})", lo as i32, hi as i32))
            } else {
                unary(&format!("clamp(X, {lo:?}, {hi:?})"))
            }
        }
        "add" => binary(&|a, b| format!("{a} + {b}"))?,
        "sub" => binary(&|a, b| format!("{a} - {b}"))?,
        "mul" => {
            // TOSA 1.0's third operand: a right shift of integer products, rounded
            let shift = match op.operands.get(2) {
                Some(_) => constant_operand(graph, op, 2)?
                    .first()
                    .copied()
                    .unwrap_or(0),
                None => 0,
            };
            if shift != 0 && out.elem != Elem::I32 {
                return Err(unsupported(op, "a shift applies to i32 products only"));
            }
            if !(0..=63).contains(&shift) {
                return Err(unsupported(op, format!("shift {shift} is outside 0-63")));
            }
            let (ops, expr, _) = if shift == 0 {
                binary(&|a, b| format!("{a} * {b}"))?
            } else {
                binary(&|a, b| format!("scaled({a}, {b}, {shift}u, false)"))?
            };
            (ops, expr, SCALE64.to_string())
        }
        "rescale" => {
            let ins = ty(0)?;
            let channels = ins.last().copied().unwrap_or(1).max(1) as usize;
            let multiplier = constant_operand(graph, op, 1)?;
            let shift = constant_operand(graph, op, 2)?;
            let (izp, ozp) = (
                constant_operand(graph, op, 3)?
                    .first()
                    .copied()
                    .unwrap_or(0),
                constant_operand(graph, op, 4)?
                    .first()
                    .copied()
                    .unwrap_or(0),
            );
            let per_channel = flag(op, "per_channel");
            let want = if per_channel { channels } else { 1 };
            if multiplier.len() != want || shift.len() != want {
                return Err(unsupported(
                    op,
                    format!(
                        "{want} multipliers and shifts wanted, {} and {} given",
                        multiplier.len(),
                        shift.len()
                    ),
                ));
            }
            if shift.iter().any(|s| !(1..=62).contains(s))
                || multiplier.iter().any(|&m| m < 0 || m > i64::from(i32::MAX))
            {
                return Err(unsupported(
                    op,
                    "shifts must be 1-62 and multipliers non-negative",
                ));
            }
            let double = super::tosa::rounding_mode(op.attrs.get("rounding_mode")) == Some(3);
            let input = match graph.values[op.operands[0]].ty.elem {
                Elem::I8 if flag(op, "input_unsigned") => "int(byte_(0, i))".to_string(),
                Elem::I8 => "(int(byte_(0, i) << 24u) >> 24)".to_string(),
                _ => "a0[i]".to_string(),
            };
            let list = |v: &[i64], suffix: &str| {
                v.iter()
                    .map(|x| format!("{x}{suffix}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let (lo, hi) = match (out.elem, flag(op, "output_unsigned")) {
                (Elem::I8, true) => (0i64, 255i64),
                (Elem::I8, false) => (-128, 127),
                _ => (i64::from(i32::MIN), i64::from(i32::MAX)),
            };
            let c = if per_channel {
                format!("i % {channels}u")
            } else {
                "0u".into()
            };
            let helper = format!(
                "{SCALE64}const int M[{want}] = int[]({});\nconst uint S[{want}] = uint[]({});\n\
                 int value(uint i) {{ int v = {input} - ({izp}); \
                 int r = scaled(v, M[{c}], S[{c}], {double}) + ({ozp}); \
                 return clamp(r, {lo}, {hi}); }}\n",
                list(&multiplier, ""),
                list(&shift, "u"),
            );
            (vec![0], "value(i)".into(), helper)
        }
        "maximum" => binary(&|a, b| format!("max({a}, {b})"))?,
        "minimum" => binary(&|a, b| format!("min({a}, {b})"))?,
        "pow" => binary(&|a, b| format!("pow({a}, {b})"))?,
        "transpose" => {
            let ins = ty(0)?;
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
            (vec![0], format!("a0[{}]", terms.join(" + ")), String::new())
        }
        "matmul" => {
            // [n, h, c] x [n, c, w] -> [n, h, w]
            let (a, b) = (ty(0)?, ty(1)?);
            if a.len() != 3 || b.len() != 3 || a[2] != b[1] {
                return Err(unsupported(op, "matmul needs [N,H,C] x [N,C,W]"));
            }
            let (h, c, w) = (a[1], a[2], b[2]);
            let helper = format!(
                "float value(uint i) {{ uint x = i % {w}u; uint y = (i / {w}u) % {h}u; \
                 uint n = i / {w}u / {h}u; float s = 0.0; \
                 for (uint k = 0u; k < {c}u; k++) s += a0[(n * {h}u + y) * {c}u + k] * \
                 a1[(n * {c}u + k) * {w}u + x]; return s; }}\n"
            );
            (vec![0, 1], "value(i)".into(), helper)
        }
        "conv2d" => {
            // weight [OC, KH, KW, IC]
            let w = ty(1)?;
            let &[oc, kh, kw, ic] = w else {
                return Err(unsupported(op, "the weight must be [OC, KH, KW, IC]"));
            };
            let win = Window::dilated(op, ty(0)?, &out.shape, [kh, kw])?;
            if win.input[3] != ic || win.output[3] != oc {
                return Err(unsupported(
                    op,
                    "channels of input, weight and output disagree",
                ));
            }
            let [_, ih, iw, _] = win.input;
            let body = format!(
                "if (inside) {{ for (uint c = 0u; c < {ic}u; c++) s += \
                 a0[((n * {ih}u + uint(iy)) * {iw}u + uint(ix)) * {ic}u + c] * \
                 a1[((oc * {kh}u + uint(ky)) * {kw}u + uint(kx)) * {ic}u + c]; }}"
            );
            (vec![0, 1, 2], "value(i)".into(), win.summed(&body, ty(2)?))
        }
        "depthwise_conv2d" => {
            // weight [KH, KW, C, M]; output channel c * M + m
            let w = ty(1)?;
            let &[kh, kw, c, m] = w else {
                return Err(unsupported(op, "the weight must be [KH, KW, C, M]"));
            };
            let win = Window::dilated(op, ty(0)?, &out.shape, [kh, kw])?;
            if win.input[3] != c || win.output[3] != c * m {
                return Err(unsupported(
                    op,
                    "channels of input, weight and output disagree",
                ));
            }
            let [_, ih, iw, _] = win.input;
            let body = format!(
                "if (inside) s += a0[((n * {ih}u + uint(iy)) * {iw}u + uint(ix)) * {c}u + oc / {m}u] \
                 * a1[((uint(ky) * {kw}u + uint(kx)) * {c}u + oc / {m}u) * {m}u + oc % {m}u];"
            );
            (vec![0, 1, 2], "value(i)".into(), win.summed(&body, ty(2)?))
        }
        "transpose_conv2d" => {
            // weight [OC, KH, KW, IC]; out[oy, ox] gathers in[iy, ix] with
            // oy = iy * stride_y + out_pad_top + ky
            let (input, w) = (ty(0)?, ty(1)?);
            let (&[_, ih, iw, ic], &[oc, kh, kw, wic]) = (input, w) else {
                return Err(unsupported(
                    op,
                    "input must be NHWC and the weight [OC, KH, KW, IC]",
                ));
            };
            let &[_, oh, ow, ooc] = out.shape.as_slice() else {
                return Err(unsupported(op, "the output must be NHWC"));
            };
            let pad = ints_attr(op, "out_pad", 4)?;
            let stride = ints_attr(op, "stride", 2)?;
            if wic != ic || ooc != oc || stride.iter().any(|&s| s < 1) {
                return Err(unsupported(op, "channels disagree or a stride is below 1"));
            }
            if oh != (ih - 1) * stride[0] + pad[0] + pad[1] + kh
                || ow != (iw - 1) * stride[1] + pad[2] + pad[3] + kw
            {
                return Err(unsupported(
                    op,
                    "the output shape does not follow from the input",
                ));
            }
            let (sy, sx, pt, pl) = (stride[0], stride[1], pad[0], pad[2]);
            let helper = format!(
                "float value(uint i) {{ float s = 0.0;\n\
                 uint oc = i % {oc}u; uint t = i / {oc}u; int ox = int(t % {ow}u); t /= {ow}u; \
                 int oy = int(t % {oh}u); uint n = t / {oh}u;\n\
                 for (int ky = 0; ky < {kh}; ky++) {{ for (int kx = 0; kx < {kw}; kx++) {{\n\
                 int ty = oy - {pt} - ky; int tx = ox - {pl} - kx;\n\
                 if (ty < 0 || tx < 0 || ty % {sy} != 0 || tx % {sx} != 0) continue;\n\
                 int iy = ty / {sy}; int ix = tx / {sx};\n\
                 if (iy >= {ih} || ix >= {iw}) continue;\n\
                 for (uint c = 0u; c < {ic}u; c++) s += \
                 a0[((n * {ih}u + uint(iy)) * {iw}u + uint(ix)) * {ic}u + c] * \
                 a1[((oc * {kh}u + uint(ky)) * {kw}u + uint(kx)) * {ic}u + c];\n\
                 }} }}\nreturn s + {}; }}\n",
                bias(ty(2)?)
            );
            (vec![0, 1, 2], "value(i)".into(), helper)
        }
        "avg_pool2d" | "max_pool2d" => {
            let k = ints_attr(op, "kernel", 2)?;
            let win = Window::new(op, ty(0)?, &out.shape, [k[0], k[1]], [1, 1])?;
            if win.input[3] != win.output[3] {
                return Err(unsupported(op, "input and output channels differ"));
            }
            let [_, ih, iw, c] = win.input;
            if graph.values[op.operands[0]].ty.elem == Elem::I8 {
                let helper = int8_pool(graph, op, &win)?;
                return finish(graph, op, (vec![0], "value(i)".into(), helper));
            }
            let at = format!("a0[((n * {ih}u + uint(iy)) * {iw}u + uint(ix)) * {c}u + oc]");
            // TOSA leaves padding out of both: the average divides by the valid positions only
            let (init, body, result) = if op.kind() == "avg_pool2d" {
                (
                    "float s = 0.0; float count = 0.0;",
                    format!("if (inside) {{ s += {at}; count += 1.0; }}"),
                    "s / max(count, 1.0)",
                )
            } else {
                (
                    "float s = -3.402823466e38;",
                    format!("if (inside) s = max(s, {at});"),
                    "s",
                )
            };
            let helper = format!(
                "float value(uint i) {{ {init}\n{}return {result}; }}\n",
                win.loops(&body)
            );
            (vec![0], "value(i)".into(), helper)
        }
        other => {
            return Err(unsupported(
                op,
                format!("`{other}` has no compute lowering yet (see the README's VGF section)"),
            ));
        }
    };
    // int8 products (convolutions, matmul): int accumulators over loads less the zero points
    let helper = match int8_product_zero_points(graph, op)? {
        Some(zps) => int8_products(&helper, &zps),
        None => helper,
    };
    finish(graph, op, (operands, expr, helper))
}

/// The typed shader of a lowered op: its bindings' element types checked and declared.
fn finish(
    graph: &Graph,
    op: &Op,
    (operands, expr, helper): (Vec<usize>, String, String),
) -> Result<Lowered, LowerError> {
    let result = op.results[0];
    let out = &graph.values[result].ty;
    let n = out.elements();
    // only what the shader binds is typed: shapes, shifts and zero points are not read. Data
    // movement takes 32-bit integers as it takes f32, the index and cast operations their own
    let moves = matches!(
        op.kind(),
        "identity" | "reshape" | "transpose" | "slice" | "tile" | "pad" | "concat" | "reverse"
    );
    let elems: Vec<Elem> = (operands.iter().map(|&i| op.operands[i]))
        .chain([result])
        .map(|v| graph.values[v].ty.elem)
        .collect();
    // fp16 tensors: the op as on f32 (loads widen, the store rounds), every float binding fp16
    let halves = elems.contains(&Elem::F16);
    if halves && elems.contains(&Elem::F32) && op.kind() != "cast" {
        return Err(unsupported(op, "fp16 and f32 tensors mixed in one op"));
    }
    let (expr, helper, typed) = if halves {
        let mut texts = (expr, helper);
        let mut loaders = String::new();
        for b in (0..operands.len()).filter(|&b| elems[b] == Elem::F16) {
            texts = (through_loader(&texts.0, b), through_loader(&texts.1, b));
            loaders.push_str(&format!(
                "float ld{b}(uint i) {{ vec2 v = unpackHalf2x16(a{b}[i / 2u]); \
                 return i % 2u == 0u ? v.x : v.y; }}\n"
            ));
        }
        let typed: Vec<Elem> = (elems.iter())
            .map(|&e| if e == Elem::F16 { Elem::F32 } else { e })
            .collect();
        (texts.0, loaders + &texts.1, typed)
    } else {
        (expr, helper, elems.clone())
    };
    let elems_as_f32 = typed;
    let bools = |k: usize| elems[..k].iter().all(|&e| e == Elem::Bool);
    let ints = |k: usize| elems[..k].iter().all(|&e| e == Elem::I32);
    let typed_ok = match op.kind() {
        "cast" => true,
        "add"
        | "sub"
        | "maximum"
        | "minimum"
        | "mul"
        | "bitwise_and"
        | "bitwise_or"
        | "bitwise_xor"
        | "logical_left_shift"
        | "logical_right_shift"
        | "arithmetic_right_shift"
        | "intdiv" => ints(3),
        "abs" | "negate" | "clamp" | "bitwise_not" | "clz" => ints(2),
        "rescale" => {
            matches!(elems[0], Elem::I8 | Elem::I32) && matches!(elems[1], Elem::I8 | Elem::I32)
        }
        "conv2d" | "depthwise_conv2d" | "transpose_conv2d" => {
            elems == [Elem::I8, Elem::I8, Elem::I32, Elem::I32]
        }
        "matmul" => elems == [Elem::I8, Elem::I8, Elem::I32],
        "avg_pool2d" | "max_pool2d" => elems == [Elem::I8, Elem::I8],
        "equal" | "greater" | "greater_equal" => elems == [Elem::F32, Elem::F32, Elem::Bool],
        "logical_and" | "logical_or" | "logical_xor" => bools(3),
        "logical_not" => bools(2),
        "select" => elems == [Elem::Bool, Elem::F32, Elem::F32, Elem::F32],
        "argmax" => elems == [Elem::F32, Elem::I32],
        "gather" => elems == [Elem::F32, Elem::I32, Elem::F32],
        "scatter" => elems == [Elem::F32, Elem::I32, Elem::F32, Elem::F32],
        _ if moves => elems.iter().all(|&e| e == elems[0] && e == Elem::I32),
        _ => false,
    };
    if !typed_ok && elems_as_f32.iter().any(|&e| e != Elem::F32) {
        return Err(unsupported(
            op,
            "only f32 tensors are lowered (and i32 ones where the op moves values, indexes or casts)",
        ));
    }
    if out.elem == Elem::F16 && !n.is_multiple_of(2) {
        return Err(unsupported(
            op,
            format!("{n} fp16 elements: the lowering writes whole 32-bit words"),
        ));
    }
    if matches!(out.elem, Elem::Bool | Elem::I8) && !n.is_multiple_of(4) {
        return Err(unsupported(
            op,
            format!("{n} boolean elements: the lowering writes whole 32-bit words"),
        ));
    }
    let invocations = u32::try_from(n)
        .map_err(|_| unsupported(op, format!("{n} output elements are too many")))?;
    Ok(generated(&operands, &elems, &expr, &helper, invocations))
}

/// TOSA's int8 `table`: `out = table[in + 128]` over a 256-entry int8 table. Bytes are read and
/// written four to a word, one invocation per word, so no two invocations share a word.
fn table(graph: &Graph, op: &Op, n: usize) -> Result<Lowered, LowerError> {
    let elem = |i: usize| op.operands.get(i).map(|&v| &graph.values[v].ty);
    let out = &graph.values[op.results[0]].ty;
    let int8 = |t: Option<&super::tosa::TensorType>| t.is_some_and(|t| t.elem == Elem::I8);
    if !int8(elem(0))
        || !int8(Some(out))
        || !int8(elem(1))
        || elem(1).map(|t| t.elements()) != Some(256)
    {
        return Err(unsupported(
            op,
            "only the int8 table (int8 input and output, 256 int8 entries) is lowered",
        ));
    }
    if !n.is_multiple_of(4) {
        return Err(unsupported(
            op,
            format!("{n} int8 elements: the lowering needs whole 32-bit words"),
        ));
    }
    let words = n / 4;
    let glsl = format!(
        "#version 450\nlayout(local_size_x = {LOWERED_LOCAL_SIZE}) in;\n\
         layout(set = 0, binding = 0) readonly buffer In0 {{ uint a0[]; }};\n\
         layout(set = 0, binding = 1) readonly buffer In1 {{ uint a1[]; }};\n\
         layout(set = 0, binding = 2) buffer Out {{ uint r[]; }};\n\
         void main() {{ uint w = gl_GlobalInvocationID.x; if (w >= {words}u) return;\n\
         uint x = a0[w]; uint o = 0u;\n\
         for (uint k = 0u; k < 4u; k++) {{ uint at = (((x >> (8u * k)) & 255u) + 128u) & 255u;\n\
         o |= ((a1[at / 4u] >> (8u * (at % 4u))) & 255u) << (8u * k); }}\n\
         r[w] = o; }}\n"
    );
    Ok(Lowered {
        glsl,
        operands: vec![0, 1],
        invocations: words as u32,
    })
}

/// A shader writing `words` to its only binding: how a compute-only file carries a constant
/// (Arm's runtime binds no VGF constant to a compute segment). A splat needs no array.
pub fn constant(words: &[u32]) -> Lowered {
    let n = words.len();
    let mut glsl = format!(
        "#version 450\nlayout(local_size_x = {LOWERED_LOCAL_SIZE}) in;\n\
         layout(set = 0, binding = 0) buffer Out {{ uint r[]; }};\n"
    );
    let value = match words.first() {
        Some(&w) if words.iter().all(|&x| x == w) => format!("{w}u"),
        _ => {
            let list: Vec<String> = words.iter().map(|w| format!("{w}u")).collect();
            writeln!(glsl, "const uint k[{n}] = uint[{n}]({});", list.join(",")).ok();
            "k[i]".into()
        }
    };
    writeln!(
        glsl,
        "void main() {{ uint i = gl_GlobalInvocationID.x; if (i < {n}u) r[i] = {value}; }}"
    )
    .ok();
    Lowered {
        glsl,
        operands: Vec::new(),
        invocations: n as u32,
    }
}

/// A generated shader over `operands`, its bindings then the result's of element types `elems`
/// (f32 or i32).
fn generated(operands: &[usize], elems: &[Elem], expr: &str, helper: &str, n: u32) -> Lowered {
    // booleans are bytes, four to a word: read through `byte`, written a word per invocation
    let glsl_type = |b: usize| match elems.get(b) {
        Some(Elem::I32) => "int",
        Some(Elem::Bool | Elem::I8 | Elem::F16) => "uint",
        _ => "float",
    };
    let mut glsl = String::from("#version 450\n");
    writeln!(glsl, "layout(local_size_x = {LOWERED_LOCAL_SIZE}) in;").ok();
    for (b, _) in operands.iter().enumerate() {
        writeln!(
            glsl,
            "layout(set = 0, binding = {b}) readonly buffer In{b} {{ {} a{b}[]; }};",
            glsl_type(b)
        )
        .ok();
    }
    let out = operands.len();
    writeln!(
        glsl,
        "layout(set = 0, binding = {out}) buffer Out {{ {} r[]; }};",
        glsl_type(out)
    )
    .ok();
    // byte k of a packed operand's element i
    if elems[..operands.len()].contains(&Elem::I8) {
        let reads: Vec<String> = (0..operands.len())
            .filter(|&b| elems[b] == Elem::I8)
            .map(|b| format!("if (k == {b}u) return (a{b}[i / 4u] >> (8u * (i % 4u))) & 255u;"))
            .collect();
        writeln!(
            glsl,
            "uint byte_(uint k, uint i) {{ {} return 0u; }}",
            reads.join(" ")
        )
        .ok();
    }
    glsl.push_str(helper);
    if elems.last() == Some(&Elem::F16) {
        let words = n / 2;
        writeln!(
            glsl,
            "float value_(uint i) {{ return {expr}; }}\n\
             void main() {{ uint w = gl_GlobalInvocationID.x; if (w >= {words}u) return; \
             r[w] = packHalf2x16(vec2(value_(2u * w), value_(2u * w + 1u))); }}"
        )
        .ok();
        return Lowered {
            glsl,
            operands: operands.to_vec(),
            invocations: words,
        };
    }
    if matches!(elems.last(), Some(Elem::Bool | Elem::I8)) {
        let words = n / 4;
        let value = if elems.last() == Some(&Elem::Bool) {
            format!("({expr}) ? 1u : 0u")
        } else {
            format!("uint({expr}) & 255u")
        };
        writeln!(
            glsl,
            "uint value_(uint i) {{ return {value}; }}\n\
             void main() {{ uint w = gl_GlobalInvocationID.x; if (w >= {words}u) return; \
             uint o = 0u; for (uint k = 0u; k < 4u; k++) o |= value_(4u * w + k) << (8u * k); \
             r[w] = o; }}"
        )
        .ok();
        return Lowered {
            glsl,
            operands: operands.to_vec(),
            invocations: words,
        };
    }
    writeln!(
        glsl,
        "void main() {{ uint i = gl_GlobalInvocationID.x; if (i >= {n}u) return; r[i] = {expr}; }}"
    )
    .ok();
    Lowered {
        glsl,
        operands: operands.to_vec(),
        invocations: n,
    }
}

/// The zero points of an int8 product (convolutions: input and weight operands 3 and 4;
/// matmul: A and B operands 2 and 3), `None` where the op is not one on int8 inputs.
fn int8_product_zero_points(graph: &Graph, op: &Op) -> Result<Option<[i64; 2]>, LowerError> {
    let first = match op.kind() {
        "conv2d" | "depthwise_conv2d" | "transpose_conv2d" => 3,
        "matmul" => 2,
        _ => return Ok(None),
    };
    if graph.values[op.operands[0]].ty.elem != Elem::I8 {
        return Ok(None);
    }
    let zp = |k: usize| -> Result<i64, LowerError> {
        Ok(constant_operand(graph, op, k)?
            .first()
            .copied()
            .unwrap_or(0))
    };
    Ok(Some([zp(first)?, zp(first + 1)?]))
}

/// A float product helper (`float value` summing `a0[…] * a1[…]` into `float s`) made an int8 one:
/// int accumulators, operands 0 and 1 read as sign-extended bytes less their zero points.
fn int8_products(helper: &str, zps: &[i64; 2]) -> String {
    let mut body = helper
        .replace("float value(uint i)", "int value(uint i)")
        .replace("float s = 0.0;", "int s = 0;");
    for b in 0..2 {
        body = through_loader(&body, b);
    }
    let loaders: String = (0..2)
        .map(|b| {
            format!(
                "int ld{b}(uint i) {{ return (int(((a{b}[i / 4u] >> (8u * (i % 4u))) & 255u) << 24u) >> 24) - ({}); }}\n",
                zps[b]
            )
        })
        .collect();
    loaders + &body
}

/// `text` with each `a{b}[…]` (brackets balanced) written `ld{b}(…)`.
fn through_loader(text: &str, b: usize) -> String {
    let open = format!("a{b}[");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&open) {
        // not the tail of a longer name (`da0[`)
        let standalone = at == 0
            || !rest[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        out.push_str(&rest[..at]);
        if !standalone {
            out.push_str(&open);
            rest = &rest[at + open.len()..];
            continue;
        }
        let inner = &rest[at + open.len()..];
        let mut depth = 1;
        let end = inner
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '[' => depth += 1,
                    ']' => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
            .map_or(inner.len(), |(i, _)| i);
        out.push_str(&format!("ld{b}({})", &inner[..end]));
        rest = inner.get(end + 1..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

/// An int8 pool's helper: max of the values, or TOSA's average: the sum of the values less the
/// input zero point over the valid positions, scaled by the reciprocal of their count
/// (`reciprocal_scale`, tabled here for every count of the window), plus the output zero point,
/// clamped to int8.
fn int8_pool(graph: &Graph, op: &Op, win: &Window) -> Result<String, LowerError> {
    let [_, ih, iw, c] = win.input;
    let at = format!("ld0(((n * {ih}u + uint(iy)) * {iw}u + uint(ix)) * {c}u + oc)");
    let load = |zp: i64| {
        format!(
            "int ld0(uint i) {{ return (int(((a0[i / 4u] >> (8u * (i % 4u))) & 255u) << 24u) >> 24) - ({zp}); }}\n"
        )
    };
    if op.kind() == "max_pool2d" {
        return Ok(format!(
            "{}int value(uint i) {{ int s = -128;\n{}return s; }}\n",
            load(0),
            win.loops(&format!("if (inside) s = max(s, {at});"))
        ));
    }
    let zp = |k: usize| -> Result<i64, LowerError> {
        Ok(constant_operand(graph, op, k)?
            .first()
            .copied()
            .unwrap_or(0))
    };
    let (izp, ozp) = (zp(1)?, zp(2)?);
    let window = (win.kernel[0].saturating_mul(win.kernel[1])).max(1);
    if window > 1 << 16 {
        return Err(unsupported(
            op,
            format!("a window of {window} values is too large"),
        ));
    }
    // reciprocal_scale(count): k = 32 - clz(count - 1), multiplier ((2^30 + 1) << k) / count,
    // shift 30 + k
    let (mut mult, mut shift) = (Vec::new(), Vec::new());
    for count in 1..=window {
        let k = 64 - ((count - 1) as u64).leading_zeros() as i64;
        let k = if count == 1 { 0 } else { k };
        mult.push(((((1i64 << 30) + 1) << k) / count).to_string());
        shift.push(format!("{}u", 30 + k));
    }
    Ok(format!(
        "{SCALE64}{}const int RM[{window}] = int[]({});\nconst uint RS[{window}] = uint[]({});\n\
         int value(uint i) {{ int s = 0; int count = 0;\n{}\
         if (count == 0) return clamp({ozp}, -128, 127);\n\
         return clamp(scaled(s, RM[count - 1], RS[count - 1], false) + ({ozp}), -128, 127); }}\n",
        load(izp),
        mult.join(", "),
        shift.join(", "),
        win.loops(&format!("if (inside) {{ s += {at}; count += 1; }}"))
    ))
}

/// A boolean operand's element `index` (a GLSL `uint` expression), true where nonzero.
fn byte(binding: usize, index: &str) -> String {
    format!("(((a{binding}[({index}) / 4u] >> (8u * (({index}) % 4u))) & 255u) != 0u)")
}
