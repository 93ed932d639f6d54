//! Integer arithmetic as TOSA defines it: `apply_scale_32` (rescale, mul's shift, the int8
//! average), int8 products with zero points, the int8 pools and the int8 table.

use super::geometry::Window;
use super::index::through_loader;
use super::operand::{constant_operand, flag};
use super::tosa::{Elem, Graph, Op, TensorType};
use super::{LOWERED_LOCAL_SIZE, LowerError, Lowered, Parts, ty, unsupported};

/// `scaled(v, m, s, double_round)`: TOSA's `apply_scale_32`, `(v * m + round) >> s` in 64 bits
/// (the product in 16-bit halves, so no 64-bit integers are needed), `round` half of `1 << s`
/// and, with double rounding past 31 bits, 2^30 more away from zero.
pub(super) const SCALE64: &str = "int scaled(int a, int b, uint s, bool dbl) {
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

/// The zero points of an int8 product (convolutions: input and weight operands 3 and 4;
/// matmul: A and B operands 2 and 3), `None` where the op is not one on int8 inputs.
pub(super) fn int8_product_zero_points(
    graph: &Graph,
    op: &Op,
) -> Result<Option<[i64; 2]>, LowerError> {
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
pub(super) fn int8_products(helper: &str, zps: &[i64; 2]) -> String {
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

/// An int8 pool's helper: max of the values, or TOSA's average: the sum of the values less the
/// input zero point over the valid positions, scaled by the reciprocal of their count
/// (`reciprocal_scale`, tabled here for every count of the window), plus the output zero point,
/// clamped to int8.
pub(super) fn int8_pool(graph: &Graph, op: &Op, win: &Window) -> Result<String, LowerError> {
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

/// TOSA's int8 `table`: `out = table[in + 128]` over a 256-entry int8 table. Bytes are read and
/// written four to a word, one invocation per word, so no two invocations share a word.
pub(super) fn table(graph: &Graph, op: &Op, n: usize) -> Result<Lowered, LowerError> {
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

/// `rescale`: TOSA's `apply_scale_32` per tensor or channel, with zero points and clamping.
pub(super) fn rescale(graph: &Graph, op: &Op, out: &TensorType) -> Result<Parts, LowerError> {
    let ins = ty(graph, op, 0)?;
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
    Ok((vec![0], "value(i)".into(), helper))
}
