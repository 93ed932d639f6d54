//! ncnn's tests of the convolution family through the suite: test_convolution.cpp,
//! test_convolutiondepthwise.cpp, test_deconvolution.cpp and test_deconvolutiondepthwise.cpp
//! (their first parameter sweeps: every kernel/dilation/stride/pad of the table over every
//! shape, channel count and group, with output pads and sizes for the deconvolutions).

use super::suite::*;
use super::*;
use fpshader::layer::conv::convolution::{Convolution, CpuAlgo};

/// `(w, h, c, outch, kernel, dilation, stride, pad, bias, group, output_pad_right,
/// output_pad_bottom, output_w, output_h, templated)`: a templated call takes its kernel,
/// dilation, stride and pad from each row of the file's table in turn.
type Call = [i32; 15];

/// test_convolution.cpp's and test_convolutiondepthwise.cpp's kernel, dilation, stride, pad
/// table (test_convolution.cpp takes its first 12 rows).
pub(super) const FORWARD_KDSP: &[[i32; 4]] = &[
    [1, 1, 1, 0],
    [1, 1, 2, 0],
    [2, 1, 1, 1],
    [2, 1, 2, -233],
    [3, 1, 1, 1],
    [3, 1, 2, 1],
    [3, 2, 1, 1],
    [4, 1, 1, 2],
    [4, 1, 2, -233],
    [4, 2, 1, -234],
    [5, 1, 1, -234],
    [5, 1, 2, 2],
    [5, 2, 2, 2],
    [7, 1, 1, 3],
    [7, 1, 2, 3],
    [7, 2, 1, -233],
];

/// test_deconvolution.cpp's and test_deconvolutiondepthwise.cpp's kernel, dilation, stride,
/// pad table.
const TRANSPOSED_KDSP: &[[i32; 4]] = &[
    [1, 1, 1, 0],
    [1, 1, 2, 0],
    [2, 1, 1, 1],
    [2, 1, 2, -233],
    [3, 1, 1, 1],
    [3, 1, 2, 1],
    [3, 2, 1, 1],
    [4, 1, 1, -233],
    [4, 1, 2, -234],
    [4, 2, 1, -234],
    [5, 1, 1, 2],
    [5, 1, 2, 2],
    [5, 2, 2, 2],
    [7, 1, 1, 3],
    [7, 1, 2, 3],
    [7, 2, 1, -233],
];

/// test_convolution.cpp: its calls.
pub(super) const CONVOLUTION_CALLS: &[Call] = &[
    [9, 7, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [9, 7, 4, 13, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [9, 7, 13, 4, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [9, 7, 12, 12, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [9, 7, 8, 12, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [9, 7, 8, 13, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [9, 7, 13, 24, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [9, 7, 12, 16, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [9, 7, 15, 15, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [9, 7, 16, 16, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [18, 17, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [18, 17, 4, 13, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [18, 17, 13, 4, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [18, 17, 12, 12, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [18, 17, 8, 12, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [18, 17, 8, 13, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [18, 17, 13, 24, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [18, 17, 12, 16, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [18, 17, 15, 15, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [18, 17, 16, 16, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [25, 33, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [25, 33, 4, 13, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [25, 33, 13, 4, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [25, 33, 12, 12, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [25, 33, 8, 12, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [25, 33, 8, 13, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [25, 33, 13, 24, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [25, 33, 12, 16, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [25, 33, 15, 15, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [25, 33, 16, 16, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
];

/// test_convolution_2.cpp's `test_convolution_0`: 3×3 and other kernels on 24 to 64 channels,
/// where the CPU's Winograd F(4,3) applies (untemplated, group 1).
pub(super) const CONVOLUTION_2_CALLS: &[Call] = &[
    [7, 5, 1, 4, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [14, 5, 1, 4, 3, 1, 2, 1, 1, 1, 0, 0, 0, 0, 0],
    [11, 5, 2, 12, 2, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0],
    [15, 11, 4, 4, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [15, 11, 8, 8, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [11, 11, 8, 16, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [13, 16, 16, 24, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [20, 19, 24, 24, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [8, 8, 16, 24, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [4, 8, 16, 24, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [4, 20, 16, 24, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [6, 7, 64, 64, 3, 1, 2, 0, 1, 1, 0, 0, 0, 0, 0],
    [15, 17, 24, 32, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    [15, 17, 24, 32, 1, 1, 2, 0, 1, 1, 0, 0, 0, 0, 0],
    [15, 17, 24, 32, 3, 1, 2, 0, 1, 1, 0, 0, 0, 0, 0],
    [15, 17, 32, 24, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    [15, 17, 32, 24, 1, 1, 2, 0, 1, 1, 0, 0, 0, 0, 0],
    [15, 17, 32, 24, 3, 1, 2, 0, 1, 1, 0, 0, 0, 0, 0],
    [15, 17, 32, 28, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    [15, 17, 32, 28, 1, 1, 2, 0, 1, 1, 0, 0, 0, 0, 0],
    [15, 17, 32, 28, 3, 1, 2, 0, 1, 1, 0, 0, 0, 0, 0],
    [15, 17, 26, 32, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    [15, 17, 26, 32, 1, 1, 2, 0, 1, 1, 0, 0, 0, 0, 0],
    [15, 17, 26, 32, 3, 1, 2, 0, 1, 1, 0, 0, 0, 0, 0],
    [15, 17, 32, 26, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    [15, 17, 32, 26, 1, 1, 2, 0, 1, 1, 0, 0, 0, 0, 0],
    [15, 17, 32, 26, 3, 1, 2, 0, 1, 1, 0, 0, 0, 0, 0],
    [30, 30, 32, 26, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [12, 18, 8, 16, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [42, 18, 32, 160, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [12, 18, 32, 160, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [12, 18, 4, 12, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [42, 18, 28, 140, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [12, 18, 28, 140, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [3, 3, 47, 47, 3, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0],
    [5, 5, 40, 40, 3, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    [13, 13, 53, 47, 3, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0],
    [20, 26, 47, 47, 3, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    [12, 12, 47, 53, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [23, 23, 53, 53, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [26, 34, 47, 47, 3, 1, 1, 2, 0, 1, 0, 0, 0, 0, 0],
    [52, 40, 31, 31, 3, 1, 1, 2, 0, 1, 0, 0, 0, 0, 0],
    [6, 7, 7, 17, 2, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0],
    [8, 9, 3, 17, 5, 1, 1, 2, 1, 1, 0, 0, 0, 0, 0],
    [9, 7, 19, 13, 1, 2, 2, 0, 0, 1, 0, 0, 0, 0, 0],
    [15, 12, 19, 3, 4, 1, 2, 2, 1, 1, 0, 0, 0, 0, 0],
    [14, 14, 24, 31, 5, 1, 2, 2, 1, 1, 0, 0, 0, 0, 0],
    [12, 12, 20, 15, 6, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    [11, 10, 12, 7, 4, 2, 1, 2, 1, 1, 0, 0, 0, 0, 0],
    [1, 11, 48, 26, 7, 1, 2, 3, 1, 1, 0, 0, 0, 0, 0],
];

/// test_convolutiondepthwise.cpp: its calls.
pub(super) const CONVOLUTIONDEPTHWISE_CALLS: &[Call] = &[
    [15, 7, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [15, 7, 2, 2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [15, 7, 2, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1],
    [15, 7, 3, 3, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 1],
    [15, 7, 4, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1],
    [15, 7, 4, 4, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1],
    [15, 7, 7, 7, 0, 0, 0, 0, 1, 7, 0, 0, 0, 0, 1],
    [15, 7, 8, 8, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1],
    [15, 7, 8, 8, 0, 0, 0, 0, 1, 8, 0, 0, 0, 0, 1],
    [15, 7, 12, 12, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1],
    [15, 7, 15, 15, 0, 0, 0, 0, 1, 15, 0, 0, 0, 0, 1],
    [15, 7, 16, 8, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1],
    [15, 7, 16, 16, 0, 0, 0, 0, 1, 16, 0, 0, 0, 0, 1],
    [18, 17, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [18, 17, 2, 2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [18, 17, 2, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1],
    [18, 17, 3, 3, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 1],
    [18, 17, 4, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1],
    [18, 17, 4, 4, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1],
    [18, 17, 7, 7, 0, 0, 0, 0, 1, 7, 0, 0, 0, 0, 1],
    [18, 17, 8, 8, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1],
    [18, 17, 8, 8, 0, 0, 0, 0, 1, 8, 0, 0, 0, 0, 1],
    [18, 17, 12, 12, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1],
    [18, 17, 15, 15, 0, 0, 0, 0, 1, 15, 0, 0, 0, 0, 1],
    [18, 17, 16, 8, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1],
    [18, 17, 16, 16, 0, 0, 0, 0, 1, 16, 0, 0, 0, 0, 1],
    [25, 33, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [25, 33, 2, 2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    [25, 33, 2, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1],
    [25, 33, 3, 3, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 1],
    [25, 33, 4, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1],
    [25, 33, 4, 4, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1],
    [25, 33, 7, 7, 0, 0, 0, 0, 1, 7, 0, 0, 0, 0, 1],
    [25, 33, 8, 8, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1],
    [25, 33, 8, 8, 0, 0, 0, 0, 1, 8, 0, 0, 0, 0, 1],
    [25, 33, 12, 12, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1],
    [25, 33, 15, 15, 0, 0, 0, 0, 1, 15, 0, 0, 0, 0, 1],
    [25, 33, 16, 8, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1],
    [25, 33, 16, 16, 0, 0, 0, 0, 1, 16, 0, 0, 0, 0, 1],
];

/// test_deconvolution.cpp: its calls.
const DECONVOLUTION_CALLS: &[Call] = &[
    [9, 7, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [9, 7, 4, 13, 0, 0, 0, 0, 0, 1, 1, 1, 7, 5, 1],
    [9, 7, 13, 4, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1],
    [9, 7, 4, 8, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1],
    [9, 7, 8, 4, 0, 0, 0, 0, 1, 1, 0, 0, 7, 5, 1],
    [7, 7, 12, 12, 0, 0, 0, 0, 1, 1, 0, 1, 0, 0, 1],
    [4, 5, 12, 11, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 1],
    [9, 7, 8, 13, 0, 0, 0, 0, 0, 1, 2, 2, 0, 0, 1],
    [9, 7, 13, 8, 0, 0, 0, 0, 1, 1, 2, 0, 0, 0, 1],
    [9, 7, 16, 16, 0, 0, 0, 0, 0, 1, 0, 2, 7, 5, 1],
    [5, 4, 7, 3, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    [6, 7, 2, 3, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [5, 3, 1, 3, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    [8, 6, 8, 2, 3, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [8, 4, 8, 15, 1, 1, 2, 0, 0, 1, 0, 1, 0, 0, 0],
    [4, 5, 1, 8, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [5, 4, 2, 7, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0],
    [5, 4, 2, 8, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [4, 5, 2, 1, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [5, 4, 1, 5, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    [3, 3, 14, 2, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [3, 3, 14, 1, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [5, 4, 1, 16, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    [5, 4, 2, 16, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [5, 4, 8, 16, 3, 1, 2, 1, 1, 1, 0, 0, 0, 0, 0],
    [4, 3, 5, 16, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    [5, 4, 24, 8, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [5, 4, 20, 8, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [4, 5, 17, 8, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0],
    [5, 4, 7, 5, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [4, 3, 24, 5, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [5, 4, 20, 5, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [4, 3, 17, 5, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [4, 3, 24, 2, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [5, 4, 17, 2, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [5, 4, 20, 2, 3, 1, 2, 1, 0, 1, 0, 0, 0, 0, 0],
    [4, 3, 7, 1, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    [5, 4, 16, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    [4, 3, 24, 1, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [5, 4, 20, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    [4, 3, 17, 1, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    [7, 5, 24, 32, 4, 2, 2, 2, 1, 1, 0, 0, 0, 0, 0],
    [7, 5, 32, 24, 4, 2, 2, 2, 1, 1, 0, 0, 0, 0, 0],
    [7, 5, 28, 32, 4, 2, 2, 2, 1, 1, 0, 0, 0, 0, 0],
    [7, 5, 32, 28, 4, 2, 2, 2, 1, 1, 0, 0, 0, 0, 0],
    [7, 5, 26, 32, 4, 2, 2, 2, 1, 1, 0, 0, 0, 0, 0],
    [7, 5, 32, 26, 4, 2, 2, 2, 1, 1, 0, 0, 0, 0, 0],
];

/// test_deconvolutiondepthwise.cpp: its calls.
const DECONVOLUTIONDEPTHWISE_CALLS: &[Call] = &[
    [15, 7, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
    [15, 7, 2, 2, 0, 0, 0, 0, 0, 1, 1, 1, 7, 5, 1],
    [15, 7, 2, 2, 0, 0, 0, 0, 1, 2, 1, 0, 0, 0, 1],
    [15, 7, 3, 3, 0, 0, 0, 0, 0, 3, 0, 1, 0, 0, 1],
    [15, 7, 4, 2, 0, 0, 0, 0, 1, 2, 0, 0, 7, 5, 1],
    [15, 7, 4, 4, 0, 0, 0, 0, 0, 4, 2, 2, 0, 0, 1],
    [15, 7, 7, 7, 0, 0, 0, 0, 1, 7, 2, 0, 0, 0, 1],
    [15, 7, 8, 8, 0, 0, 0, 0, 0, 2, 0, 2, 7, 5, 1],
    [15, 7, 8, 8, 0, 0, 0, 0, 1, 8, 0, 0, 0, 0, 1],
    [15, 7, 12, 12, 0, 0, 0, 0, 0, 4, 3, 3, 0, 0, 1],
    [15, 7, 15, 15, 0, 0, 0, 0, 1, 15, 3, 0, 7, 5, 1],
    [15, 7, 16, 8, 0, 0, 0, 0, 0, 2, 0, 3, 0, 0, 1],
    [15, 7, 16, 16, 0, 0, 0, 0, 1, 16, 0, 0, 0, 0, 1],
];

/// The cases of one family: each call, templated ones once per table row.
pub(super) fn family(
    rng: &mut Rng,
    kind: &'static str,
    kdsp: &[[i32; 4]],
    calls: &[Call],
) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut each = |call: Call, rng: &mut Rng| {
        let [w, h, c, outch, k, d, s, p, bias, group, opr, opb, ow, oh, _] = call;
        let size = (outch / group) * (c / group) * k * k * group;
        let act = ACTIVATIONS[cases.len() % ACTIVATIONS.len()];
        let mut params = format!("0={outch} 1={k} 2={d} 3={s} 4={p} 5={bias} 6={size} {act}");
        if group > 1 {
            params += &format!(" 7={group}");
        }
        if kind.starts_with("Deconvolution") {
            params += &format!(" 18={opr} 19={opb} 20={ow} 21={oh}");
        }
        let mut case = unary_case(
            rng,
            kind,
            &params,
            &[w as usize, h as usize, c as usize],
            RANDOM,
        );
        case.weights = tagged_weights(rng, size as usize, (outch * bias) as usize);
        cases.push(case);
    };
    // an output size with zero pads makes no output in ncnn (an error in both)
    let makes_output = |c: &Call| !(c[7] == 0 && c[12] > 0 && c[13] > 0);
    for call in calls {
        if call[14] == 1 {
            for [k, d, s, p] in kdsp {
                let mut c = *call;
                c[4..8].copy_from_slice(&[*k, *d, *s, *p]);
                if makes_output(&c) {
                    each(c, rng);
                }
            }
        } else if makes_output(call) {
            each(*call, rng);
        }
    }
    cases
}

#[test]
fn ncnn_convolution_tests() {
    let mut rng = Rng(601);
    let cases = family(
        &mut rng,
        "Convolution",
        &FORWARD_KDSP[..12],
        CONVOLUTION_CALLS,
    );
    check_suite(sample(cases, 16), false);
}

#[test]
fn ncnn_convolutiondepthwise_tests() {
    let mut rng = Rng(602);
    let cases = family(
        &mut rng,
        "ConvolutionDepthWise",
        FORWARD_KDSP,
        CONVOLUTIONDEPTHWISE_CALLS,
    );
    check_suite(sample(cases, 16), false);
}

#[test]
fn ncnn_deconvolution_tests() {
    let mut rng = Rng(603);
    let cases = family(
        &mut rng,
        "Deconvolution",
        TRANSPOSED_KDSP,
        DECONVOLUTION_CALLS,
    );
    check_suite(sample(cases, 16), false);
}

#[test]
fn ncnn_deconvolutiondepthwise_tests() {
    let mut rng = Rng(604);
    let cases = family(
        &mut rng,
        "DeconvolutionDepthWise",
        TRANSPOSED_KDSP,
        DECONVOLUTIONDEPTHWISE_CALLS,
    );
    check_suite(sample(cases, 16), false);
}

/// `case`'s layer with its params loaded (read as a `.param` line gives them).
pub(super) fn loaded_layer(case: &Case) -> Convolution {
    let text = format!("7767517\n1 1\n{} c 1 1 x y {}\n", case.kind, case.params);
    let file = fpshader::net::param::parse("case.param", &text).expect("case params");
    let mut conv = match case.kind {
        "Convolution" => Convolution::default(),
        _ => Convolution::depthwise(),
    };
    conv.load_param(&file.layers[0].params).expect("load_param");
    conv
}

/// The CPU algorithm `case` takes.
pub(super) fn cpu_algo(case: &Case) -> CpuAlgo {
    let [w, h, ..] = case.inputs[0].shape;
    loaded_layer(case)
        .cpu_algo(w, h, &RunOptions::default())
        .expect("geometry")
}

/// The forward cases of test_convolution (its first twelve windows), test_convolution_2 and
/// test_convolutiondepthwise.
pub(super) fn forward_cases(rng: &mut Rng) -> Vec<Case> {
    let mut cases = family(rng, "Convolution", &FORWARD_KDSP[..12], CONVOLUTION_CALLS);
    cases.extend(family(rng, "Convolution", &[], CONVOLUTION_2_CALLS));
    cases.extend(family(
        rng,
        "ConvolutionDepthWise",
        FORWARD_KDSP,
        CONVOLUTIONDEPTHWISE_CALLS,
    ));
    cases
}

/// Asserts that every case takes `algo` on the CPU, then checks them all against ncnn.
fn check_taking(cases: Vec<Case>, algo: CpuAlgo) {
    for case in &cases {
        assert_eq!(cpu_algo(case), algo, "{}", case.params);
    }
    check_suite_cpu_only(cases);
}

/// Every CPU algorithm (im2col GEMM, pointwise GEMM, depthwise on phase planes and in channel
/// lanes, Winograd F(2,3) and F(4,3)) is
/// chosen on some of test_convolution's, test_convolution_2's and test_convolutiondepthwise's
/// cases, and those cases match ncnn's wheel.
#[test]
fn every_cpu_convolution_algorithm_matches_ncnn() {
    let cases = forward_cases(&mut Rng(605));
    let algos = [
        CpuAlgo::Im2col,
        CpuAlgo::Pointwise,
        CpuAlgo::Depthwise,
        CpuAlgo::DepthwiseLanes,
        CpuAlgo::Winograd(4),
        CpuAlgo::Winograd(2),
    ];
    // every third case of each algorithm, up to four: spread over shapes and channels
    let mut seen = [0usize; 6];
    let mut picked = Vec::new();
    for case in cases {
        let algo = cpu_algo(&case);
        let i = algos
            .iter()
            .position(|a| *a == algo)
            .expect("a known algorithm");
        seen[i] += 1;
        if seen[i] % 3 == 1 && seen[i] <= 12 {
            picked.push(case);
        }
    }
    for (algo, n) in algos.iter().zip(seen) {
        assert!(n > 0, "no case of ncnn's tests takes {algo:?}");
    }
    check_suite_cpu_only(picked);
}

/// Strided dense and grouped windows through im2col: from stride-phase planes where the taps
/// read every phase (strides 2 to 4, kernels up to alexnet's 11, explicit and "same" pads,
/// dilation, groups), the pair gather for 1×1 stride 2 (odd and even widths, the last pair of
/// a row at the input's end) and the plain gather where the taps miss phases (2×2 stride 4);
/// ncnn's own tests stop at stride 2. Every case takes im2col and matches ncnn's wheel.
#[test]
fn the_strided_im2col_matches_ncnn() {
    let mut rng = Rng(613);
    let dense: &[Call] = &[
        [35, 33, 3, 16, 11, 1, 4, 0, 1, 1, 0, 0, 0, 0, 0],
        [29, 27, 3, 8, 7, 1, 2, 3, 1, 1, 0, 0, 0, 0, 0],
        [23, 19, 5, 7, 3, 1, 3, 1, 0, 1, 0, 0, 0, 0, 0],
        [22, 21, 4, 6, 5, 2, 2, -233, 1, 1, 0, 0, 0, 0, 0],
        [21, 20, 4, 6, 3, 1, 2, -234, 1, 1, 0, 0, 0, 0, 0],
        [17, 15, 6, 10, 1, 1, 2, 0, 1, 1, 0, 0, 0, 0, 0],
        [16, 15, 6, 10, 1, 1, 2, 0, 0, 1, 0, 0, 0, 0, 0],
        [19, 17, 4, 6, 2, 1, 4, 1, 1, 1, 0, 0, 0, 0, 0],
    ];
    let grouped: &[Call] = &[[17, 13, 8, 8, 3, 1, 2, 1, 1, 4, 0, 0, 0, 0, 0]];
    let mut cases = family(&mut rng, "Convolution", &[], dense);
    cases.extend(family(&mut rng, "ConvolutionDepthWise", &[], grouped));
    assert_eq!(cases.len(), dense.len() + grouped.len());
    check_taking(cases, CpuAlgo::Im2col);
}

/// Depthwise layers on small maps with many channels (the channel-lane kernel's blocks of 16,
/// the last one partial): ncnn's kernel, dilation, stride and pad table on 7×7 and 8×6 inputs
/// of 40 channels, every case taking the lanes and matching ncnn's wheel.
#[test]
fn the_depthwise_channel_lanes_match_ncnn_on_many_channels() {
    let mut rng = Rng(611);
    let calls: &[Call] = &[
        [7, 7, 40, 40, 0, 0, 0, 0, 1, 40, 0, 0, 0, 0, 1],
        [8, 6, 40, 40, 0, 0, 0, 0, 0, 40, 0, 0, 0, 0, 1],
    ];
    let cases = family(&mut rng, "ConvolutionDepthWise", FORWARD_KDSP, calls);
    check_taking(cases, CpuAlgo::DepthwiseLanes);
}

/// Winograd on maps of at least 8 tiles per row (the input transform then runs 16 tiles of a
/// row per vector): ncnn's test parameters on wider maps, the second with chunks of tiles
/// that end inside a tile row, and a 16-lane block plus a tail per row.
#[test]
fn the_cpu_winograd_on_wide_maps_matches_ncnn() {
    let mut rng = Rng(609);
    let calls: &[Call] = &[
        [40, 35, 32, 24, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
        [67, 33, 256, 256, 3, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0],
    ];
    let cases = family(&mut rng, "Convolution", &[], calls);
    check_taking(cases, CpuAlgo::Winograd(4));
}

/// The number after `key=` in a case's params.
fn param(case: &Case, key: &str) -> usize {
    let value = case.params.split(' ').find_map(|p| p.strip_prefix(key));
    value.and_then(|v| v.parse().ok()).expect("the param")
}

/// The dense pack4-to-pack1 shaders (whole blocks of 4 input channels, outputs that are not):
/// test_convolution.cpp's and test_deconvolution.cpp's cases of that form, every kernel of
/// their tables, on every GPU option tuple against the CPU (the packed tuples take them).
#[test]
fn the_pack4_to_pack1_convolutions_match_ncnn() {
    let mut rng = Rng(607);
    let mut cases = Vec::new();
    for (kind, kdsp, calls) in [
        ("Convolution", &FORWARD_KDSP[..12], CONVOLUTION_CALLS),
        ("Deconvolution", TRANSPOSED_KDSP, DECONVOLUTION_CALLS),
    ] {
        let family: Vec<Case> = family(&mut rng, kind, kdsp, calls)
            .into_iter()
            .filter(|case| {
                let c = case.inputs[0].shape[3];
                c.is_multiple_of(4) && !param(case, "0=").is_multiple_of(4)
            })
            .collect();
        assert!(family.len() >= 12, "ncnn's pack4-to-pack1 {kind} cases");
        cases.extend(sample(family, 12));
    }
    check_suite(cases, false);
}

/// Transposed convolutions of up to 16 taps over whole blocks of 4 input channels take the
/// taps' batched GEMM on the GPU: test_deconvolution.cpp's cases of that form (strides,
/// dilations, output pads and sizes, pack4 and pack1 outputs) against the wheel, and on every
/// GPU option tuple against the CPU.
#[test]
fn the_deconvolution_taps_gemm_matches_ncnn() {
    let mut rng = Rng(608);
    let cases: Vec<Case> = family(
        &mut rng,
        "Deconvolution",
        TRANSPOSED_KDSP,
        DECONVOLUTION_CALLS,
    )
    .into_iter()
    .filter(|case| case.inputs[0].shape[3].is_multiple_of(4) && param(case, "1=") <= 4)
    .collect();
    assert!(
        cases.len() >= 16,
        "ncnn's deconvolution cases of up to 16 taps"
    );
    check_suite(sample(cases, 16), false);
}

/// The GPU's Winograd F(4,3) (dense 3×3 stride-1 layers of at least 16 channels each side, in
/// blocks of 4, on outputs of at least 16 × 16; smaller ones keep the implicit GEMM): every
/// case of test_convolution.cpp that takes it (partial edge tiles and pads included) against
/// the wheel, and on every GPU option tuple against the CPU.
#[test]
fn the_gpu_winograd_matches_ncnn() {
    let mut rng = Rng(606);
    let cases: Vec<Case> = family(
        &mut rng,
        "Convolution",
        &FORWARD_KDSP[..12],
        CONVOLUTION_CALLS,
    )
    .into_iter()
    .filter(|case| {
        let [w, h, _, c] = case.inputs[0].shape;
        let outch = param(case, "0=");
        case.params.contains(" 1=3 2=1 3=1 4=1 ")
            && c >= 16
            && c.is_multiple_of(4)
            && outch >= 16
            && outch.is_multiple_of(4)
            && w.min(h) >= 16
    })
    .collect();
    assert!(
        cases.len() >= 2,
        "ncnn's cases that take Winograd on the GPU"
    );
    check_suite(cases, false);
}
