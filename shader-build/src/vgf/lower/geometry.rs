//! The window geometry of the convolutions and pools: kernel, stride, dilation and padding
//! over an NHWC input, and the loops a lowered shader runs over it.

use super::operand::ints_attr;
use super::tosa::Op;
use super::{LowerError, unsupported};

/// NHWC geometry of a 2-D window operation, checked against the output's shape.
pub(super) struct Window {
    /// Input and output `[N, H, W, C]`.
    pub(super) input: [i64; 4],
    pub(super) output: [i64; 4],
    pub(super) kernel: [i64; 2],
    pub(super) stride: [i64; 2],
    pub(super) dilation: [i64; 2],
    /// Top and left padding.
    pub(super) pad: [i64; 2],
}

impl Window {
    pub(super) fn new(
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
    pub(super) fn dilated(
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
    pub(super) fn summed(&self, body: &str, bias_shape: &[i64]) -> String {
        format!(
            "float value(uint i) {{ float s = 0.0;\n{}return s + {}; }}\n",
            self.loops(body),
            bias(bias_shape)
        )
    }

    /// GLSL that splits output element `i` into `n, oy, ox, oc` and loops `ky, kx` over the
    /// window, with `iy, ix` the input position and `inside` whether it is not padding; `body`
    /// runs inside both loops.
    pub(super) fn loops(&self, body: &str) -> String {
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
pub(super) fn bias(shape: &[i64]) -> &'static str {
    if shape.iter().product::<i64>() == 1 {
        "a2[0]"
    } else {
        "a2[oc]"
    }
}
