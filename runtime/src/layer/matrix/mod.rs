//! Matrix products and attention: Gemm, MatMul, InnerProduct, Einsum, MultiHeadAttention,
//! SDPA, RotaryEmbed and Embed.

pub(crate) mod attention;
pub mod einsum;
pub mod embed;
pub mod gemm;
pub(crate) mod gemm_rule;
pub mod innerproduct;
pub mod matmul;
pub mod multiheadattention;
pub mod rotaryembed;
pub mod sdpa;
