//! GLSL index arithmetic: coordinates, strides, broadcasts, and reads of packed operands.

/// The index into an input of `in_shape` for output element `i` of `out_shape`, broadcasting
/// dimensions of size 1 (TOSA's rule: equal ranks).
pub(super) fn broadcast_index(in_shape: &[i64], out_shape: &[i64]) -> String {
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

/// `terms` as a GLSL sum, `0u` for none.
pub(super) fn sum(terms: Vec<String>) -> String {
    if terms.is_empty() {
        "0u".into()
    } else {
        terms.join(" + ")
    }
}

/// The input index of output element `i` with the input's `axis` at 0: the output has the
/// other axes, and the axis itself as 1 where `kept` (reductions) or not at all (argmax).
pub(super) fn axis_base(ins: &[i64], out_shape: &[i64], axis: usize, kept: bool) -> String {
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
pub(super) fn strides(shape: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

/// GLSL for coordinate `d` of output element `i` of `out_shape`.
pub(super) fn coord(out_shape: &[i64], d: usize) -> String {
    format!(
        "((i / {}u) % {}u)",
        strides(out_shape)[d],
        out_shape[d].max(1)
    )
}

/// `text` with each `a{b}[…]` (brackets balanced) written `ld{b}(…)`.
pub(super) fn through_loader(text: &str, b: usize) -> String {
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

/// A boolean operand's element `index` (a GLSL `uint` expression), true where nonzero.
pub(super) fn byte(binding: usize, index: &str) -> String {
    format!("(((a{binding}[({index}) / 4u] >> (8u * (({index}) % 4u))) & 255u) != 0u)")
}
