//! Dequantize: `0=scale_data_size 1=bias_data_size`; weights: the scales, then the biases
//! (type 1). Each int32 value times its channel's scale plus its bias: fp32.

use crate::error::Result;
use crate::layer::contract::{Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::quant::Channels;
use crate::layer::run_options::RunOptions;
use crate::layer::weights::Weights;
use crate::tensor::Mat;

/// int32 sums to fp32.
#[derive(Default)]
pub struct Dequantize {
    sizes: [usize; 2],
    scales: Vec<f32>,
    bias: Vec<f32>,
}

impl Layer for Dequantize {
    fn support(&self) -> Support {
        Support::ONE_BLOB
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.sizes = [
            pd.int_in(0, 1, 1..=i32::MAX, "at least one scale")? as usize,
            pd.int_in(1, 0, 0..=i32::MAX, "a bias count, or 0")? as usize,
        ];
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.scales = weights.load(self.sizes[0], 1)?;
        if self.sizes[1] > 0 {
            self.bias = weights.load(self.sizes[1], 1)?;
        }
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let x = Channels::of(bottom);
        let scales = x.take(
            &self.scales,
            "Dequantize's scales (1 or one per channel)",
            1.0,
        )?;
        let bias = x.take(
            &self.bias,
            "Dequantize's biases (1 or one per channel)",
            0.0,
        )?;
        x.map(bottom, |q, v| v.mul_add(scales[q], bias[q]))
    }
}
