//! Windowed layers: Convolution (and its depthwise form), Deconvolution, and what they share:
//! the window parameters and the implicit GEMM.

pub mod convolution;
pub mod deconvolution;
pub(crate) mod implicit_gemm;
pub(crate) mod window;
