//! Layers, one file per ncnn layer type (named for it, as ncnn's `src/layer/`): its parameters,
//! weights, [`Support`] flags, CPU math and GPU forward with its shaders. Beside them the
//! contract ([`Layer`], [`Support`]), the run options ([`RunOptions`]), parameters and weights as
//! a model stores them, the registry, and the pieces layers share, each in a file named for
//! what it holds. A layer knows its math and its flags; layouts, precision and placement are
//! the net's.

// the contract and what a model stores
pub mod contract;
pub mod params;
pub mod registry;
pub mod run_options;
pub mod weights;

// shared pieces
pub mod activation;
pub(crate) mod attention;
pub(crate) mod channel_affine;
pub(crate) mod cpu_gemm;
pub mod expression;
pub mod flat;
pub mod fused_activation;
pub mod gather;
pub(crate) mod gemm_rule;
pub(crate) mod gpu_gemm;
pub(crate) mod grain;
pub mod group_pipeline;
pub mod groups;
pub(crate) mod int8;
pub(crate) mod kernels;
pub mod norm_rule;
pub(crate) mod normalize_vec4;
pub(crate) mod phase_planes;
pub mod pipelines;
pub mod reshape_rule;
pub mod rows;
pub mod strided_copy;
pub mod view;
pub mod view_rule;
pub(crate) mod window;

// layer types
pub mod absval;
pub mod argmax;
pub mod batchnorm;
pub mod bias;
pub mod binaryop;
pub mod bnll;
pub(crate) mod broadcast_rule;
pub mod cast;
pub mod clip;
pub mod concat;
pub mod convolution;
pub mod copyto;
pub mod crop;
pub mod cumulativesum;
pub mod deconvolution;
pub mod deepcopy;
pub mod diag;
pub mod dropout;
pub mod einsum;
pub mod eltwise;
pub mod elu;
pub mod embed;
pub mod erf;
pub mod exp;
pub mod expanddims;
pub mod flatten;
pub mod flip;
pub mod gelu;
pub mod gemm;
pub mod glu;
pub mod groupnorm;
pub mod hardsigmoid;
pub mod hardswish;
pub mod innerproduct;
pub mod input;
pub mod instancenorm;
pub mod interp;
pub mod layernorm;
pub mod log;
pub mod lrn;
pub mod matmul;
pub mod memorydata;
pub mod mish;
pub mod multiheadattention;
pub mod mvn;
pub mod noop;
pub mod normalize;
pub mod packing;
pub mod padding;
pub mod permute;
pub mod pixelshuffle;
pub mod pooling;
pub mod power;
pub mod prelu;
pub mod reduction;
pub mod relu;
pub mod reorg;
pub mod reshape;
pub mod rmsnorm;
pub mod rotaryembed;
pub mod scale;
pub mod sdpa;
pub mod selu;
pub mod shrink;
pub mod shufflechannel;
pub mod sigmoid;
pub mod slice;
pub mod softmax;
pub mod softplus;
pub mod split;
pub mod squeeze;
pub mod statisticspooling;
pub mod swish;
pub mod tanh;
pub mod threshold;
pub mod tile;
pub mod unaryop;

pub use contract::{ChannelMoves, GpuSetup, Implements, Layer, Packs, Support, check_contract};
pub use params::{ParamDict, ParamValue};
pub use registry::{BUILTIN, Creator, Registry};
pub use run_options::{FeatureMask, RunOptions};
pub use weights::Weights;
