//! Windowed layers: Convolution and Deconvolution (their depthwise, 1-D and 3-D forms), and
//! what they share: the window parameters, the implicit GEMM, the 1-D forms' view of rows.

pub mod along_rows;
pub mod convolution;
pub mod convolution1d;
pub mod convolution3d;
pub mod deconvolution;
pub mod deconvolution1d;
pub mod deconvolution3d;
pub mod deformableconv2d;
pub(crate) mod implicit_gemm;
pub(crate) mod window;
pub(crate) mod winograd_gpu;
