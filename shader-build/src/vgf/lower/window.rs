//! Window and product operations: matmul, the convolutions and the pools.

use super::geometry::{Window, bias};
use super::int8::int8_pool;
use super::operand::ints_attr;
use super::tosa::{Elem, Graph, Op, TensorType};
use super::{LowerError, Parts, ty, unsupported};

/// `matmul`: `[N, H, C] × [N, C, W]`.
pub(super) fn matmul(graph: &Graph, op: &Op, _out: &TensorType) -> Result<Parts, LowerError> {
    // [n, h, c] x [n, c, w] -> [n, h, w]
    let (a, b) = (ty(graph, op, 0)?, ty(graph, op, 1)?);
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
    Ok((vec![0, 1], "value(i)".into(), helper))
}

/// `conv2d`: weight `[OC, KH, KW, IC]`.
pub(super) fn conv2d(graph: &Graph, op: &Op, out: &TensorType) -> Result<Parts, LowerError> {
    // weight [OC, KH, KW, IC]
    let w = ty(graph, op, 1)?;
    let &[oc, kh, kw, ic] = w else {
        return Err(unsupported(op, "the weight must be [OC, KH, KW, IC]"));
    };
    let win = Window::dilated(op, ty(graph, op, 0)?, &out.shape, [kh, kw])?;
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
    Ok((
        vec![0, 1, 2],
        "value(i)".into(),
        win.summed(&body, ty(graph, op, 2)?),
    ))
}

/// `depthwise_conv2d`: weight `[KH, KW, C, M]`, output channel `c · M + m`.
pub(super) fn depthwise_conv2d(
    graph: &Graph,
    op: &Op,
    out: &TensorType,
) -> Result<Parts, LowerError> {
    // weight [KH, KW, C, M]; output channel c * M + m
    let w = ty(graph, op, 1)?;
    let &[kh, kw, c, m] = w else {
        return Err(unsupported(op, "the weight must be [KH, KW, C, M]"));
    };
    let win = Window::dilated(op, ty(graph, op, 0)?, &out.shape, [kh, kw])?;
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
    Ok((
        vec![0, 1, 2],
        "value(i)".into(),
        win.summed(&body, ty(graph, op, 2)?),
    ))
}

/// `transpose_conv2d`: weight `[OC, KH, KW, IC]`.
pub(super) fn transpose_conv2d(
    graph: &Graph,
    op: &Op,
    out: &TensorType,
) -> Result<Parts, LowerError> {
    // weight [OC, KH, KW, IC]; out[oy, ox] gathers in[iy, ix] with
    // oy = iy * stride_y + out_pad_top + ky
    let (input, w) = (ty(graph, op, 0)?, ty(graph, op, 1)?);
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
        bias(ty(graph, op, 2)?)
    );
    Ok((vec![0, 1, 2], "value(i)".into(), helper))
}

/// `avg_pool2d` and `max_pool2d` (f32, or int8 through [`super::int8::int8_pool`]).
pub(super) fn pool2d(graph: &Graph, op: &Op, out: &TensorType) -> Result<Parts, LowerError> {
    let k = ints_attr(op, "kernel", 2)?;
    let win = Window::new(op, ty(graph, op, 0)?, &out.shape, [k[0], k[1]], [1, 1])?;
    if win.input[3] != win.output[3] {
        return Err(unsupported(op, "input and output channels differ"));
    }
    let [_, ih, iw, c] = win.input;
    if graph.values[op.operands[0]].ty.elem == Elem::I8 {
        let helper = int8_pool(graph, op, &win)?;
        return Ok((vec![0], "value(i)".into(), helper));
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
    Ok((vec![0], "value(i)".into(), helper))
}
