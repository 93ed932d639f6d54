//! InnerProduct: `0=num_output 1=bias_term 2=weight_data_size 9=activation_type
//! 10=activation_params`; weights (type 0, fp32/fp16/int8/quantized) then bias (type 1).

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::layer::contract::{Implements, Layer, Support};
use crate::layer::option::Option;
use crate::layer::params::ParamDict;
use crate::layer::weights::Weights;
use crate::tensor::Mat;

/// ncnn's fused activation `activation_type` (0–6) with its parameters.
pub fn activate(kind: i32, params: &[f32], x: f32) -> f32 {
    let p = |i: usize, d: f32| params.get(i).copied().unwrap_or(d);
    match kind {
        1 => x.max(0.0),
        2 => {
            if x < 0.0 {
                x * p(0, 0.0)
            } else {
                x
            }
        }
        3 => x.max(p(0, -f32::MAX)).min(p(1, f32::MAX)),
        4 => 1.0 / (1.0 + (-x).exp()),
        5 => x * (x.exp().ln_1p()).tanh(),
        6 => {
            let (alpha, beta) = (p(0, 0.2), p(1, 0.5));
            x * (x * alpha + beta).clamp(0.0, 1.0)
        }
        _ => x,
    }
}

/// A fully connected layer.
#[derive(Default)]
pub struct InnerProduct {
    num_output: usize,
    bias_term: bool,
    weight_data_size: usize,
    activation: i32,
    activation_params: Vec<f32>,
    weights: Vec<f32>,
    bias: Vec<f32>,
}

impl Layer for InnerProduct {
    fn support(&self) -> Support {
        Support::ONE_BLOB
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.num_output = pd.int(0, 0).max(0) as usize;
        self.bias_term = pd.int(1, 0) != 0;
        self.weight_data_size = pd.int(2, 0).max(0) as usize;
        self.activation = pd.int(9, 0);
        self.activation_params = pd.floats(10);
        if self.num_output == 0 || !self.weight_data_size.is_multiple_of(self.num_output) {
            return Err(Error::Shape(format!(
                "InnerProduct weight_data_size {} is not a multiple of num_output {}",
                self.weight_data_size, self.num_output
            )));
        }
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.weights = weights.load(self.weight_data_size, 0)?;
        if self.bias_term {
            self.bias = weights.load(self.num_output, 1)?;
        }
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &Option) -> Result<Mat> {
        let num_input = self.weight_data_size / self.num_output;
        let x = bottom.to_values();
        // a 2-D input of rows `num_input` wide is a batch of rows (ncnn's gemm path)
        let rows = if bottom.dims == 2 && bottom.w == num_input {
            bottom.h * bottom.elempack
        } else {
            1
        };
        if x.len() != rows * num_input {
            return Err(Error::Shape(format!(
                "InnerProduct expects {num_input} inputs per row, got {} values",
                x.len()
            )));
        }
        let mut out = vec![0.0f32; rows * self.num_output];
        out.par_chunks_mut(self.num_output)
            .zip(x.par_chunks(num_input))
            .for_each(|(o, row)| {
                for (p, y) in o.iter_mut().enumerate() {
                    let w = &self.weights[p * num_input..(p + 1) * num_input];
                    let dot: f32 = w.iter().zip(row).map(|(a, b)| a * b).sum();
                    let sum = dot + self.bias.get(p).copied().unwrap_or(0.0);
                    *y = activate(self.activation, &self.activation_params, sum);
                }
            });
        if rows > 1 {
            Mat::from_shape_values(2, [self.num_output, rows, 1, 1], &out)
        } else {
            Mat::from_shape_values(1, [self.num_output, 1, 1, 1], &out)
        }
    }
}
