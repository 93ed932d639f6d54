//! ncnn's `.param` text: `7767517`, `layer_count blob_count`, then one line per layer:
//! `Type name bottom_count top_count bottoms… tops… id=value…`; and its binary twin
//! `.param.bin` (ncnn2mem's output: type indices instead of names, blob indices, raw words).

use crate::error::{Error, ModelError, Result};
use crate::layer::{ParamDict, ParamValue};

/// One layer line.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerLine {
    /// The layer type.
    pub kind: String,
    /// The layer name.
    pub name: String,
    /// Input blob names.
    pub bottoms: Vec<String>,
    /// Output blob names.
    pub tops: Vec<String>,
    /// Its parameters.
    pub params: ParamDict,
    /// Where it came from: `line N` (text) or `byte N` (binary).
    pub location: String,
}

/// A parsed `.param`.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamFile {
    /// The layers, in file order (which ncnn requires to be topological).
    pub layers: Vec<LayerLine>,
    /// The blob count the header declares.
    pub blob_count: usize,
}

const MAGIC: &str = "7767517";
/// Header counts beyond this are refused rather than allocated.
const MAX_COUNT: usize = 1 << 20;

fn value(text: &str) -> std::result::Result<ParamValue, String> {
    if let Some(s) = text.strip_prefix('"') {
        return s
            .strip_suffix('"')
            .map(|s| ParamValue::Str(s.to_string()))
            .ok_or_else(|| format!("unterminated string {text}"));
    }
    // ncnn reads a value that starts with a letter as a string too
    if text.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Ok(ParamValue::Str(text.to_string()));
    }
    let is_float = text.contains(['.', 'e', 'E']) && !text.starts_with("0x");
    if is_float {
        text.parse::<f32>()
            .map(ParamValue::Float)
            .map_err(|_| format!("bad float `{text}`"))
    } else {
        text.parse::<i32>()
            .map(ParamValue::Int)
            .map_err(|_| format!("bad integer `{text}`"))
    }
}

/// Parses `.param` text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<ParamFile> {
    let fail = |line: usize, message: String| -> Error {
        ModelError::Param {
            file: file.to_string(),
            location: format!("line {line}"),
            message,
        }
        .into()
    };
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let (n, magic) = lines
        .next()
        .ok_or_else(|| fail(1, "empty file; expected the magic 7767517".into()))?;
    if magic != MAGIC {
        return Err(fail(
            n,
            format!("magic `{magic}`; expected {MAGIC} (is this an ncnn .param?)"),
        ));
    }
    let (n, counts) = lines
        .next()
        .ok_or_else(|| fail(n + 1, "missing `layer_count blob_count`".into()))?;
    let counts: Vec<usize> = counts
        .split_whitespace()
        .map(|t| t.parse::<usize>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| fail(n, format!("bad counts `{counts}`")))?;
    let [layer_count, blob_count] = counts[..] else {
        return Err(fail(n, "expected `layer_count blob_count`".into()));
    };
    if layer_count > MAX_COUNT || blob_count > MAX_COUNT {
        return Err(fail(
            n,
            format!("implausible counts {layer_count} {blob_count}"),
        ));
    }
    let mut layers = Vec::with_capacity(layer_count);
    for (n, line) in lines {
        // ncnn reads the declared layers and nothing after them: ncnn's own
        // benchmark/nanodet_m.param declares 179 layers and has a 180th (a Noop) that ncnn
        // never reads
        if layers.len() == layer_count {
            break;
        }
        let mut tokens = line.split_whitespace();
        let mut next = |what: &str| {
            tokens
                .next()
                .ok_or_else(|| fail(n, format!("missing {what}")))
        };
        let kind = next("layer type")?.to_string();
        let name = next("layer name")?.to_string();
        let count = |t: &str, what: &str| {
            t.parse::<usize>()
                .ok()
                .filter(|c| *c <= MAX_COUNT)
                .ok_or_else(|| fail(n, format!("bad {what} `{t}`")))
        };
        let bottom_count = count(next("bottom count")?, "bottom count")?;
        let top_count = count(next("top count")?, "top count")?;
        let mut names = |k: usize, what: &str| -> Result<Vec<String>> {
            (0..k).map(|_| next(what).map(str::to_string)).collect()
        };
        let bottoms = names(bottom_count, "bottom blob name")?;
        let tops = names(top_count, "top blob name")?;
        let mut params = ParamDict::new();
        for kv in tokens {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| fail(n, format!("`{kv}` is not id=value")))?;
            let id: i32 = k
                .parse()
                .map_err(|_| fail(n, format!("bad parameter id `{k}`")))?;
            if id <= -23300 {
                let id = -id - 23300;
                let (count, rest) = v.split_once(',').unwrap_or((v, ""));
                let count: usize = count
                    .parse()
                    .map_err(|_| fail(n, format!("bad array length in `{kv}`")))?;
                let items: Vec<&str> = rest.split(',').filter(|s| !s.is_empty()).collect();
                if items.len() != count {
                    return Err(fail(
                        n,
                        format!("array {id} declares {count} values, has {}", items.len()),
                    ));
                }
                let values = items
                    .iter()
                    .map(|t| value(t))
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map_err(|m| fail(n, m))?;
                params.set(id as u32, ParamValue::Array(values));
            } else if (0..32).contains(&id) {
                params.set(id as u32, value(v).map_err(|m| fail(n, m))?);
            } else {
                return Err(fail(n, format!("parameter id {id} out of range 0..32")));
            }
        }
        layers.push(LayerLine {
            kind,
            name,
            bottoms,
            tops,
            params,
            location: format!("line {n}"),
        });
    }
    if layers.len() != layer_count {
        return Err(fail(
            text.lines().count(),
            format!(
                "the header declares {layer_count} layers, the file has {}",
                layers.len()
            ),
        ));
    }
    Ok(ParamFile { layers, blob_count })
}

/// ncnn's built-in layer types in the order of its type index (its `layer_type_enum`), which
/// `.param.bin` stores instead of names.
pub const LAYER_TYPE_INDEX: &[&str] = &[
    "AbsVal",
    "ArgMax",
    "BatchNorm",
    "Bias",
    "BNLL",
    "Concat",
    "Convolution",
    "Crop",
    "Deconvolution",
    "Dropout",
    "Eltwise",
    "ELU",
    "Embed",
    "Exp",
    "Flatten",
    "InnerProduct",
    "Input",
    "Log",
    "LRN",
    "MemoryData",
    "MVN",
    "Pooling",
    "Power",
    "PReLU",
    "Proposal",
    "Reduction",
    "ReLU",
    "Reshape",
    "ROIPooling",
    "Scale",
    "Sigmoid",
    "Slice",
    "Softmax",
    "Split",
    "SPP",
    "TanH",
    "Threshold",
    "Tile",
    "RNN",
    "LSTM",
    "BinaryOp",
    "UnaryOp",
    "ConvolutionDepthWise",
    "Padding",
    "Squeeze",
    "ExpandDims",
    "Normalize",
    "Permute",
    "PriorBox",
    "DetectionOutput",
    "Interp",
    "DeconvolutionDepthWise",
    "ShuffleChannel",
    "InstanceNorm",
    "Clip",
    "Reorg",
    "YoloDetectionOutput",
    "Quantize",
    "Dequantize",
    "Yolov3DetectionOutput",
    "PSROIPooling",
    "ROIAlign",
    "Packing",
    "Requantize",
    "Cast",
    "HardSigmoid",
    "SELU",
    "HardSwish",
    "Noop",
    "PixelShuffle",
    "DeepCopy",
    "Mish",
    "StatisticsPooling",
    "Swish",
    "Gemm",
    "GroupNorm",
    "LayerNorm",
    "Softplus",
    "GRU",
    "MultiHeadAttention",
    "GELU",
    "Convolution1D",
    "Pooling1D",
    "ConvolutionDepthWise1D",
    "Convolution3D",
    "ConvolutionDepthWise3D",
    "Pooling3D",
    "MatMul",
    "Deconvolution1D",
    "DeconvolutionDepthWise1D",
    "Deconvolution3D",
    "DeconvolutionDepthWise3D",
    "Einsum",
    "DeformableConv2D",
    "GLU",
    "Fold",
    "Unfold",
    "GridSample",
    "CumulativeSum",
    "CopyTo",
    "Erf",
    "Diag",
    "CELU",
    "Shrink",
    "RMSNorm",
    "Spectrogram",
    "InverseSpectrogram",
    "Flip",
    "SDPA",
    "RotaryEmbed",
];

/// The type-index bit that marks a user layer in `.param.bin`.
const CUSTOM_BIT: i32 = 1 << 8;
/// Ends one layer's parameters in `.param.bin`.
const END_OF_PARAMS: i32 = -233;

/// The layer type that `.param.bin` type index `index` names: an ncnn built-in, or for a user
/// layer (ncnn's custom bit) `custom#N`, the name to register it under.
pub fn type_name(index: i32) -> Option<String> {
    if index & CUSTOM_BIT != 0 {
        return Some(format!("custom#{}", index & !CUSTOM_BIT));
    }
    usize::try_from(index)
        .ok()
        .and_then(|i| LAYER_TYPE_INDEX.get(i))
        .map(|s| s.to_string())
}

/// Little-endian 32-bit words with the byte offset of each, for errors.
struct Words<'a> {
    bytes: &'a [u8],
    at: usize,
    file: &'a str,
}

impl Words<'_> {
    fn fail(&self, at: usize, message: String) -> Error {
        ModelError::Param {
            file: self.file.to_string(),
            location: format!("byte {at}"),
            message,
        }
        .into()
    }

    fn next(&mut self, what: &str) -> Result<i32> {
        let at = self.at;
        let word = self
            .bytes
            .get(at..at + 4)
            .ok_or_else(|| self.fail(at, format!("file ends where {what} should be")))?;
        self.at += 4;
        Ok(i32::from_le_bytes([word[0], word[1], word[2], word[3]]))
    }

    fn count(&mut self, what: &str, max: usize) -> Result<usize> {
        let at = self.at;
        let n = self.next(what)?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= max)
            .ok_or_else(|| self.fail(at, format!("bad {what} {n}")))
    }
}

/// Parses `.param.bin` bytes; `file` names it in errors. Blobs and layers have no names in
/// this format: both are named by their index (`"0"`, `"1"`, …), as ncnn addresses them.
pub fn parse_bin(file: &str, bytes: &[u8]) -> Result<ParamFile> {
    let mut w = Words { bytes, at: 0, file };
    let magic = w.next("the magic")?;
    if magic != 7_767_517 {
        return Err(w.fail(
            0,
            format!("magic {magic}; expected 7767517 (is this an ncnn .param.bin?)"),
        ));
    }
    let layer_count = w.count("layer count", MAX_COUNT)?;
    let blob_count = w.count("blob count", MAX_COUNT)?;
    let mut layers = Vec::with_capacity(layer_count.min(bytes.len() / 16));
    for i in 0..layer_count {
        let start = w.at;
        let index = w.next("a layer type index")?;
        let kind = type_name(index)
            .ok_or_else(|| w.fail(start, format!("layer type index {index} is not ncnn's")))?;
        let bottom_count = w.count("bottom count", MAX_COUNT)?;
        let top_count = w.count("top count", MAX_COUNT)?;
        let mut blob_names = |k: usize, what: &str| -> Result<Vec<String>> {
            (0..k)
                .map(|_| {
                    w.count(what, blob_count.saturating_sub(1))
                        .map(|b| b.to_string())
                })
                .collect()
        };
        let bottoms = blob_names(bottom_count, "bottom blob index")?;
        let tops = blob_names(top_count, "top blob index")?;
        let mut params = ParamDict::new();
        loop {
            let at = w.at;
            let id = w.next("a parameter id")?;
            if id == END_OF_PARAMS {
                break;
            }
            if id <= -23400 {
                let id = -id - 23400;
                if !(0..32).contains(&id) {
                    return Err(w.fail(at, format!("string parameter id {id} out of range 0..32")));
                }
                let len = w.count("string length", 255)?;
                let start = w.at;
                let bytes = w
                    .bytes
                    .get(start..start + len.div_ceil(4) * 4)
                    .ok_or_else(|| w.fail(start, "file ends inside a string".into()))?;
                w.at += bytes.len();
                let text = String::from_utf8_lossy(&bytes[..len]);
                let text = text.trim_end_matches('\0').to_string();
                params.set(id as u32, ParamValue::Str(text));
            } else if id <= -23300 {
                let id = -id - 23300;
                if !(0..32).contains(&id) {
                    return Err(w.fail(at, format!("array parameter id {id} out of range 0..32")));
                }
                let len = w.count("array length", MAX_COUNT)?;
                let values = (0..len)
                    .map(|_| w.next("an array value").map(|v| ParamValue::Word(v as u32)))
                    .collect::<Result<Vec<_>>>()?;
                params.set(id as u32, ParamValue::Array(values));
            } else if (0..32).contains(&id) {
                let v = w.next("a parameter value")?;
                params.set(id as u32, ParamValue::Word(v as u32));
            } else {
                return Err(w.fail(at, format!("parameter id {id} out of range 0..32")));
            }
        }
        layers.push(LayerLine {
            kind,
            name: i.to_string(),
            bottoms,
            tops,
            params,
            location: format!("byte {start}"),
        });
    }
    Ok(ParamFile { layers, blob_count })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NET: &str = "7767517\n3 3\nInput data 0 1 data 0=4 1=1 2=2\n\
        ReLU relu 1 1 data r 0=0.1\nReshape rs 1 1 r out -23300=2,3,4 1=1e-2 2=\"x\"\n";

    #[test]
    fn parses_values_arrays_and_strings() {
        let p = parse("t", NET).unwrap();
        assert_eq!(p.layers.len(), 3);
        assert_eq!(p.layers[1].params.float(0, 0.0), 0.1);
        assert_eq!(p.layers[2].params.ints(0), [3, 4]);
        assert_eq!(p.layers[2].params.float(1, 0.0), 0.01);
        assert_eq!(
            p.layers[2].params.get(2),
            Some(&ParamValue::Str("x".into()))
        );
        assert_eq!(p.layers[2].location, "line 5");
    }

    #[test]
    fn every_truncation_and_mutation_is_an_error_or_a_parse_never_a_panic() {
        for cut in 0..NET.len() {
            let _ = parse("t", &NET[..cut]);
        }
        let bytes = NET.as_bytes();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..5000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut b = bytes.to_vec();
            let at = (seed % b.len() as u64) as usize;
            b[at] = (seed >> 32) as u8;
            let _ = parse("t", &String::from_utf8_lossy(&b));
        }
        assert!(matches!(
            parse("t", "7767518\n"),
            Err(Error::Model(ModelError::Param { .. }))
        ));
        let e = parse("t", "7767517\n1 1\nReLU r 1 1 a\n").unwrap_err();
        assert!(e.to_string().contains("line 3"), "{e}");
    }

    #[test]
    fn lines_after_the_declared_layers_are_not_read_as_ncnn_does() {
        // nanodet_m.param of ncnn's benchmark folder: a Noop after the declared count
        let text = NET.replace("3 3\n", "2 2\n");
        let p = parse("t", &text).unwrap();
        assert_eq!(p.layers.len(), 2);
        assert_eq!(p.layers[1].kind, "ReLU");
        // fewer layers than declared stays an error, as in ncnn
        let e = parse("t", &NET.replace("3 3\n", "4 4\n")).unwrap_err();
        assert!(e.to_string().contains("declares 4 layers"), "{e}");
    }

    /// Input (type 16) then ReLU (type 26) with slope 0.1 and an int array.
    fn bin_net() -> Vec<u8> {
        let words: [i32; 19] = [
            7767517,
            2,
            2,
            16,
            0,
            1,
            0,
            -233,
            26,
            1,
            1,
            0,
            1,
            0,
            0.1f32.to_bits() as i32,
            -23301,
            1,
            7,
            -233,
        ];
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn param_bin_reads_type_indices_blob_indices_and_raw_words() {
        let p = parse_bin("t", &bin_net()).unwrap();
        assert_eq!(p.layers[0].kind, "Input");
        assert_eq!(p.layers[1].kind, "ReLU");
        assert_eq!(p.layers[1].bottoms, ["0"]);
        assert_eq!(p.layers[1].tops, ["1"]);
        assert_eq!(p.layers[1].params.float(0, 0.0), 0.1);
        assert_eq!(p.layers[1].params.ints(1), [7]);
        assert_eq!(p.layers[1].location, "byte 32");
        assert_eq!(type_name(6).as_deref(), Some("Convolution"));
        assert_eq!(type_name(256 + 3).as_deref(), Some("custom#3"));
        assert_eq!(type_name(100_000), None);
    }

    #[test]
    fn every_param_bin_truncation_and_mutation_is_an_error_or_a_parse_never_a_panic() {
        let bytes = bin_net();
        for cut in 0..bytes.len() {
            assert!(parse_bin("t", &bytes[..cut]).is_err(), "cut {cut}");
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..5000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut b = bytes.clone();
            let at = (seed % b.len() as u64) as usize;
            b[at] = (seed >> 32) as u8;
            let _ = parse_bin("t", &b);
        }
    }
}
