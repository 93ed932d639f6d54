//! Quantize: `0=scale_data_size`; weights: the scales (type 1). Each value times its channel's
//! scale, rounded half away from zero and clamped to ±127: an int8 blob.

use crate::error::Result;
use crate::layer::contract::{Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::quant::Channels;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::int8_scales::level;
use crate::layer::weights::Weights;
use crate::tensor::{ElemType, Mat};

/// fp32 to int8 levels.
#[derive(Default)]
pub struct Quantize {
    size: usize,
    scales: Vec<f32>,
}

impl Layer for Quantize {
    fn support(&self) -> Support {
        Support::ONE_BLOB
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.size = pd.int_in(0, 1, 1..=i32::MAX, "at least one scale")? as usize;
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.scales = weights.load(self.size, 1)?;
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let x = Channels::of(bottom);
        let scales = x.take(
            &self.scales,
            "Quantize's scales (1 or one per channel)",
            1.0,
        )?;
        Ok(x.map(bottom, |q, v| level(v * scales[q]))?
            .cast(ElemType::I8))
    }
}
