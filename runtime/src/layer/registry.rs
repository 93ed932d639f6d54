//! Layer types by name: the built-in ones and those a user registers.

use std::collections::HashMap;
use std::sync::Arc;

use crate::layer::activation::ActivationLayer;
use crate::layer::contract::Layer;
use crate::layer::conv::window::depthwise;
use crate::layer::norm::norm_rule::NormLayer;
use crate::layer::shape::reshape_rule::ShapeLayer;
use crate::layer::shape::view_rule::ViewLayer;
use crate::layer::{
    activation::absval::AbsVal, activation::bnll::BNLL, activation::elu::ELU, activation::erf::Erf,
    activation::exp::Exp, activation::log::Log, activation::mish::Mish, activation::power::Power,
    activation::prelu::PReLU, activation::selu::SELU, activation::shrink::Shrink,
    activation::softplus::Softplus, activation::threshold::Threshold, elementwise::bias::Bias,
    elementwise::unaryop::UnaryOp, shape::expanddims::ExpandDims, shape::squeeze::Squeeze,
};
use crate::layer::{
    activation::clip::Clip, activation::dropout::Dropout, activation::gelu::GELU,
    activation::hardsigmoid::HardSigmoid, activation::hardswish::HardSwish, activation::noop::Noop,
    activation::relu::ReLU, activation::sigmoid::Sigmoid, activation::swish::Swish,
    activation::tanh::TanH, conv::convolution::Convolution, conv::deconvolution::Deconvolution,
    elementwise::binaryop::BinaryOp, elementwise::cast::Cast, elementwise::eltwise::Eltwise,
    elementwise::scale::Scale, matrix::innerproduct::InnerProduct, norm::batchnorm::BatchNorm,
    norm::lrn::Lrn, norm::softmax::Softmax, reduce::pooling::Pooling, shape::concat::Concat,
    shape::crop::Crop, shape::flatten::Flatten, shape::input::Input, shape::interp::Interp,
    shape::memorydata::MemoryData, shape::packing::Packing, shape::padding::Padding,
    shape::permute::Permute, shape::reshape::Reshape, shape::shufflechannel::ShuffleChannel,
    shape::slice::Slice, shape::split::Split,
};
use crate::layer::{
    detection::detectionoutput::DetectionOutput, detection::priorbox::PriorBox,
    detection::proposal::Proposal, detection::psroipooling::PSROIPooling,
    detection::roialign::ROIAlign, detection::roipooling::ROIPooling,
    detection::yolodetectionoutput::YoloDetectionOutput,
    detection::yolov3detectionoutput::Yolov3DetectionOutput, reduce::spp::SPP,
};
use crate::layer::{
    matrix::einsum::Einsum, matrix::embed::Embed, matrix::gemm::Gemm, matrix::matmul::MatMul,
    matrix::multiheadattention::MultiHeadAttention, matrix::rotaryembed::RotaryEmbed,
    matrix::sdpa::SDPA, norm::groupnorm::GroupNorm, norm::instancenorm::InstanceNorm,
    norm::layernorm::LayerNorm, norm::mvn::MVN, norm::normalize::Normalize, norm::rmsnorm::RMSNorm,
    reduce::argmax::ArgMax, reduce::cumulativesum::CumulativeSum, reduce::reduction::Reduction,
    reduce::statisticspooling::StatisticsPooling,
};
use crate::layer::{
    quant::dequantize::Dequantize, quant::quantize::Quantize, quant::requantize::Requantize,
};
use crate::layer::{
    shape::copyto::CopyTo, shape::deepcopy::DeepCopy, shape::diag::Diag, shape::flip::Flip,
    shape::glu::GLU, shape::pixelshuffle::PixelShuffle, shape::reorg::Reorg, shape::tile::Tile,
};

/// Makes a fresh layer of one type.
pub type Creator = Arc<dyn Fn() -> Box<dyn Layer> + Send + Sync>;

/// The built-in layer types, by ncnn name.
pub const BUILTIN: &[&str] = &[
    "Input",
    "MemoryData",
    "Split",
    "Flatten",
    "Reshape",
    "ExpandDims",
    "Squeeze",
    "ReLU",
    "Sigmoid",
    "TanH",
    "Clip",
    "Swish",
    "HardSwish",
    "HardSigmoid",
    "GELU",
    "Dropout",
    "Noop",
    "ELU",
    "SELU",
    "Mish",
    "Softplus",
    "Erf",
    "Exp",
    "Log",
    "Power",
    "AbsVal",
    "BNLL",
    "Threshold",
    "Shrink",
    "UnaryOp",
    "PReLU",
    "Bias",
    "BinaryOp",
    "Eltwise",
    "Softmax",
    "Concat",
    "BatchNorm",
    "Scale",
    "InnerProduct",
    "Convolution",
    "ConvolutionDepthWise",
    "LRN",
    "Deconvolution",
    "DeconvolutionDepthWise",
    "Interp",
    "Pooling",
    "Slice",
    "Crop",
    "Permute",
    "ShuffleChannel",
    "Padding",
    "Packing",
    "Cast",
    "PixelShuffle",
    "Reorg",
    "Tile",
    "Flip",
    "DeepCopy",
    "Diag",
    "CopyTo",
    "GLU",
    "LayerNorm",
    "RMSNorm",
    "GroupNorm",
    "InstanceNorm",
    "MVN",
    "Normalize",
    "StatisticsPooling",
    "Reduction",
    "CumulativeSum",
    "ArgMax",
    "Embed",
    "Gemm",
    "MatMul",
    "MultiHeadAttention",
    "SDPA",
    "RotaryEmbed",
    "Einsum",
    "PriorBox",
    "DetectionOutput",
    "YoloDetectionOutput",
    "Yolov3DetectionOutput",
    "ROIPooling",
    "ROIAlign",
    "PSROIPooling",
    "Proposal",
    "SPP",
    "Quantize",
    "Dequantize",
    "Requantize",
];

fn builtin(kind: &str) -> Option<Box<dyn Layer>> {
    Some(match kind {
        "Input" => Box::new(Input),
        "MemoryData" => Box::<MemoryData>::default(),
        "Split" => Box::new(Split),
        "Flatten" => Box::new(Flatten::default()),
        "Reshape" => Box::<Reshape>::default(),
        "ExpandDims" => Box::<ShapeLayer<ExpandDims>>::default(),
        "Squeeze" => Box::<ShapeLayer<Squeeze>>::default(),
        "ReLU" => Box::<ActivationLayer<ReLU>>::default(),
        "Sigmoid" => Box::<ActivationLayer<Sigmoid>>::default(),
        "TanH" => Box::<ActivationLayer<TanH>>::default(),
        "Clip" => Box::<ActivationLayer<Clip>>::default(),
        "Swish" => Box::<ActivationLayer<Swish>>::default(),
        "HardSwish" => Box::<ActivationLayer<HardSwish>>::default(),
        "HardSigmoid" => Box::<ActivationLayer<HardSigmoid>>::default(),
        "GELU" => Box::<ActivationLayer<GELU>>::default(),
        "Dropout" => Box::<ActivationLayer<Dropout>>::default(),
        "Noop" => Box::<ActivationLayer<Noop>>::default(),
        "ELU" => Box::<ActivationLayer<ELU>>::default(),
        "SELU" => Box::<ActivationLayer<SELU>>::default(),
        "Mish" => Box::<ActivationLayer<Mish>>::default(),
        "Softplus" => Box::<ActivationLayer<Softplus>>::default(),
        "Erf" => Box::<ActivationLayer<Erf>>::default(),
        "Exp" => Box::<ActivationLayer<Exp>>::default(),
        "Log" => Box::<ActivationLayer<Log>>::default(),
        "Power" => Box::<ActivationLayer<Power>>::default(),
        "AbsVal" => Box::<ActivationLayer<AbsVal>>::default(),
        "BNLL" => Box::<ActivationLayer<BNLL>>::default(),
        "Threshold" => Box::<ActivationLayer<Threshold>>::default(),
        "Shrink" => Box::<ActivationLayer<Shrink>>::default(),
        "UnaryOp" => Box::<ActivationLayer<UnaryOp>>::default(),
        "PReLU" => Box::<PReLU>::default(),
        "Bias" => Box::<Bias>::default(),
        "BinaryOp" => Box::<BinaryOp>::default(),
        "Eltwise" => Box::<Eltwise>::default(),
        "Softmax" => Box::<Softmax>::default(),
        "Concat" => Box::<Concat>::default(),
        "BatchNorm" => Box::<BatchNorm>::default(),
        "Scale" => Box::<Scale>::default(),
        "InnerProduct" => Box::<InnerProduct>::default(),
        "Convolution" => Box::<Convolution>::default(),
        "ConvolutionDepthWise" => Box::new(depthwise::<Convolution>()),
        "LRN" => Box::<Lrn>::default(),
        "Deconvolution" => Box::<Deconvolution>::default(),
        "DeconvolutionDepthWise" => Box::new(depthwise::<Deconvolution>()),
        "Interp" => Box::<Interp>::default(),
        "Pooling" => Box::<Pooling>::default(),
        "Slice" => Box::<Slice>::default(),
        "Crop" => Box::<Crop>::default(),
        "Permute" => Box::<Permute>::default(),
        "ShuffleChannel" => Box::<ShuffleChannel>::default(),
        "Padding" => Box::<Padding>::default(),
        "Packing" => Box::<Packing>::default(),
        "Cast" => Box::<Cast>::default(),
        "PixelShuffle" => Box::<ViewLayer<PixelShuffle>>::default(),
        "Reorg" => Box::<ViewLayer<Reorg>>::default(),
        "Tile" => Box::<ViewLayer<Tile>>::default(),
        "Flip" => Box::<ViewLayer<Flip>>::default(),
        "DeepCopy" => Box::<ViewLayer<DeepCopy>>::default(),
        "Diag" => Box::<Diag>::default(),
        "CopyTo" => Box::<CopyTo>::default(),
        "GLU" => Box::<GLU>::default(),
        "LayerNorm" => Box::<NormLayer<LayerNorm>>::default(),
        "RMSNorm" => Box::<NormLayer<RMSNorm>>::default(),
        "GroupNorm" => Box::<NormLayer<GroupNorm>>::default(),
        "InstanceNorm" => Box::<NormLayer<InstanceNorm>>::default(),
        "MVN" => Box::<NormLayer<MVN>>::default(),
        "Normalize" => Box::<NormLayer<Normalize>>::default(),
        "StatisticsPooling" => Box::<StatisticsPooling>::default(),
        "Reduction" => Box::<Reduction>::default(),
        "CumulativeSum" => Box::<CumulativeSum>::default(),
        "ArgMax" => Box::<ArgMax>::default(),
        "Embed" => Box::<Embed>::default(),
        "Gemm" => Box::<Gemm>::default(),
        "MatMul" => Box::<MatMul>::default(),
        "MultiHeadAttention" => Box::<MultiHeadAttention>::default(),
        "SDPA" => Box::<SDPA>::default(),
        "RotaryEmbed" => Box::<RotaryEmbed>::default(),
        "Einsum" => Box::<Einsum>::default(),
        "PriorBox" => Box::<PriorBox>::default(),
        "DetectionOutput" => Box::<DetectionOutput>::default(),
        "YoloDetectionOutput" => Box::<YoloDetectionOutput>::default(),
        "Yolov3DetectionOutput" => Box::<Yolov3DetectionOutput>::default(),
        "ROIPooling" => Box::<ROIPooling>::default(),
        "ROIAlign" => Box::<ROIAlign>::default(),
        "PSROIPooling" => Box::<PSROIPooling>::default(),
        "Proposal" => Box::<Proposal>::default(),
        "SPP" => Box::<SPP>::default(),
        "Quantize" => Box::<Quantize>::default(),
        "Dequantize" => Box::<Dequantize>::default(),
        "Requantize" => Box::<Requantize>::default(),
        _ => return None,
    })
}

/// Layer types a net can create: user registrations first, then the built-ins.
#[derive(Clone, Default)]
pub struct Registry {
    custom: HashMap<String, Creator>,
}

impl Registry {
    /// Registers (or replaces) a user layer type.
    pub fn register(&mut self, kind: &str, creator: Creator) {
        self.custom.insert(kind.to_string(), creator);
    }

    /// A new layer of `kind`, if the type is known.
    pub fn create(&self, kind: &str) -> Option<Box<dyn Layer>> {
        match self.custom.get(kind) {
            Some(c) => Some(c()),
            None => builtin(kind),
        }
    }
}
