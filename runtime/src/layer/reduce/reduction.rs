//! Reduction: `0=operation 1=reduce_all 2=coeff 3=axes 4=keepdims 5=fixbug0`. ncnn's
//! operations (0 sum, 1 sum of |x|, 2 sum of squares, 3 mean, 4 max, 5 min, 6 product, 7 L1,
//! 8 L2, 9 log of the sum, 10 log of the sum of exponentials) over every axis or the numpy
//! `axes` (negative from the end; a 1-D blob always reduces), times `coeff`; the reduced axes
//! kept as ones with `keepdims`, else dropped (`[1]` when none is left). As in ncnn, a model
//! with axes and without `5=1` is refused: it was written for the old axis numbering.
//!
//! On the device, pack1 blobs through the group pipeline; a 3-D blob reduced over its rows and
//! columns alone (a squeeze-excitation's global pooling) also in pack4, through the blob's
//! scalar view, into a pack4 output: no repacking on either side.

use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Packs, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shape::gather::scalar_view;
use crate::layer::shared::group_pipeline::GroupPipeline;
use crate::layer::shared::groups::{self, GroupExtras, GroupOp, Groups};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::strided_copy::alloc_numpy;
use crate::layer::shared::view::{numpy_shape, positive_axis};
use crate::tensor::{BlobShape, StorageFormat, Strided};
use crate::tensor::{GpuMat, Mat};

/// A reduction over axes.
#[derive(Default)]
pub struct Reduction {
    op: i32,
    all: bool,
    coeff: f32,
    axes: Vec<i32>,
    keepdims: bool,
    gpu: Option<GroupPipeline>,
    /// Whether the device's packed blobs have scalar views (fp32, or fp16 storage).
    scalar_views: bool,
}

impl Reduction {
    /// The groups of a blob of numpy shape `np` and the output's numpy shape.
    fn plan(&self, np: &[usize]) -> Result<(Groups, Vec<usize>)> {
        let n = np.len();
        let mut reduced = vec![self.all || n == 1; n];
        if !self.all {
            for &a in &self.axes {
                reduced[positive_axis(a, n)?] = true;
            }
        }
        let out: Vec<usize> = if self.keepdims {
            (0..n).map(|a| if reduced[a] { 1 } else { np[a] }).collect()
        } else {
            (0..n).filter(|a| !reduced[*a]).map(|a| np[a]).collect()
        };
        let out = if out.is_empty() { vec![1] } else { out };
        Ok((Groups::over(np, &reduced), out))
    }

    /// Whether a blob of this shape is reduced over its rows and columns alone: a 3-D blob
    /// whose channels stay.
    fn spatial(&self, BlobShape { dims, shape }: BlobShape) -> bool {
        let np = numpy_shape(dims, shape);
        let kept = |g: &Groups| g.outer.shape == np[..1] && g.inner.shape == np[1..];
        dims == 3 && self.plan(&np).is_ok_and(|(g, _)| kept(&g))
    }

    /// The pack4 forward of a spatial reduction: the groups (one per channel, lane-minor
    /// within each block of 4) over the scalar views of `bottom` and of a pack4 output.
    fn forward_gpu_pack4(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let (_, out) = self.plan(&numpy_shape(bottom.dims, bottom.shape()))?;
        let ctx = rec.context();
        let (blocks, plane) = (bottom.c, bottom.w * bottom.h);
        let top = match out.len() {
            3 => GpuMat::alloc(ctx, 3, [1, 1, blocks], 4, bottom.options)?,
            _ => GpuMat::alloc(ctx, 1, [1, 1, blocks], 4, bottom.options)?,
        };
        let what = "a pack4 reduction";
        let (src, dst) = (
            scalar_view(bottom, "reduce", what)?,
            scalar_view(&top, "reduce", what)?,
        );
        // logical index in the source's view: block · 4·plane + position · 4 + lane
        let groups = Groups {
            outer: Strided {
                offset: 0,
                shape: vec![blocks, 4],
                strides: vec![4 * plane as isize, 1],
            },
            inner: Strided {
                offset: 0,
                shape: vec![plane],
                strides: vec![4],
            },
        };
        let extras = GroupExtras {
            coeff: self.coeff,
            ..GroupExtras::default()
        };
        self.gpu
            .ready()?
            .record(rec, (&src, &dst, &src), &groups, extras)?;
        Ok(top)
    }
}

impl Layer for Reduction {
    fn support(&self) -> Support {
        Support::ONE_BLOB
            .gpu(self.gpu.is_some())
            .packs(Packs::UP_TO_4)
            .gpu_4d()
    }

    fn gpu_packs(&self, bottoms: &[BlobShape]) -> Option<Packs> {
        let pack4 = self.scalar_views && bottoms.iter().all(|b| self.spatial(*b));
        Some(if pack4 { Packs::UP_TO_4 } else { Packs::ONE })
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.op = pd.int_in(0, 0, 0..=10, "operations 0 to 10")?;
        self.all = pd.int(1, 1) != 0;
        self.coeff = pd.float(2, 1.0);
        self.axes = pd.ints(3);
        self.keepdims = pd.int(4, 0) != 0;
        if pd.int(5, 0) == 0 && !self.axes.is_empty() {
            return Err(Error::BadParam {
                id: 5,
                value: "0".into(),
                allowed: "1 with axes: the model predates ncnn's axis fix, convert it again",
            });
        }
        if self.axes.iter().any(|a| !(-4..4).contains(a)) {
            return Err(Error::BadParam {
                id: 3,
                value: format!("{:?}", self.axes),
                allowed: "axes in -4..4",
            });
        }
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.scalar_views = gpu.is_some_and(|g| {
            StorageFormat::scalar_views(g.options) && !g.options.contains(crate::Opt::Image)
        });
        self.gpu = gpu
            .map(|g| GroupPipeline::create(g, GroupOp::Reduce(self.op)))
            .transpose()?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms
            .iter()
            .all(|BlobShape { dims, shape: s }| self.plan(&numpy_shape(*dims, *s)).is_ok())
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let (groups, out) = self.plan(&bottom.numpy_shape())?;
        let values = groups::reduce(&bottom.to_values(), &groups, self.op, self.coeff);
        Mat::from_numpy(&out, &values)
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        if bottom.elempack == 4 {
            return self.forward_gpu_pack4(bottom, rec);
        }
        let (groups, out) = self.plan(&numpy_shape(bottom.dims, bottom.shape()))?;
        let top = alloc_numpy(rec, &out, bottom)?;
        let extras = GroupExtras {
            coeff: self.coeff,
            ..GroupExtras::default()
        };
        // nothing is read from the affine binding of a reduction
        self.gpu
            .ready()?
            .record(rec, (bottom, &top, bottom), &groups, extras)?;
        Ok(top)
    }
}
