//! TOSA operations lowered to compute shaders: one generated GLSL shader per operation, its
//! shapes folded in as constants, one invocation per output element. Used ahead of time by
//! `fpshaderc vgf --compute-only` (compiled with shaderc) and at load time by the runtime for
//! the data-graph segments of VGFs that Arm's converter wrote (compiled with naga), so the
//! text stays within what both GLSL front ends accept.

mod fourier;
mod geometry;
mod index;
mod int8;
mod movement;
mod operand;
mod reduce;
mod window;

use std::fmt::Write as _;

use super::tosa::{self, Elem, Graph, Op};
use index::{broadcast_index, byte, through_loader};
use int8::{SCALE64, int8_product_zero_points, int8_products, table};
use operand::{constant_operand, flag, float_attr};

/// A lowered op before typing: the operands it binds, the output's expression of `i`, and the
/// GLSL helpers the expression calls.
type Parts = (Vec<usize>, String, String);

/// The shape of operand `v` of `op`.
fn ty<'g>(graph: &'g Graph, op: &Op, v: usize) -> Result<&'g [i64], LowerError> {
    op.operands
        .get(v)
        .map(|&id| graph.values[id].ty.shape.as_slice())
        .ok_or_else(|| unsupported(op, format!("operand {v} is missing")))
}

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

/// A lowered ML operation: GLSL reading `operands` (bindings 0…) and writing the op's results
/// (the bindings after them, in result order), dispatched over `invocations` in x.
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

/// `erf(x)`: a series near zero, Abramowitz and Stegun 7.1.26 (error below 1.5e-7) beyond.
const ERF: &str = "float erf_(float x) { float a = abs(x); if (a < 0.5) { float x2 = x * x; \
return x * 1.1283791671 * (1.0 + x2 * (-1.0 / 3.0 + x2 * (0.1 + x2 * (-1.0 / 42.0 + x2 / 216.0)))); } \
float t = 1.0 / (1.0 + 0.3275911 * a); \
float y = 1.0 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + \
t * 1.061405429)))) * exp(-a * a); return x < 0.0 ? -y : y; }\n";

/// Lowers one ML op of `graph` (not a constant) to a compute shader.
pub fn lower(graph: &Graph, op: &Op) -> Result<Lowered, LowerError> {
    if matches!(op.kind(), "fft2d" | "rfft2d") {
        return fourier::fourier(graph, op);
    }
    let [result] = op.results[..] else {
        return Err(unsupported(op, "it does not have exactly one result"));
    };
    let out = &graph.values[result].ty;
    let ty = |v: usize| ty(graph, op, v);
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
        "slice" | "tile" | "pad" => movement::slice_tile_pad(graph, op, out)?,
        "concat" => movement::concat(graph, op, out)?,
        "reduce_sum" | "reduce_max" | "reduce_min" | "reduce_product" => {
            reduce::reduce(graph, op, out)?
        }
        "table" => return table(graph, op, n),
        "identity" | "reshape" => unary("X"),
        "cast" => reduce::cast(graph, op, out)?,
        "resize" => movement::resize(graph, op, out)?,
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
        "reverse" => movement::reverse(graph, op, out)?,
        "argmax" => reduce::argmax(graph, op, out)?,
        "gather" => movement::gather(graph, op, out)?,
        "scatter" => movement::scatter(graph, op, out)?,
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
        "rescale" => int8::rescale(graph, op, out)?,
        "maximum" => binary(&|a, b| format!("max({a}, {b})"))?,
        "minimum" => binary(&|a, b| format!("min({a}, {b})"))?,
        "pow" => binary(&|a, b| format!("pow({a}, {b})"))?,
        "transpose" => movement::transpose(graph, op, out)?,
        "matmul" => window::matmul(graph, op, out)?,
        "conv2d" => window::conv2d(graph, op, out)?,
        "depthwise_conv2d" => window::depthwise_conv2d(graph, op, out)?,
        "transpose_conv2d" => window::transpose_conv2d(graph, op, out)?,
        "avg_pool2d" | "max_pool2d" => window::pool2d(graph, op, out)?,
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
        // the combinations `movement::resize` takes
        "resize" => matches!(elems[..], [Elem::I8, Elem::I8 | Elem::I32]),
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
