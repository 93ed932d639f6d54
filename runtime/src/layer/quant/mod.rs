//! ncnn's int8 conversion layers: Quantize (fp32 to int8 levels), Dequantize (int32 sums to
//! fp32) and Requantize (int32 sums to int8 levels, with a bias and an activation between).
//! Each takes one scale (and bias) for the blob or one per channel: the rows of a 2-D blob,
//! the channels of a 3-D or 4-D one. int32 inputs are whole numbers in an fp32 mat (exact to
//! 2^24), as a user feeds them. On the CPU, as ncnn's.

pub mod dequantize;
pub mod quantize;
pub mod requantize;

use crate::error::{InputError, Result};
use crate::tensor::Mat;

/// A blob's values in ncnn order with the number of channels the scales run over and the
/// values per channel.
pub(crate) struct Channels {
    pub values: Vec<f32>,
    pub count: usize,
    pub run: usize,
}

impl Channels {
    pub(crate) fn of(m: &Mat) -> Channels {
        let values = m.to_values();
        let [w, h, d, c] = m.shape();
        let (count, run) = match m.dims {
            1 => (1, w),
            2 => (h, w),
            _ => (c, w * h * d),
        };
        Channels { values, count, run }
    }

    /// `param[q]` for channel `q`: the one value of a one-value array, else one per channel
    /// (`what` names the array in the error when its size is neither); `default` for an empty
    /// array.
    pub(crate) fn take(&self, param: &[f32], what: &'static str, default: f32) -> Result<Vec<f32>> {
        match param.len() {
            0 => Ok(vec![default; self.count]),
            1 => Ok(vec![param[0]; self.count]),
            n if n == self.count => Ok(param.to_vec()),
            n => Err(InputError::Values {
                what,
                got: n,
                expected: self.count,
            }
            .into()),
        }
    }

    /// Each value mapped with its channel's index, as an fp32 mat of `like`'s shape.
    pub(crate) fn map(mut self, like: &Mat, f: impl Fn(usize, f32) -> f32) -> Result<Mat> {
        for (i, v) in self.values.iter_mut().enumerate() {
            *v = f(i / self.run.max(1), *v);
        }
        Mat::from_shape_values(like.dims, like.shape(), &self.values)
    }
}
