//! Layer types by name: the built-in ones and those a user registers.

use std::collections::HashMap;
use std::sync::Arc;

use crate::layer::activation::Activation;
use crate::layer::arith::{BinaryOp, Eltwise};
use crate::layer::axis::{BatchNorm, Concat, Scale, Softmax};
use crate::layer::blobs::{Flatten, Input, MemoryData, Reshape, Split};
use crate::layer::contract::Layer;
use crate::layer::convolution::Convolution;
use crate::layer::deconvolution::Deconvolution;
use crate::layer::innerproduct::InnerProduct;
use crate::layer::interp::Interp;
use crate::layer::lrn::Lrn;
use crate::layer::packing::{Cast, Packing};
use crate::layer::padding::Padding;
use crate::layer::permute::{Permute, ShuffleChannel};
use crate::layer::pooling::Pooling;
use crate::layer::slicing::{Crop, Slice};

/// Makes a fresh layer of one type.
pub type Creator = Arc<dyn Fn() -> Box<dyn Layer> + Send + Sync>;

/// The built-in layer types, by ncnn name.
pub const BUILTIN: &[&str] = &[
    "Input",
    "MemoryData",
    "Split",
    "Flatten",
    "Reshape",
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
];

fn builtin(kind: &str) -> Option<Box<dyn Layer>> {
    Some(match kind {
        "Input" => Box::new(Input),
        "MemoryData" => Box::<MemoryData>::default(),
        "Split" => Box::new(Split),
        "Flatten" => Box::new(Flatten::default()),
        "Reshape" => Box::<Reshape>::default(),
        "ReLU" => Box::new(Activation::new("ReLU")),
        "Sigmoid" => Box::new(Activation::new("Sigmoid")),
        "TanH" => Box::new(Activation::new("TanH")),
        "Clip" => Box::new(Activation::new("Clip")),
        "Swish" => Box::new(Activation::new("Swish")),
        "HardSwish" => Box::new(Activation::new("HardSwish")),
        "HardSigmoid" => Box::new(Activation::new("HardSigmoid")),
        "GELU" => Box::new(Activation::new("GELU")),
        "Dropout" => Box::new(Activation::new("Dropout")),
        "Noop" => Box::new(Activation::new("Noop")),
        "BinaryOp" => Box::<BinaryOp>::default(),
        "Eltwise" => Box::<Eltwise>::default(),
        "Softmax" => Box::<Softmax>::default(),
        "Concat" => Box::<Concat>::default(),
        "BatchNorm" => Box::<BatchNorm>::default(),
        "Scale" => Box::<Scale>::default(),
        "InnerProduct" => Box::<InnerProduct>::default(),
        "Convolution" => Box::<Convolution>::default(),
        "ConvolutionDepthWise" => Box::new(Convolution::depthwise()),
        "LRN" => Box::<Lrn>::default(),
        "Deconvolution" => Box::<Deconvolution>::default(),
        "DeconvolutionDepthWise" => Box::new(Deconvolution::depthwise()),
        "Interp" => Box::<Interp>::default(),
        "Pooling" => Box::<Pooling>::default(),
        "Slice" => Box::<Slice>::default(),
        "Crop" => Box::<Crop>::default(),
        "Permute" => Box::<Permute>::default(),
        "ShuffleChannel" => Box::<ShuffleChannel>::default(),
        "Padding" => Box::<Padding>::default(),
        "Packing" => Box::<Packing>::default(),
        "Cast" => Box::<Cast>::default(),
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
