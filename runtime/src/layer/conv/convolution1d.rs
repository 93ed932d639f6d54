//! Convolution1D and ConvolutionDepthWise1D: `0=num_output 1=kernel_w 2=dilation_w 3=stride_w
//! 4=pad_left 15=pad_right` (-233 / -234 both: ncnn's "same" padding, upper / lower)
//! `18=pad_value 5=bias_term 6=weight_data_size 7=group` (depthwise) `9=activation_type
//! 10=activation_params 19=dynamic_weight`, over a 2-D blob whose `h` rows are the channels and
//! `w` the steps; weights `[num_output][channels / group][kernel_w]`, then the bias. Dynamic
//! weights come as a `[kernel_w, channels / group, num_output]` blob.
//!
//! Both run as [`Convolution`] with a kernel of height 1 over the blob as one row of `h`
//! channels ([`AlongRows`]): on the device the same implicit GEMM (tensor cores where the 2-D
//! layers take them), direct pack4 and pack1 shaders, and the fused activation and residual
//! epilogues; on the host the same CPU algorithms.

use super::along_rows::AlongRows;
use super::convolution::Convolution;
use super::window::{Rank, of_rank};

/// A 1-D convolution (dense, grouped or depthwise).
pub type Convolution1D = AlongRows<Convolution>;

impl Convolution1D {
    /// A Convolution1D layer.
    pub fn dense() -> Self {
        AlongRows(of_rank(Rank::One, false))
    }

    /// A ConvolutionDepthWise1D layer (the form that reads `7=group`).
    pub fn depthwise() -> Self {
        AlongRows(of_rank(Rank::One, true))
    }
}
