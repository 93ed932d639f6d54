//! Every layer type ncnn's wheel registers against fpshader's registry: the 110 names of ncnn's
//! `src/CMakeLists.txt` (`ncnn_add_layer`), each registered in the wheel
//! (`ncnn.layer_to_index(name) >= 0`), and each creatable by fpshader but those still to come,
//! listed by name: a type added must leave that list, so the list is what is missing.

use fpshader::layer::Registry;

/// ncnn's layer types, in `ncnn_add_layer` order.
const NCNN_TYPES: [&str; 110] = [
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
    "Spectrogram",
    "InverseSpectrogram",
    "RMSNorm",
    "SDPA",
    "RotaryEmbed",
    "Flip",
    "Shrink",
    "CELU",
];

/// The types fpshader does not have yet: the recurrent, 1-D and 3-D, sampling and spectrogram
/// ones.
const NOT_YET: &[&str] = &[
    "RNN",
    "LSTM",
    "GRU",
    "Convolution1D",
    "Pooling1D",
    "ConvolutionDepthWise1D",
    "Convolution3D",
    "ConvolutionDepthWise3D",
    "Pooling3D",
    "Deconvolution1D",
    "DeconvolutionDepthWise1D",
    "Deconvolution3D",
    "DeconvolutionDepthWise3D",
    "DeformableConv2D",
    "GridSample",
    "Spectrogram",
    "InverseSpectrogram",
];

#[test]
fn every_type_ncnn_registers_is_in_the_registry_but_those_listed() {
    // the list is the wheel's: each name registered there
    if std::env::var_os("FPSHADER_SKIP_NCNN").is_none() {
        let python = std::env::var_os("FPSHADER_NCNN_PYTHON")
            .expect("FPSHADER_NCNN_PYTHON (cargo xtask test sets it), or FPSHADER_SKIP_NCNN=1");
        let script = "import sys, ncnn\n\
                      print(' '.join(n for n in sys.argv[1:] if ncnn.layer_to_index(n) < 0))";
        let out = std::process::Command::new(python)
            .arg("-c")
            .arg(script)
            .args(NCNN_TYPES)
            .output()
            .expect("the oracle's python runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let unknown = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(
            unknown.is_empty(),
            "not registered in ncnn's wheel: {unknown}"
        );
    }
    let registry = Registry::default();
    let missing: Vec<&str> = (NCNN_TYPES.iter().copied())
        .filter(|name| registry.create(name).is_none())
        .collect();
    assert_eq!(
        missing, NOT_YET,
        "fpshader's missing types against the list"
    );
}
