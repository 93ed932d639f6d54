//! The 1-D windowed layers as their 2-D forms over a blob of height 1: a 2-D blob's `h` rows
//! (the channels) of `w` steps are, as a 3-D blob, `h` channels of one row. On the device that
//! is the same memory (a 2-D GPU mat's 3-D view is `w × 1 × h`, rows `w` apart, which the
//! shaders read through its channel step), so only the dims are relabelled; on the host the
//! rows are copied into aligned channels and back. The inner layer, made with
//! `Rank::One` (the `window` module's), writes 2-D outputs on the device itself.

use crate::error::{InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Implements, Layer, Packs, Support};
use crate::layer::epilogue::FusedActivation;
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::weights::Weights;
use crate::tensor::{BlobShape, GpuMat, Mat};

/// A 2-D windowed layer run along the rows of 2-D blobs.
pub struct AlongRows<L>(pub(crate) L);

/// Checks that an input is 2-D, as the 1-D layers take them.
fn rows(dims: u8) -> Result<()> {
    match dims {
        2 => Ok(()),
        _ => Err(InputError::Dims {
            got: dims,
            takes: "2-D blobs (channels as rows of w steps)",
        }
        .into()),
    }
}

/// A 2-D blob's shape as the 3-D one of height 1 the inner layer takes; other dims as they are
/// (the inner layer refuses them).
fn plane_shape(b: &BlobShape) -> BlobShape {
    match b.dims {
        2 => BlobShape::new(3, [b.shape[0], 1, 1, b.shape[1]]),
        _ => *b,
    }
}

/// A 2-D GPU mat as its 3-D view (the same buffer and layout).
fn plane(m: &GpuMat) -> GpuMat {
    match m.dims {
        2 => GpuMat {
            dims: 3,
            ..m.clone()
        },
        _ => m.clone(),
    }
}

/// A host blob for the inner layer: a 2-D one as `h` channels of one row; a dynamic weight
/// blob `[kernel_w, a, b]` as `[kernel_w, 1, a, b]` (the 2-D layers' `[kernel_w, kernel_h,
/// a, b]`).
fn host_plane(m: &Mat) -> Result<Mat> {
    let [w, h, _, c] = m.shape();
    let m = if m.elempack == 1 {
        m
    } else {
        &m.to_packing(1)?
    };
    match m.dims {
        2 => m.reshape(3, [w, 1, 1, h]),
        3 => m.reshape(4, [w, 1, h, c]),
        _ => Ok(m.clone()),
    }
}

/// The inner layer's 3-D output `w × 1 × c` as the 2-D `w × c` it stands for.
fn host_rows(m: Mat) -> Result<Mat> {
    match m.dims {
        3 => {
            let [w, _, _, c] = m.shape();
            let m = if m.elempack == 1 { m } else { m.to_packing(1)? };
            m.reshape(2, [w, c, 1, 1])
        }
        _ => Ok(m),
    }
}

impl<L: Layer> Layer for AlongRows<L> {
    fn support(&self) -> Support {
        // the host side copies blobs of one packing; the inner layer's padding of channels to
        // whole blocks is a 3-D conversion
        Support {
            packing: false,
            vulkan_pad_to_pack4: false,
            ..self.0.support()
        }
    }

    fn implements(&self) -> Implements {
        self.0.implements()
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.0.load_param(pd)
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        self.0.load_model(weights)
    }

    fn create_pipeline(&mut self, opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.0.create_pipeline(opt, gpu)
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, opt: &RunOptions) -> Result<()> {
        self.0.upload_model(gpu, opt)
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms.iter().all(|b| b.dims == 2)
            && self
                .0
                .gpu_accepts(&bottoms.iter().map(plane_shape).collect::<Vec<_>>())
    }

    fn gpu_packs(&self, bottoms: &[BlobShape]) -> Option<Packs> {
        self.0
            .gpu_packs(&bottoms.iter().map(plane_shape).collect::<Vec<_>>())
    }

    fn forward_gpu_activated(
        &self,
        bottoms: &[GpuMat],
        act: FusedActivation,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<GpuMat>> {
        let planes: Vec<GpuMat> = bottoms.iter().map(plane).collect();
        self.0.forward_gpu_activated(&planes, act, rec)
    }

    fn forward_gpu_residual(
        &self,
        bottoms: &[GpuMat],
        residual: &GpuMat,
        act: Option<FusedActivation>,
        rec: &mut Recorder<'_>,
    ) -> Result<Option<GpuMat>> {
        let planes: Vec<GpuMat> = bottoms.iter().map(plane).collect();
        self.0.forward_gpu_residual(&planes, residual, act, rec)
    }

    fn forward(&self, bottom: &Mat, opt: &RunOptions) -> Result<Mat> {
        rows(bottom.dims)?;
        host_rows(self.0.forward(&host_plane(bottom)?, opt)?)
    }

    fn forward_many(&self, bottoms: &[Mat], opt: &RunOptions) -> Result<Vec<Mat>> {
        rows(bottoms.first().map_or(2, |b| b.dims))?;
        let planes = bottoms.iter().map(host_plane).collect::<Result<Vec<_>>>()?;
        let tops = self.0.forward_many(&planes, opt)?;
        tops.into_iter().map(host_rows).collect()
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        rows(bottom.dims)?;
        self.0.forward_gpu(&plane(bottom), rec)
    }
}
