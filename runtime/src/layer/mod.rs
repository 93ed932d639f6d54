//! Layers: ncnn's layer contract ([`Layer`], [`Support`]), the run options ([`Option`]),
//! parameters and weights as a model stores them, the registry, and one file per layer family.
//! A layer knows its math and its flags; layouts, precision and placement are the net's.

pub mod activation;
pub mod arith;
pub mod axis;
pub mod blobs;
pub mod contract;
pub mod convolution;
pub mod deconvolution;
pub mod gpu_util;
pub mod innerproduct;
pub mod interp;
pub(crate) mod kernels;
pub mod lrn;
pub mod option;
pub mod packing;
pub mod padding;
pub mod params;
pub mod permute;
pub mod pooling;
pub mod registry;
pub mod slicing;
pub mod weights;
pub(crate) mod window;

pub use contract::{GpuSetup, Implements, Layer, Support, check_contract};
pub use option::{FeatureMask, Option};
pub use params::{ParamDict, ParamValue};
pub use registry::{BUILTIN, Creator, Registry};
pub use weights::Weights;
