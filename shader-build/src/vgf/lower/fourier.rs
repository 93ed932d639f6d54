//! `fft2d` and `rfft2d`: the batched 2-D discrete Fourier transform over `[N, H, W]`, both
//! results (real and imaginary parts) written by one shader, one invocation per output
//! position.
//!
//! Each output sums every input of its batch, as TOSA defines the operator (no normalization;
//! the forward transform's kernel `e^(-2πi(iy·oy/H + ix·ox/W))`, the inverse's its conjugate):
//! O((H·W)²) work, which the small maps these operators see in ML models afford, and no
//! intermediate tensor between a row pass and a column pass (a lowered op is one shader).
//! The phase is reduced in integers first, `(iy·oy mod H)·W + (ix·ox mod W)·H` over `H·W`,
//! so the angle is exact before the one float product with 2π.

use std::fmt::Write as _;

use super::operand::flag;
use super::tosa::{Elem, Graph, Op};
use super::{LOWERED_LOCAL_SIZE, LowerError, Lowered, unsupported};

/// The longest side the lowering takes: `iy·oy` and the integer phase `(…)·W + (…)·H` stay
/// below 2³¹.
const MAX_SIDE: i64 = 1 << 15;

/// Lowers `fft2d` (operands real and imaginary) or `rfft2d` (operand real; the output `W/2 + 1`
/// wide) to one shader binding the operands, then the real and imaginary results.
pub(super) fn fourier(graph: &Graph, op: &Op) -> Result<Lowered, LowerError> {
    let real_input = op.kind() == "rfft2d";
    let inputs = if real_input { 1 } else { 2 };
    if op.operands.len() != inputs || op.results.len() != 2 {
        return Err(unsupported(
            op,
            format!(
                "it takes {inputs} operand(s) and gives 2 results; this one has {} and {}",
                op.operands.len(),
                op.results.len()
            ),
        ));
    }
    let values = op.operands.iter().chain(&op.results);
    if values
        .clone()
        .any(|&v| graph.values[v].ty.elem != Elem::F32)
    {
        return Err(unsupported(op, "only f32 tensors are lowered"));
    }
    let shape = graph.values[op.operands[0]].ty.shape.clone();
    let [n, h, w] = shape[..] else {
        return Err(unsupported(
            op,
            format!("the input {shape:?} is not [N, H, W]"),
        ));
    };
    let ow = if real_input { w / 2 + 1 } else { w };
    let results = [n, h, ow];
    let operand_types = op
        .operands
        .iter()
        .map(|&v| (&graph.values[v].ty, &shape[..]));
    let result_types = op
        .results
        .iter()
        .map(|&v| (&graph.values[v].ty, &results[..]));
    if let Some((t, want)) = operand_types
        .chain(result_types)
        .find(|(t, want)| t.shape != *want)
    {
        return Err(unsupported(
            op,
            format!("a tensor of shape {:?} where {want:?} belongs", t.shape),
        ));
    }
    if n < 1 || !(1..=MAX_SIDE).contains(&h) || !(1..=MAX_SIDE).contains(&w) {
        return Err(unsupported(
            op,
            format!("the plane {h} × {w} (batch {n}) is empty or a side is over {MAX_SIDE}"),
        ));
    }
    let outputs = n * h * ow;
    let invocations = u32::try_from(outputs)
        .map_err(|_| unsupported(op, format!("{outputs} output elements are too many")))?;
    // the forward kernel is e^(-ia): re += vr·cos a + vi·sin a, im += vi·cos a − vr·sin a
    let sign = if flag(op, "inverse") { "-" } else { "" };
    let mut glsl = format!("#version 450\nlayout(local_size_x = {LOWERED_LOCAL_SIZE}) in;\n");
    for b in 0..inputs {
        writeln!(
            glsl,
            "layout(set = 0, binding = {b}) readonly buffer In{b} {{ float a{b}[]; }};"
        )
        .ok();
    }
    for (k, part) in ["re", "im"].iter().enumerate() {
        writeln!(
            glsl,
            "layout(set = 0, binding = {}) buffer Out{k} {{ float {part}_[]; }};",
            inputs + k
        )
        .ok();
    }
    let imag = if real_input { "0.0" } else { "a1[k]" };
    let plane = h * w;
    writeln!(
        glsl,
        "void main() {{\n\
         uint i = gl_GlobalInvocationID.x; if (i >= {outputs}u) return;\n\
         uint ox = i % {ow}u; uint oy = (i / {ow}u) % {h}u; uint base = (i / {}u) * {plane}u;\n\
         float re = 0.0; float im = 0.0;\n\
         for (uint iy = 0u; iy < {h}u; iy++) {{\n\
         uint py = ((iy * oy) % {h}u) * {w}u;\n\
         for (uint ix = 0u; ix < {w}u; ix++) {{\n\
         uint k = base + iy * {w}u + ix;\n\
         uint p = (py + ((ix * ox) % {w}u) * {h}u) % {plane}u;\n\
         float a = {sign}6.283185307179586 * (float(p) / {plane}.0);\n\
         float c = cos(a); float s = sin(a);\n\
         float vr = a0[k]; float vi = {imag};\n\
         re += vr * c + vi * s; im += vi * c - vr * s;\n\
         }} }}\n\
         re_[i] = re; im_[i] = im;\n}}",
        h * ow
    )
    .ok();
    Ok(Lowered {
        glsl,
        operands: (0..inputs).collect(),
        invocations,
    })
}

#[cfg(test)]
mod tests {
    use crate::vgf::tosa::mlir;

    /// The lowering of the first op of `body` (a function of `args`).
    fn lowered(args: &str, body: &str, rets: &str) -> Result<super::Lowered, super::LowerError> {
        let text = format!("func.func @main({args}) -> ({rets}) {{\n{body}\n}}\n");
        let graph = mlir::parse("t.mlir", &text).unwrap();
        super::super::lower(&graph, &graph.ops[0])
    }

    #[test]
    fn shapes_and_types_outside_the_operator_are_refused_by_location() {
        let f = "tensor<1x4x8xf32>";
        let ok = lowered(
            &format!("%a: {f}, %b: {f}"),
            &format!("  %0, %1 = tosa.fft2d %a, %b {{inverse = true}} : ({f}, {f}) -> ({f}, {f})\n  return %0, %1 : {f}, {f}"),
            &format!("{f}, {f}"),
        )
        .unwrap();
        assert_eq!((ok.operands, ok.invocations), (vec![0, 1], 32));
        assert!(
            ok.glsl.contains("-6.28"),
            "the inverse's sign:\n{}",
            ok.glsl
        );

        let r = "tensor<1x4x4xf32>";
        let err = lowered(
            &format!("%a: {f}"),
            &format!("  %0, %1 = tosa.rfft2d %a : ({f}) -> ({r}, {r})\n  return %0, %1 : {r}, {r}"),
            &format!("{r}, {r}"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("2:11: `tosa.rfft2d` cannot be lowered")
                && err.contains("[1, 4, 4] where [1, 4, 5] belongs"),
            "{err}"
        );

        let i = "tensor<1x4x8xi32>";
        let err = lowered(
            &format!("%a: {i}, %b: {i}"),
            &format!("  %0, %1 = tosa.fft2d %a, %b {{inverse = false}} : ({i}, {i}) -> ({i}, {i})\n  return %0, %1 : {i}, {i}"),
            &format!("{i}, {i}"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("only f32 tensors"), "{err}");

        let v = "tensor<4x8xf32>";
        let err = lowered(
            &format!("%a: {v}"),
            &format!("  %0, %1 = tosa.rfft2d %a : ({v}) -> ({v}, {v})\n  return %0, %1 : {v}, {v}"),
            &format!("{v}, {v}"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("[4, 8] is not [N, H, W]"), "{err}");
    }
}
