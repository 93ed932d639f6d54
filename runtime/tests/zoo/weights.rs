//! Random weights for a `.param` in ncnn's `.bin` format, in each layer's load order (ncnn's
//! `load_model`: tagged "type 0" loads for kernels, raw "type 1" loads for biases, scales and
//! affine parameters). Kernels are uniform with variance 1.5 / fan-in: activations neither
//! vanish over vgg16's plain stack nor pass fp16's range over resnet50's residual sums.
//!
//! int8 layers (`8=int8_scale_term`) get int8 kernels (random levels) with per-output scales
//! that give the same variance, and one activation scale, [`ACTIVATION_SCALE`], for every
//! input and requantized output: what ncnn's calibration would write for activations within ±6.

use super::common::Rng;

/// The int8 scale of every activation (`127 / absmax`, absmax 6).
pub const ACTIVATION_SCALE: f32 = 127.0 / 6.0;

const TAG_INT8: u32 = 0x000D_4B38;

/// `k=v` of a param line (arrays and shape hints skipped).
pub fn param_value(fields: &[&str], key: &str) -> Option<usize> {
    param_text(fields, key).and_then(|v| v.parse().ok())
}

fn param_text<'a>(fields: &[&'a str], key: &str) -> Option<&'a str> {
    fields
        .iter()
        .find_map(|f| f.strip_prefix(&format!("{key}=")))
}

/// Writes one layer's loads.
struct Bin<'r> {
    rng: &'r mut Rng,
    bytes: Vec<u8>,
}

impl Bin<'_> {
    fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (self.rng.next() + 1.0) * 0.5 * (hi - lo)
    }

    /// A raw fp32 load of `n` values in `[lo, hi]`.
    fn raw(&mut self, n: usize, lo: f32, hi: f32) {
        for _ in 0..n {
            let v = self.uniform(lo, hi);
            self.bytes.extend(v.to_le_bytes());
        }
    }

    /// A tagged fp32 kernel of `n` values, uniform within ±`sqrt(4.5 / fan_in)`.
    fn kernel(&mut self, n: usize, fan_in: usize) {
        let bound = (4.5 / fan_in.max(1) as f32).sqrt();
        self.bytes.extend(0u32.to_le_bytes());
        self.raw(n, -bound, bound);
    }

    /// A tagged int8 kernel of `n` levels in `outputs` rows, then the rows' scales (raw),
    /// `scales` of them (1 for a depthwise layer's shared scale): the levels over their
    /// scale have [`Bin::kernel`]'s range.
    fn int8_kernel(&mut self, n: usize, outputs: usize, scales: usize) -> Vec<f32> {
        let fan_in = n / outputs.max(1);
        let bound = (4.5 / fan_in.max(1) as f32).sqrt();
        self.bytes.extend(TAG_INT8.to_le_bytes());
        for _ in 0..n {
            let level = (self.rng.next() * 127.0).round() as i8;
            self.bytes.push(level as u8);
        }
        self.bytes
            .resize(self.bytes.len() + (n.div_ceil(4) * 4 - n), 0);
        (0..scales)
            .map(|_| 127.0 / bound * self.uniform(0.8, 1.2))
            .collect()
    }

    fn floats(&mut self, values: &[f32]) {
        self.bytes
            .extend(values.iter().flat_map(|v| v.to_le_bytes()));
    }
}

/// A param (`fc6` resized to `fc6_inputs` inputs where given) and random weights for it; the
/// last blob.
pub fn with_random_weights(
    rng: &mut Rng,
    param: &str,
    fc6_inputs: Option<usize>,
) -> (String, Vec<u8>, String) {
    let mut lines: Vec<String> = param.lines().map(str::to_string).collect();
    let mut bin = Bin {
        rng,
        bytes: Vec::new(),
    };
    let mut last_top = String::new();
    // ncnn reads as many layers as the header declares (nanodet_m's file holds one more)
    let declared: usize = lines[1].split_whitespace().next().unwrap().parse().unwrap();
    for line in lines.iter_mut().skip(2).take(declared) {
        let text = line.clone();
        let fields: Vec<&str> = text.split_whitespace().collect();
        let Some(kind) = fields.first().copied() else {
            continue;
        };
        let (bottoms, tops) = (
            fields[2].parse::<usize>().unwrap(),
            fields[3].parse::<usize>().unwrap(),
        );
        last_top = fields[4 + bottoms + tops - 1].to_string();
        let get = |k: &str| param_value(&fields, k);
        match kind {
            "Convolution"
            | "ConvolutionDepthWise"
            | "Deconvolution"
            | "DeconvolutionDepthWise"
            | "InnerProduct" => {
                let outputs = get("0").unwrap();
                let (size_key, bias_key) = match kind {
                    "InnerProduct" => ("2", "1"),
                    _ => ("6", "5"),
                };
                let mut size = get(size_key).unwrap();
                if let (Some(inputs), "fc6") = (fc6_inputs, fields[1]) {
                    let resized = inputs * outputs;
                    *line = line.replace(&format!(" 2={size}"), &format!(" 2={resized}"));
                    size = resized;
                }
                let int8 = get("8").unwrap_or(0);
                let depthwise = kind == "ConvolutionDepthWise";
                let group = get("7").unwrap_or(1);
                let scales = match int8 {
                    0 => {
                        bin.kernel(size, size / outputs);
                        Vec::new()
                    }
                    // a depthwise layer's one shared scale (2, 102) or one per group
                    2 | 102 if depthwise => bin.int8_kernel(size, outputs, 1),
                    _ if depthwise => bin.int8_kernel(size, outputs, group),
                    _ => bin.int8_kernel(size, outputs, outputs),
                };
                if get(bias_key) == Some(1) {
                    bin.raw(outputs, -0.1, 0.1);
                }
                if int8 != 0 {
                    bin.floats(&scales);
                    bin.floats(&[ACTIVATION_SCALE]);
                }
                if int8 > 100 {
                    bin.floats(&[ACTIVATION_SCALE]);
                }
            }
            "BatchNorm" => {
                // slope, mean, variance (positive), bias
                let c = get("0").unwrap();
                for (lo, hi) in [(0.5, 1.5), (-0.2, 0.2), (0.5, 1.5), (-0.2, 0.2)] {
                    bin.raw(c, lo, hi);
                }
            }
            "MemoryData" => {
                let n = ["0", "1", "11", "2"]
                    .iter()
                    .map(|k| get(k).unwrap_or(1).max(1))
                    .product();
                bin.raw(n, -1.0, 1.0);
            }
            "LayerNorm" | "RMSNorm" if get("2") == Some(1) => {
                let n = get("0").unwrap();
                bin.raw(n, 0.5, 1.5);
                if kind == "LayerNorm" {
                    bin.raw(n, -0.2, 0.2);
                }
            }
            "Gemm" => {
                let (m, n, k) = (get("7"), get("8"), get("9"));
                let k = k.unwrap_or(0);
                if get("4") == Some(1) {
                    bin.kernel(m.unwrap() * k, k);
                }
                if get("5") == Some(1) {
                    bin.kernel(n.unwrap() * k, k);
                }
                let c_size = match param_text(&fields, "10").unwrap_or("-1") {
                    "0" => 1,
                    "1" | "2" => m.unwrap(),
                    "3" => m.unwrap() * n.unwrap(),
                    "4" => n.unwrap(),
                    _ => 0,
                };
                if get("6") == Some(1) && c_size > 0 {
                    bin.bytes.extend(0u32.to_le_bytes());
                    bin.raw(c_size, -0.1, 0.1);
                }
            }
            "MultiHeadAttention" => {
                let e = get("0").unwrap();
                let qdim = get("2").unwrap() / e;
                let (kdim, vdim) = (get("3").unwrap_or(e), get("4").unwrap_or(e));
                for (inputs, outputs) in [(qdim, e), (kdim, e), (vdim, e), (e, qdim)] {
                    bin.kernel(inputs * outputs, inputs);
                    bin.raw(outputs, -0.1, 0.1);
                }
            }
            _ => {}
        }
    }
    (lines.join("\n") + "\n", bin.bytes, last_top)
}
