//! Packing: `0=out_elempack 1=use_padding 2=cast_type_from 3=cast_type_to`: the elempack
//! changed (and the element type, with a cast). It takes any layout and storage the net has;
//! elempack 16 (ncnn's AVX-512 layout) on the CPU only.

use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::view::channels;
use crate::tensor::BlobShape;
use crate::tensor::{ElemType, GpuMat, Mat};

/// Packing: `0=out_elempack 1=use_padding 2=cast_type_from 3=cast_type_to`. Channels that do
/// not divide by `out_elempack` stay as they are, or with `use_padding` grow with zeros.
#[derive(Default)]
pub struct Packing {
    out_elempack: usize,
    use_padding: bool,
    cast_to: Option<ElemType>,
    on_device: bool,
}

impl Layer for Packing {
    fn support(&self) -> Support {
        Support::any_layout(self.on_device)
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        // the device keeps the net's storage type: casting packings stay on the CPU, as do
        // image nets (their packing is the texel's)
        self.on_device = gpu.is_some() && matches!(self.cast_to, None | Some(ElemType::F32));
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        // padding channels up is a CPU job, as is ncnn's AVX-512 layout (no GPU mat has it);
        // channels that do not divide without padding leave the blob as it is
        self.out_elempack <= 8
            && bottoms.iter().all(|&BlobShape { dims, shape }| {
                !self.use_padding || channels(dims, shape).is_multiple_of(self.out_elempack)
            })
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let channels = bottom.c * bottom.elempack;
        if !channels.is_multiple_of(self.out_elempack) {
            return Ok(bottom.clone());
        }
        bottom.record_packing(rec, self.out_elempack)
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.out_elempack = match pd.int(0, 1) {
            p @ (1 | 4 | 8 | 16) => p as usize,
            p => {
                return Err(Error::BadParam {
                    id: 0,
                    value: p.to_string(),
                    allowed: "out_elempack 1, 4, 8 or 16",
                });
            }
        };
        self.use_padding = pd.int(1, 0) != 0;
        pd.cast_type(2)?;
        self.cast_to = pd.cast_type(3)?;
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let m = match self.cast_to {
            Some(t) => bottom.cast(t),
            None => bottom.clone(),
        };
        let channels = m.outer() * m.elempack;
        if channels.is_multiple_of(self.out_elempack) {
            return m.to_packing(self.out_elempack);
        }
        if !self.use_padding {
            return Ok(m);
        }
        // zero channels up to the next multiple, as ncnn's padded packing does
        let mut shape = m.numpy_shape();
        let padded = channels.next_multiple_of(self.out_elempack);
        let mut values = m.to_values();
        values.resize(values.len() / channels * padded, 0.0);
        shape[0] = padded;
        Mat::from_numpy(&shape, &values)?
            .cast(m.elemtype())
            .to_packing(self.out_elempack)
    }
}
