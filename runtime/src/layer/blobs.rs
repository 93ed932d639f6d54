//! Layers that move blobs without arithmetic: Input, MemoryData, Split, Flatten, Reshape.

use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Implements, Layer, Support};
use crate::layer::gpu_util::{Border, Gather, GatherMap, no_device, reshape, to_view};
use crate::layer::option::Option;
use crate::layer::params::ParamDict;
use crate::layer::weights::Weights;
use crate::tensor::{GpuMat, Mat};

/// `[w, h, d, c]` and dims from ncnn's `0=w 1=h 11=d 2=c` parameters (0 = absent).
fn shape_params(pd: &ParamDict) -> (u8, [usize; 4]) {
    let g = |id, default| pd.int(id, default).max(0) as usize;
    let (w, h, d, c) = (g(0, 0), g(1, 0), g(11, 0), g(2, 0));
    let dims = if c > 0 && d > 0 {
        4
    } else if c > 0 {
        3
    } else if h > 0 {
        2
    } else {
        1
    };
    (dims, [w.max(1), h.max(1), d.max(1), c.max(1)])
}

/// Names the net's inputs; passes them through.
#[derive(Default)]
pub struct Input;

impl Layer for Input {
    fn support(&self) -> Support {
        Support {
            one_blob_only: true,
            inplace: true,
            packing: true,
            any_packing: true,
            vulkan: false,
            bf16_storage: true,
            fp16_storage: true,
            int8_storage: true,
            ..Support::default()
        }
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD_INPLACE
    }

    fn forward_inplace(&self, _blob: &mut Mat, _opt: &Option) -> Result<()> {
        Ok(())
    }
}

/// A constant blob stored in the weights (no inputs).
#[derive(Default)]
pub struct MemoryData {
    dims: u8,
    shape: [usize; 4],
    data: core::option::Option<Mat>,
    /// The data on the device (uploaded once), when the net runs the layer there.
    gpu: core::option::Option<GpuMat>,
    on_device: bool,
}

impl Layer for MemoryData {
    fn support(&self) -> Support {
        Support {
            vulkan: self.on_device,
            ..Support::default()
        }
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD_MANY_CPU_GPU
    }

    fn create_pipeline(
        &mut self,
        _opt: &Option,
        gpu: core::option::Option<GpuSetup<'_>>,
    ) -> Result<()> {
        // GPU mats are at most 3-D, and image nets keep 1- and 2-D blobs on the CPU
        self.on_device = gpu.is_some_and(|g| {
            self.dims <= 3 && (self.dims == 3 || !g.options.contains(crate::Opt::Image))
        });
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &Option) -> Result<()> {
        if let Some(m) = &self.data {
            self.gpu = Some(gpu.ctx.upload_mat(m, gpu.options)?);
        }
        Ok(())
    }

    fn forward_gpu_many(
        &self,
        _bottoms: &[GpuMat],
        _rec: &mut Recorder<'_>,
        _opt: &Option,
    ) -> Result<Vec<GpuMat>> {
        let m = self.gpu.clone().ok_or_else(|| no_device("MemoryData"))?;
        Ok(vec![m])
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        (self.dims, self.shape) = shape_params(pd);
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        let [w, h, d, c] = self.shape;
        let n = match self.dims {
            1 => w,
            2 => w * h,
            3 => w * h * c,
            _ => w * h * d * c,
        };
        let values = weights.load(n, 1)?;
        self.data = Some(Mat::from_shape_values(self.dims, self.shape, &values)?);
        Ok(())
    }

    fn forward_many(&self, _bottoms: &[Mat], _opt: &Option) -> Result<Vec<Mat>> {
        let m = self
            .data
            .clone()
            .ok_or_else(|| Error::Shape("MemoryData has no weights loaded".into()))?;
        Ok(vec![m])
    }
}

/// One input shared by several outputs (each consumer gets the same values).
#[derive(Default)]
pub struct Split;

impl Layer for Split {
    fn support(&self) -> Support {
        Support {
            packing: true,
            any_packing: true,
            bf16_storage: true,
            fp16_storage: true,
            int8_storage: true,
            ..Support::default()
        }
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD_MANY
    }

    fn forward_many(&self, _bottoms: &[Mat], _opt: &Option) -> Result<Vec<Mat>> {
        // the net knows how many tops there are and clones the one bottom into each
        Err(Error::Shape("Split is expanded by the net".into()))
    }
}

/// Everything into one row (ncnn's Flatten: `w * h * d * c` values, 1-D).
#[derive(Default)]
pub struct Flatten {
    gpu: core::option::Option<Gather>,
}

/// The reshape gather, for layers that keep values in order; `None` without a device.
fn reshape_gather(gpu: core::option::Option<GpuSetup<'_>>) -> Result<core::option::Option<Gather>> {
    match gpu {
        Some(gpu) => Gather::create(gpu, GatherMap::Reshape, Border::Constant),
        None => Ok(None),
    }
}

/// Values of a blob of `[w, h, d, c]` (the extents a blob lacks are 1).
fn count(shape: [usize; 4]) -> usize {
    shape.iter().product()
}

impl Layer for Flatten {
    fn support(&self) -> Support {
        Support {
            vulkan: self.gpu.is_some(),
            ..Support::ONE_BLOB
        }
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD_CPU_GPU
    }

    fn create_pipeline(
        &mut self,
        _opt: &Option,
        gpu: core::option::Option<GpuSetup<'_>>,
    ) -> Result<()> {
        self.gpu = reshape_gather(gpu)?;
        Ok(())
    }

    fn forward_gpu(
        &self,
        bottom: &GpuMat,
        rec: &mut Recorder<'_>,
        _opt: &Option,
    ) -> Result<GpuMat> {
        let gather = self.gpu.as_ref().ok_or_else(|| no_device("Flatten"))?;
        let n = count(bottom.shape());
        reshape(rec, gather, bottom, 1, [1, 1, n])
    }

    fn forward(&self, bottom: &Mat, _opt: &Option) -> Result<Mat> {
        let n = bottom.to_values().len();
        bottom.reshape(1, [n, 1, 1, 1])
    }
}

/// A new shape for the same values (ncnn's Reshape: `0=w 1=h 11=d 2=c`, -1 inferred, 0 kept).
#[derive(Default)]
pub struct Reshape {
    target: [i32; 4],
    dims: u8,
    gpu: core::option::Option<Gather>,
}

impl Layer for Reshape {
    fn support(&self) -> Support {
        Support {
            vulkan: self.gpu.is_some(),
            ..Support::ONE_BLOB
        }
    }

    fn implements(&self) -> Implements {
        Implements::FORWARD_CPU_GPU
    }

    fn create_pipeline(
        &mut self,
        _opt: &Option,
        gpu: core::option::Option<GpuSetup<'_>>,
    ) -> Result<()> {
        // GPU mats are at most 3-D
        self.gpu = if self.dims <= 3 {
            reshape_gather(gpu)?
        } else {
            None
        };
        Ok(())
    }

    fn forward_gpu(
        &self,
        bottom: &GpuMat,
        rec: &mut Recorder<'_>,
        _opt: &Option,
    ) -> Result<GpuMat> {
        let gather = self.gpu.as_ref().ok_or_else(|| no_device("Reshape"))?;
        let [w, h, _, c] = self.target_shape(bottom.shape())?;
        let numpy = match self.dims {
            1 => vec![w],
            2 => vec![h, w],
            _ => vec![c, h, w],
        };
        reshape(
            rec,
            gather,
            bottom,
            self.dims,
            to_view(self.dims, &numpy, 1),
        )
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.target = [
            pd.int(0, -233),
            pd.int(1, -233),
            pd.int(11, -233),
            pd.int(2, -233),
        ];
        self.dims = match self.target {
            [_, -233, _, -233] => 1,
            [_, _, _, -233] => 2,
            [_, _, -233, _] => 3,
            _ => 4,
        };
        Ok(())
    }

    fn forward(&self, bottom: &Mat, _opt: &Option) -> Result<Mat> {
        let shape = self.target_shape(bottom.shape())?;
        bottom.reshape(self.dims, shape)
    }
}

impl Reshape {
    /// The `[w, h, d, c]` a blob of `src` becomes (0 keeps an extent, -1 infers one).
    fn target_shape(&self, src: [usize; 4]) -> Result<[usize; 4]> {
        let total = count(src);
        let mut shape = [1usize; 4];
        let mut infer = None;
        let used: &[usize] = match self.dims {
            1 => &[0],
            2 => &[0, 1],
            3 => &[0, 1, 3],
            _ => &[0, 1, 2, 3],
        };
        for &i in used {
            shape[i] = match self.target[i] {
                -1 => {
                    infer = Some(i);
                    1
                }
                0 => src[i],
                v if v > 0 => v as usize,
                v => return Err(Error::Shape(format!("reshape extent {v}"))),
            };
        }
        let known: usize = shape.iter().product();
        if let Some(i) = infer {
            if known == 0 || !total.is_multiple_of(known) {
                return Err(Error::Shape(format!(
                    "cannot infer a reshape extent: {total} values, {known} known"
                )));
            }
            shape[i] = total / known;
        }
        Ok(shape)
    }
}
