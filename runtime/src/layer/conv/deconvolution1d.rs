//! Deconvolution1D and DeconvolutionDepthWise1D (transposed 1-D convolution): `0=num_output
//! 1=kernel_w 2=dilation_w 3=stride_w 4=pad_left 15=pad_right 18=output_pad_right 20=output_w
//! 5=bias_term 6=weight_data_size 7=group` (depthwise) `9=activation_type 10=activation_params
//! 28=dynamic_weight`, over a 2-D blob whose rows are the channels; weights
//! `[num_output][channels / group][kernel_w]`, then the bias. Positive pads are cut from the
//! full result, else with `output_w` and pads -233 / -234 the excess is cut evenly, as ncnn.
//!
//! Both run as [`Deconvolution`] with a kernel of height 1 over the blob as one row of `h`
//! channels ([`AlongRows`]).

use super::along_rows::AlongRows;
use super::deconvolution::Deconvolution;
use super::window::{Rank, of_rank};

/// A transposed 1-D convolution (dense, grouped or depthwise).
pub type Deconvolution1D = AlongRows<Deconvolution>;

impl Deconvolution1D {
    /// A Deconvolution1D layer.
    pub fn dense() -> Self {
        AlongRows(of_rank(Rank::One, false))
    }

    /// A DeconvolutionDepthWise1D layer (the form that reads `7=group`).
    pub fn depthwise() -> Self {
        AlongRows(of_rank(Rank::One, true))
    }
}
