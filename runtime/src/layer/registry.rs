//! Layer types by name: the built-in ones and those a user registers.

use std::collections::HashMap;
use std::sync::Arc;

use crate::layer::activation::ActivationLayer;
use crate::layer::contract::Layer;
use crate::layer::norm_rule::NormLayer;
use crate::layer::reshape_rule::ShapeLayer;
use crate::layer::view_rule::ViewLayer;
use crate::layer::window::depthwise;
use crate::layer::{
    absval::AbsVal, bias::Bias, bnll::BNLL, elu::ELU, erf::Erf, exp::Exp, expanddims::ExpandDims,
    log::Log, mish::Mish, power::Power, prelu::PReLU, selu::SELU, shrink::Shrink,
    softplus::Softplus, squeeze::Squeeze, threshold::Threshold, unaryop::UnaryOp,
};
use crate::layer::{
    argmax::ArgMax, cumulativesum::CumulativeSum, einsum::Einsum, embed::Embed, gemm::Gemm,
    groupnorm::GroupNorm, instancenorm::InstanceNorm, layernorm::LayerNorm, matmul::MatMul,
    multiheadattention::MultiHeadAttention, mvn::MVN, normalize::Normalize, reduction::Reduction,
    rmsnorm::RMSNorm, rotaryembed::RotaryEmbed, sdpa::SDPA, statisticspooling::StatisticsPooling,
};
use crate::layer::{
    batchnorm::BatchNorm, binaryop::BinaryOp, cast::Cast, clip::Clip, concat::Concat,
    convolution::Convolution, crop::Crop, deconvolution::Deconvolution, dropout::Dropout,
    eltwise::Eltwise, flatten::Flatten, gelu::GELU, hardsigmoid::HardSigmoid, hardswish::HardSwish,
    innerproduct::InnerProduct, input::Input, interp::Interp, lrn::Lrn, memorydata::MemoryData,
    noop::Noop, packing::Packing, padding::Padding, permute::Permute, pooling::Pooling, relu::ReLU,
    reshape::Reshape, scale::Scale, shufflechannel::ShuffleChannel, sigmoid::Sigmoid, slice::Slice,
    softmax::Softmax, split::Split, swish::Swish, tanh::TanH,
};
use crate::layer::{
    copyto::CopyTo, deepcopy::DeepCopy, diag::Diag, flip::Flip, glu::GLU,
    pixelshuffle::PixelShuffle, reorg::Reorg, tile::Tile,
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
