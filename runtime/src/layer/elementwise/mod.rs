//! Elementwise layers over one or more blobs: BinaryOp and Eltwise (with ncnn's broadcast
//! rule), UnaryOp, Bias, Scale and Cast.

pub mod bias;
pub(crate) mod binary_gpu;
pub mod binaryop;
pub(crate) mod broadcast_rule;
pub mod cast;
pub mod eltwise;
pub mod scale;
pub mod unaryop;
