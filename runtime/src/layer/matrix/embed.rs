//! Embed: `0=num_output 1=input_dim 2=bias_term 3=weight_data_size 18=int8_scale_term`;
//! weights the table (`input_dim × num_output`, int8 with a scale after the bias when
//! `int8_scale_term`) and the bias. Each value of a 1-D blob is an index (clamped to the
//! table, as in ncnn); its row is the output's row. fpshader mats hold values, so indices come
//! as values (ncnn's int32 mats hold the same numbers).

use crate::error::{Error, InputError, Result};
use crate::gpu::specialize::SpecValue;
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::weights::Weights;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat};
use crate::{Opt, OptionSet};
use std::sync::Arc;

/// Indices above this do not survive fp16 storage: such tables stay on the CPU there.
const FP16_EXACT: usize = 2048;

/// A lookup table.
#[derive(Default)]
pub struct Embed {
    num_output: usize,
    input_dim: usize,
    bias_term: bool,
    int8: bool,
    table: Vec<f32>,
    bias: Vec<f32>,
    gpu: Option<Arc<Pipeline>>,
    /// The table and the bias (or one unused value) on the device.
    weights: Option<(GpuMat, GpuMat)>,
}

impl Embed {
    fn index(&self, v: f32) -> usize {
        (v.round().max(0.0) as usize).min(self.input_dim - 1)
    }
}

impl Layer for Embed {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some())
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.num_output = pd.int_in(0, 0, 1..=i32::MAX, "at least one output")? as usize;
        self.input_dim = pd.int_in(1, 0, 1..=i32::MAX, "at least one row")? as usize;
        self.bias_term = pd.int(2, 0) != 0;
        let size = pd.int(3, 0);
        if size as i64 != (self.num_output * self.input_dim) as i64 {
            return Err(Error::BadParam {
                id: 3,
                value: size.to_string(),
                allowed: "num_output × input_dim",
            });
        }
        self.int8 = pd.int(18, 0) != 0;
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.table = weights.load(self.num_output * self.input_dim, 0)?;
        if self.bias_term {
            self.bias = weights.load(self.num_output, 1)?;
        }
        if self.int8 {
            let scale = weights.load(1, 1)?[0];
            self.table.iter_mut().for_each(|v| *v /= scale);
        }
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        let exact = |o: OptionSet| !o.contains(Opt::Fp16Storage) || self.input_dim <= FP16_EXACT;
        self.gpu = match gpu {
            Some(g) if exact(g.options) => {
                let module = crate::shaders::Shader::Embed.module();
                let bias = SpecValue::I32(i32::from(self.bias_term));
                Some(g.pipeline(module, &[(0, bias)])?)
            }
            _ => None,
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        if self.gpu.is_some() {
            let bias = if self.bias.is_empty() {
                &[0.0][..]
            } else {
                &self.bias
            };
            self.weights = Some((
                gpu.upload_values(&self.table, 1)?,
                gpu.upload_values(bias, 1)?,
            ));
        }
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms.iter().all(|BlobShape { dims, .. }| *dims == 1)
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        if bottom.dims != 1 {
            return Err(InputError::Dims {
                got: bottom.dims,
                takes: "1-D blobs of indices",
            }
            .into());
        }
        let n = self.num_output;
        let mut out = Vec::with_capacity(bottom.w * n);
        for v in bottom.to_values() {
            let row = &self.table[self.index(v) * n..][..n];
            if self.bias.is_empty() {
                out.extend_from_slice(row);
            } else {
                out.extend(row.iter().zip(&self.bias).map(|(w, b)| w + b));
            }
        }
        Mat::from_numpy(&[bottom.w, n], &out)
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let pipeline = self.gpu.ready()?;
        let (table, bias) = self.weights.ready()?;
        let words = bottom.c * bottom.elempack;
        let top = GpuMat::alloc(
            rec.context(),
            2,
            [self.num_output, 1, words],
            1,
            bottom.options,
        )?;
        let push = [self.num_output as u32, words as u32, self.input_dim as u32];
        let grid = [self.num_output as u32, words as u32, 1];
        rec.dispatch(pipeline, &[bottom, &top, table, bias], &push, grid)?;
        Ok(top)
    }
}
