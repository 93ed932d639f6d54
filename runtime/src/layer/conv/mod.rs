//! Windowed layers: Convolution (and its depthwise form), Deconvolution, and the window
//! parameters they share.

pub mod convolution;
pub mod deconvolution;
pub(crate) mod window;
