//! The TOSA operation sets run against numpy: FFT, casts, integer, fp16, int8, resize and boolean ops.

use super::*;

/// fft2d forward (of a computed value) and inverse (no normalization), rfft2d (W/2 + 1
/// columns), each result a model output.
pub(crate) const FFT: &str = "func.func @main(%arg0: tensor<2x4x8xf32>, %arg1: tensor<2x4x8xf32>, %arg2: tensor<1x8x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x8x5xf32>, tensor<1x8x5xf32>) {
  %a = tosa.abs %arg0 : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %0, %1 = tosa.fft2d %a, %arg1 {inverse = false} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>)
  %2, %3 = tosa.fft2d %arg0, %arg1 {inverse = true, local_bound = true} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>)
  %4, %5 = tosa.rfft2d %arg2 : (tensor<1x8x8xf32>) -> (tensor<1x8x5xf32>, tensor<1x8x5xf32>)
  return %0, %1, %2, %3, %4, %5 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x8x5xf32>, tensor<1x8x5xf32>
}
";

/// fft2d's results fed on: through the inverse (H·W times the input) and added.
pub(crate) const FFT_CHAIN: &str = "func.func @main(%arg0: tensor<2x4x8xf32>, %arg1: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0, %1 = tosa.fft2d %arg0, %arg1 {inverse = false} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>)
  %2, %3 = tosa.fft2d %0, %1 {inverse = true} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>)
  %4 = tosa.add %2, %3 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %4 : tensor<2x4x8xf32>
}
";

/// Casts between f32, fp16, i32, int8 and booleans: rounding ties to even, saturating from
/// floats, narrowing integers to their low bits.
pub(crate) const CASTS: &str = "func.func @main(%arg0: tensor<64xf32>) -> (tensor<64xi8>, tensor<64xi8>, tensor<64xf32>, tensor<64xi32>, tensor<64xf16>, tensor<64xf32>) {
  %k = \"tosa.const\"() <{values = dense<300.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = \"tosa.const\"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %x = tosa.mul %arg0, %k, %shift : (tensor<64xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<64xf32>
  %0 = tosa.cast %x : (tensor<64xf32>) -> tensor<64xi8>
  %i = tosa.cast %x : (tensor<64xf32>) -> tensor<64xi32>
  %1 = tosa.cast %i : (tensor<64xi32>) -> tensor<64xi8>
  %2 = tosa.cast %0 : (tensor<64xi8>) -> tensor<64xf32>
  %b = tosa.cast %i : (tensor<64xi32>) -> tensor<64xi1>
  %3 = tosa.cast %b : (tensor<64xi1>) -> tensor<64xi32>
  %4 = tosa.cast %arg0 : (tensor<64xf32>) -> tensor<64xf16>
  %5 = tosa.cast %4 : (tensor<64xf16>) -> tensor<64xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<64xi8>, tensor<64xi8>, tensor<64xf32>, tensor<64xi32>, tensor<64xf16>, tensor<64xf32>
}
";

/// i32 bit operations: and/or/xor/not, the three shifts (the arithmetic one rounded), intdiv and
/// clz.
pub(crate) const INT_OPS: &str = "func.func @main(%arg0: tensor<64xi32>, %arg1: tensor<64xi32>) -> (tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>) {
  %s = \"tosa.const\"() <{values = dense<3> : tensor<1xi32>}> : () -> tensor<1xi32>
  %d = \"tosa.const\"() <{values = dense<7> : tensor<1xi32>}> : () -> tensor<1xi32>
  %0 = tosa.bitwise_and %arg0, %arg1 : (tensor<64xi32>, tensor<64xi32>) -> tensor<64xi32>
  %1 = tosa.bitwise_or %arg0, %arg1 : (tensor<64xi32>, tensor<64xi32>) -> tensor<64xi32>
  %2 = tosa.bitwise_xor %arg0, %arg1 : (tensor<64xi32>, tensor<64xi32>) -> tensor<64xi32>
  %3 = tosa.bitwise_not %arg0 : (tensor<64xi32>) -> tensor<64xi32>
  %4 = tosa.logical_left_shift %arg0, %s : (tensor<64xi32>, tensor<1xi32>) -> tensor<64xi32>
  %5 = tosa.logical_right_shift %arg0, %s : (tensor<64xi32>, tensor<1xi32>) -> tensor<64xi32>
  %6 = tosa.arithmetic_right_shift %arg0, %s {round = true} : (tensor<64xi32>, tensor<1xi32>) -> tensor<64xi32>
  %7 = tosa.intdiv %arg0, %d : (tensor<64xi32>, tensor<1xi32>) -> tensor<64xi32>
  %8 = tosa.clz %arg0 : (tensor<64xi32>) -> tensor<64xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>, tensor<64xi32>
}
";

/// fp16 tensors: elementwise, a sigmoid, a transpose, a reduction and a matmul, each computed
/// in fp32 and stored rounded to fp16.
pub(crate) const FP16_OPS: &str = "func.func @main(%arg0: tensor<4x8xf16>, %arg1: tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>, tensor<8x4xf16>, tensor<4x1xf16>, tensor<4x8xf16>, tensor<1x4x4xf16>) {
  %0 = tosa.add %arg0, %arg1 : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %1 = tosa.sigmoid %arg0 : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %2 = tosa.transpose %arg0 {perms = array<i32: 1, 0>} : (tensor<4x8xf16>) -> tensor<8x4xf16>
  %3 = tosa.reduce_sum %arg1 {axis = 1 : i32} : (tensor<4x8xf16>) -> tensor<4x1xf16>
  %shift = \"tosa.const\"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %4 = tosa.mul %arg0, %arg1, %shift : (tensor<4x8xf16>, tensor<4x8xf16>, tensor<1xi8>) -> tensor<4x8xf16>
  %s3 = tosa.const_shape {values = dense<[1, 4, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %a = tosa.reshape %arg0, %s3 : (tensor<4x8xf16>, !tosa.shape<3>) -> tensor<1x4x8xf16>
  %s3b = tosa.const_shape {values = dense<[1, 8, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %b = tosa.reshape %2, %s3b : (tensor<8x4xf16>, !tosa.shape<3>) -> tensor<1x8x4xf16>
  %zp = \"tosa.const\"() <{values = dense<0.0> : tensor<1xf16>}> : () -> tensor<1xf16>
  %5 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf16>, tensor<1x8x4xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x4x4xf16>
  return %0, %1, %2, %3, %4, %5 : tensor<4x8xf16>, tensor<4x8xf16>, tensor<8x4xf16>, tensor<4x1xf16>, tensor<4x8xf16>, tensor<1x4x4xf16>
}
";

/// `values` (row-major) as MLIR's nested `dense<…>` list of `shape`.
pub(crate) fn nested(values: &[i64], shape: &[usize]) -> String {
    match shape {
        [] | [_] => format!(
            "[{}]",
            values
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        [_, rest @ ..] => {
            let step: usize = rest.iter().product();
            let parts: Vec<String> = values
                .chunks(step)
                .map(|chunk| nested(chunk, rest))
                .collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

/// The int8 operations of a quantized network: conv2d, depthwise_conv2d, transpose_conv2d and
/// matmul to i32 with input and weight zero points, avg_pool2d (zero points, TOSA's reciprocal scale) and
/// max_pool2d to int8. Weights follow small patterns numpy recomputes.
pub(crate) fn int8_conv() -> String {
    let pattern = |n: usize, mul: i64, modulo: i64| -> Vec<i64> {
        (0..n as i64)
            .map(|k| k * mul % modulo - modulo / 2)
            .collect()
    };
    let w = nested(&pattern(4 * 3 * 3 * 4, 37, 11), &[4, 3, 3, 4]);
    let dw = nested(&pattern(3 * 3 * 4 * 2, 29, 13), &[3, 3, 4, 2]);
    let mb = nested(&pattern(6 * 4, 7, 9), &[1, 6, 4]);
    let tw = nested(&pattern(2 * 2 * 2 * 4, 5, 7), &[2, 2, 2, 4]);
    format!(
        "func.func @main(%arg0: tensor<1x6x6x4xi8>, %arg1: tensor<1x4x6xi8>) -> (tensor<1x6x6x4xi32>, tensor<1x3x3x8xi32>, tensor<1x4x4xi32>, tensor<1x6x6x4xi8>, tensor<1x3x3x4xi8>, tensor<1x12x12x2xi32>) {{
  %w = \"tosa.const\"() <{{values = dense<{w}> : tensor<4x3x3x4xi8>}}> : () -> tensor<4x3x3x4xi8>
  %b = \"tosa.const\"() <{{values = dense<[10, -20, 30, 0]> : tensor<4xi32>}}> : () -> tensor<4xi32>
  %izp = \"tosa.const\"() <{{values = dense<2> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %wzp = \"tosa.const\"() <{{values = dense<-1> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %0 = tosa.conv2d %arg0, %w, %b, %izp, %wzp {{acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}} : (tensor<1x6x6x4xi8>, tensor<4x3x3x4xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x6x6x4xi32>
  %dw = \"tosa.const\"() <{{values = dense<{dw}> : tensor<3x3x4x2xi8>}}> : () -> tensor<3x3x4x2xi8>
  %db = \"tosa.const\"() <{{values = dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi32>}}> : () -> tensor<8xi32>
  %1 = tosa.depthwise_conv2d %arg0, %dw, %db, %izp, %wzp {{acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 0, 1, 0>, stride = array<i64: 2, 2>}} : (tensor<1x6x6x4xi8>, tensor<3x3x4x2xi8>, tensor<8xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x3x8xi32>
  %mb = \"tosa.const\"() <{{values = dense<{mb}> : tensor<1x6x4xi8>}}> : () -> tensor<1x6x4xi8>
  %azp = \"tosa.const\"() <{{values = dense<1> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %bzp = \"tosa.const\"() <{{values = dense<0> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %2 = tosa.matmul %arg1, %mb, %azp, %bzp : (tensor<1x4x6xi8>, tensor<1x6x4xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4xi32>
  %pizp = \"tosa.const\"() <{{values = dense<1> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %pozp = \"tosa.const\"() <{{values = dense<-3> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %3 = tosa.avg_pool2d %arg0, %pizp, %pozp {{acc_type = i32, kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}} : (tensor<1x6x6x4xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x6x6x4xi8>
  %4 = tosa.max_pool2d %arg0 {{kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>}} : (tensor<1x6x6x4xi8>) -> tensor<1x3x3x4xi8>
  %tw = \"tosa.const\"() <{{values = dense<{tw}> : tensor<2x2x2x4xi8>}}> : () -> tensor<2x2x2x4xi8>
  %tb = \"tosa.const\"() <{{values = dense<[5, -5]> : tensor<2xi32>}}> : () -> tensor<2xi32>
  %5 = tosa.transpose_conv2d %arg0, %tw, %tb, %izp, %wzp {{acc_type = i32, out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>}} : (tensor<1x6x6x4xi8>, tensor<2x2x2x4xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x12x12x2xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<1x6x6x4xi32>, tensor<1x3x3x8xi32>, tensor<1x4x4xi32>, tensor<1x6x6x4xi8>, tensor<1x3x3x4xi8>, tensor<1x12x12x2xi32>
}}
"
    )
}

/// The integer path of a quantized network: int8 rescaled to i32 (input zero point, single
/// rounding), i32 arithmetic, a product shifted right, and i32 rescaled to int8 (double rounding
/// past 31 bits, output zero point, clamped).
pub(crate) const INT8_OPS: &str = "func.func @main(%arg0: tensor<64xi8>) -> (tensor<64xi8>, tensor<64xi32>) {
  %m1 = \"tosa.const\"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s1 = \"tosa.const\"() <{values = dense<31> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = \"tosa.const\"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp0 = \"tosa.const\"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %0 = tosa.rescale %arg0, %m1, %s1, %izp, %zp0 {scale32 = true, rounding_mode = SINGLE_ROUND, per_channel = false, input_unsigned = false, output_unsigned = false} : (tensor<64xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<64xi32>
  %c = \"tosa.const\"() <{values = dense<-7> : tensor<64xi32>}> : () -> tensor<64xi32>
  %1 = tosa.add %0, %c : (tensor<64xi32>, tensor<64xi32>) -> tensor<64xi32>
  %m2 = \"tosa.const\"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s2 = \"tosa.const\"() <{values = dense<33> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp2 = \"tosa.const\"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = \"tosa.const\"() <{values = dense<-5> : tensor<1xi8>}> : () -> tensor<1xi8>
  %2 = tosa.rescale %1, %m2, %s2, %izp2, %ozp {scale32 = true, rounding_mode = DOUBLE_ROUND, per_channel = false, input_unsigned = false, output_unsigned = false} : (tensor<64xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<64xi8>
  %shift = \"tosa.const\"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %3 = tosa.mul %1, %1, %shift : (tensor<64xi32>, tensor<64xi32>, tensor<1xi8>) -> tensor<64xi32>
  return %2, %3 : tensor<64xi8>, tensor<64xi32>
}
";

/// TOSA resize: bilinear 2x up, and nearest at 4/3 × 5/2 with offsets and borders (the shapes
/// follow TOSA's `((IH - 1) * scale_n - offset + border) / scale_d + 1`, wholly divisible).
pub(crate) const RESIZE: &str = "func.func @main(%arg0: tensor<1x4x5x2xf32>) -> (tensor<1x7x9x2xf32>, tensor<1x5x11x2xf32>) {
  %s2 = tosa.const_shape {values = dense<[2, 1, 2, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %zero = tosa.const_shape {values = dense<[0, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.resize %arg0, %s2, %zero, %zero {mode = BILINEAR} : (tensor<1x4x5x2xf32>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x7x9x2xf32>
  %s = tosa.const_shape {values = dense<[4, 3, 5, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %off = tosa.const_shape {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %b = tosa.const_shape {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %1 = tosa.resize %arg0, %s, %off, %b {mode = NEAREST_NEIGHBOR} : (tensor<1x4x5x2xf32>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x5x11x2xf32>
  return %0, %1 : tensor<1x7x9x2xf32>, tensor<1x5x11x2xf32>
}
";

/// TOSA resize of int8: nearest to int8 (rounding at 2·d ≥ scale_n) and bilinear to i32 (the
/// integer weights, undivided), at the scales, offsets and borders of [`RESIZE`].
pub(crate) const INT_RESIZE: &str = "func.func @main(%arg0: tensor<1x4x5x4xi8>) -> (tensor<1x7x9x4xi32>, tensor<1x5x11x4xi8>) {
  %s2 = tosa.const_shape {values = dense<[2, 1, 2, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %zero = tosa.const_shape {values = dense<[0, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.resize %arg0, %s2, %zero, %zero {mode = BILINEAR} : (tensor<1x4x5x4xi8>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x7x9x4xi32>
  %s = tosa.const_shape {values = dense<[4, 3, 5, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %off = tosa.const_shape {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %b = tosa.const_shape {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %1 = tosa.resize %arg0, %s, %off, %b {mode = NEAREST_NEIGHBOR} : (tensor<1x4x5x4xi8>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x5x11x4xi8>
  return %0, %1 : tensor<1x7x9x4xi32>, tensor<1x5x11x4xi8>
}
";

/// Comparisons, logical operations and select: booleans made and used inside the model.
pub(crate) const BOOL_OPS: &str = "func.func @main(%arg0: tensor<4x4xf32>, %arg1: tensor<4x4xf32>) -> (tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xf32>) {
  %k = tosa.clamp %arg0 {min_val = 0.0 : f32, max_val = 1.0 : f32} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = tosa.equal %k, %arg0 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xi1>
  %g = tosa.greater %arg0, %arg1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xi1>
  %ge = tosa.greater_equal %arg1, %k : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xi1>
  %and = tosa.logical_and %e, %g : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  %or = tosa.logical_or %e, %ge : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  %xor = tosa.logical_xor %g, %ge : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  %not = tosa.logical_not %g : (tensor<4x4xi1>) -> tensor<4x4xi1>
  %sel = tosa.select %g, %arg0, %arg1 : (tensor<4x4xi1>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %e, %and, %or, %xor, %not, %sel : tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xi1>, tensor<4x4xf32>
}
";

/// The shader models: abs → a SPIR-V custom shader (axpy) → exp (a graph segment, a compute
/// segment and a graph segment in Arm's file), and a constant fed to the shader (a graph that
/// only passes the constant on); SPIR-V so that Arm's converter carries the shader as we run it.
pub(crate) fn shader_models() -> Vec<(&'static str, String)> {
    use base64::Engine as _;
    let words = compiler()
        .compile_str("axpy", GLSL_AXPY, Default::default())
        .unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytemuck::cast_slice(&words));
    let glsl_op = custom("%1", &["%0", "%arg1"], "axpy", Some(GLSL_AXPY));
    // same attributes, the code swapped for another language's
    let escaped = |s: &str| {
        let json = serde_json::to_string(s).unwrap();
        json[1..json.len() - 1]
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
    };
    let swap = |language: &str, code: &str| {
        let op = glsl_op
            .replace(&escaped(GLSL_AXPY), &escaped(code))
            .replace("\\\"GLSL\\\"", &format!("\\\"{language}\\\""));
        assert!(op.contains(language) && op.contains(&escaped(code)));
        op
    };
    let spirv_op = swap("SPIR-V", &b64);
    // a shader of local size 16 dispatched as 4 workgroups (Arm's reading of workgroup_sizes),
    // whose values say how many workgroups ran
    let counted = GLSL_AXPY.replace(
        "c[i] = a[i] * 2.0 + b[i];",
        "c[i] = a[i] * 2.0 + b[i] + float(gl_NumWorkGroups.x);",
    );
    assert_ne!(counted, GLSL_AXPY);
    let count_op = swap("GLSL", &counted).replace("[16,1,1]", "[4,1,1]");
    // the operands in descriptor set 1, the result in set 0
    let sets_glsl = GLSL_AXPY
        .replace("set=0, binding=0", "set=1, binding=0")
        .replace("set=0, binding=1", "set=1, binding=1")
        .replace("set=0, binding=2", "set=0, binding=0");
    assert_eq!(sets_glsl.matches("set=1").count(), 2);
    let sets_op = swap("GLSL", &sets_glsl)
        .replace("input_0_descriptorset\\\":0", "input_0_descriptorset\\\":1")
        .replace("input_1_descriptorset\\\":0", "input_1_descriptorset\\\":1")
        .replace("output_0_binding\\\":2", "output_0_binding\\\":0");
    assert!(
        sets_op.contains("input_1_descriptorset\\\":1")
            && sets_op.contains("output_0_binding\\\":0")
    );
    assert!(count_op.contains("[4,1,1]"));
    let hlsl_op = swap("HLSL", HLSL_AXPY);
    let k =
        "  %k = \"tosa.const\"() <{values = dense<0.5> : tensor<64xf32>}> : () -> tensor<64xf32>\n";
    // abs → the shader `op` (writing %1) → exp
    let chained = |op: &str| {
        func(
            2,
            &(unary("%0", "abs", "%arg0") + op + &unary("%2", "exp", "%1")),
            "%2",
        )
    };
    vec![
        ("shader", chained(&spirv_op)),
        ("glsl", chained(&glsl_op)),
        (
            "hlsl",
            func(2, &(unary("%0", "abs", "%arg0") + &hlsl_op), "%1"),
        ),
        (
            "passthrough",
            func_returning(
                2,
                &(unary("%0", "abs", "%arg0") + &glsl_op),
                &["%arg0", "%1"],
            ),
        ),
        ("sets", chained(&sets_op)),
        ("count", chained(&count_op)),
        (
            "constant_shader",
            func(
                1,
                &(k.to_string() + &spirv_op.replace("%0, %arg1", "%arg0, %k")),
                "%1",
            ),
        ),
    ]
}
