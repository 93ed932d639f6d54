//! Scale: `0=scale_data_size 1=bias_term`; with `0=-233` the scale is a second input, one
//! value per channel, which on the GPU is the binary ops' per-channel multiply.

use crate::error::{InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Implements, Layer, Support};
use crate::layer::elementwise::binary_gpu::{BinaryGpu, binary_support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::channel_affine::{AffineGpu, affine_support, per_channel, upload_affine};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::weights::Weights;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat};

/// Scale: `0=scale_data_size 1=bias_term`; with `0=-233` the scale is a second input.
#[derive(Default)]
pub struct Scale {
    size: i32,
    bias_term: bool,
    scale: Vec<f32>,
    bias: Vec<f32>,
    gpu: Option<AffineGpu>,
    /// The second-blob multiply on the device (`0=-233`).
    blob_gpu: Option<BinaryGpu>,
}

impl Layer for Scale {
    fn support(&self) -> Support {
        match &self.blob_gpu {
            Some(_) => Support {
                one_blob_only: false,
                inplace: true,
                ..binary_support(false)
            },
            None => Support {
                one_blob_only: self.size != -233,
                ..affine_support(self.gpu.is_some())
            },
        }
    }

    fn implements(&self) -> Implements {
        Implements {
            forward_inplace: true,
            forward_many_inplace: true,
            forward_gpu_inplace: true,
            forward_gpu_many: true,
            ..Implements::default()
        }
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        if self.size != -233 {
            self.gpu = AffineGpu::create(gpu)?;
        } else if let Some(gpu) = gpu.filter(|_| !self.bias_term) {
            // BinaryOp's op_type 2: a * b
            self.blob_gpu = Some(BinaryGpu::create(gpu, opt, 2, None)?);
        }
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        match (&self.blob_gpu, bottoms) {
            // one scale per channel: w for 1-D, h for 2-D, c otherwise
            (
                Some(mul),
                [
                    a,
                    BlobShape {
                        dims: 1,
                        shape: [w, ..],
                    },
                ],
            ) => {
                *w == crate::layer::shared::view::channels(a.dims, a.shape) && mul.accepts(bottoms)
            }
            (Some(_), _) => false,
            (None, _) => true,
        }
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        Ok(vec![self.blob_gpu.ready()?.forward_pair(bottoms, rec)?])
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        upload_affine(&mut self.gpu, gpu, &self.scale, &self.bias)
    }

    fn forward_gpu_inplace(&self, blob: &mut GpuMat, rec: &mut Recorder<'_>) -> Result<()> {
        self.gpu.ready()?.record(rec, blob)
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.size = pd.int(0, 0);
        self.bias_term = pd.int(1, 0) != 0;
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        if self.size != -233 {
            self.scale = weights.load(self.size.max(0) as usize, 1)?;
        }
        if self.bias_term {
            let n = if self.size == -233 {
                0
            } else {
                self.size.max(0) as usize
            };
            self.bias = weights.load(n, 1)?;
        }
        Ok(())
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &RunOptions) -> Result<()> {
        per_channel(blob, &self.scale, &self.bias)
    }

    fn forward_many_inplace(&self, blobs: &mut [Mat], _opt: &RunOptions) -> Result<()> {
        let [blob, scale] = blobs else {
            return Err(InputError::Count {
                got: blobs.len(),
                expected: "2 with scale_data_size -233",
            }
            .into());
        };
        let s = scale.to_values();
        per_channel(blob, &s, &self.bias)
    }
}
