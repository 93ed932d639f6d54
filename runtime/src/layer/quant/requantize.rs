//! Requantize: `0=scale_in_data_size 1=scale_out_data_size 2=bias_data_size 3=activation_type
//! 4=activation_params`; weights: the input scales, the output scales, the biases (type 1).
//! Each int32 value times its channel's input scale plus its bias, activated, then times the
//! output scale and rounded to an int8 level (the multiply-add rounded once, as ncnn's SIMD
//! forms).

use crate::error::Result;
use crate::layer::activation::fused::activate;
use crate::layer::contract::{Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::quant::Channels;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::int8_scales::level;
use crate::layer::weights::Weights;
use crate::tensor::{ElemType, Mat};

/// int32 sums to int8 levels.
#[derive(Default)]
pub struct Requantize {
    sizes: [usize; 3],
    activation: i32,
    activation_params: Vec<f32>,
    scale_in: Vec<f32>,
    scale_out: Vec<f32>,
    bias: Vec<f32>,
}

impl Layer for Requantize {
    fn support(&self) -> Support {
        Support::ONE_BLOB
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.sizes = [
            pd.int_in(0, 1, 1..=i32::MAX, "at least one input scale")? as usize,
            pd.int_in(1, 1, 1..=i32::MAX, "at least one output scale")? as usize,
            pd.int_in(2, 0, 0..=i32::MAX, "a bias count, or 0")? as usize,
        ];
        self.activation = pd.int(3, 0);
        self.activation_params = pd.floats(4);
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.scale_in = weights.load(self.sizes[0], 1)?;
        self.scale_out = weights.load(self.sizes[1], 1)?;
        if self.sizes[2] > 0 {
            self.bias = weights.load(self.sizes[2], 1)?;
        }
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let x = Channels::of(bottom);
        let what = "Requantize's input scales (1 or one per channel)";
        let scale_in = x.take(&self.scale_in, what, 1.0)?;
        let what = "Requantize's output scales (1 or one per channel)";
        let scale_out = x.take(&self.scale_out, what, 1.0)?;
        let bias = x.take(
            &self.bias,
            "Requantize's biases (1 or one per channel)",
            0.0,
        )?;
        let params = &self.activation_params[..];
        let top = x.map(bottom, |q, v| {
            let v = activate(self.activation, params, v.mul_add(scale_in[q], bias[q]));
            level(v * scale_out[q])
        })?;
        Ok(top.cast(ElemType::I8))
    }
}
