//! The normalizations (LayerNorm, RMSNorm, GroupNorm, InstanceNorm, MVN, Normalize): a
//! [`NormRule`] says which groups of a blob's values are normalized how and where each finds
//! its gamma and beta; [`NormLayer`] loads the weights and runs it on the CPU
//! ([`groups::normalize`]) and on the GPU (`shaders/reduce.comp`, one workgroup per group).

use crate::error::{InputError, Result};
use crate::gpu::Recorder;
use crate::layer::contract::{GpuSetup, Layer, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::group_pipeline::GroupPipeline;
use crate::layer::shared::groups::{self, Affine, AffineIndex, GroupExtras, GroupOp, Groups, Norm};
use crate::layer::shared::pipelines::DeviceSide;
use crate::layer::shared::strided_copy::alloc_numpy;
use crate::layer::shared::view::numpy_shape;
use crate::layer::weights::Weights;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Mat, MatData};

/// What a normalization does to a blob of one shape.
pub struct NormPlan {
    /// The groups normalized together.
    pub groups: Groups,
    /// Where each value's gamma and beta are.
    pub index: AffineIndex,
    /// The output's numpy shape (the input's, but for MVN's 3-D outputs).
    pub out: Vec<usize>,
}

/// A normalization's parameters and plan.
pub trait NormRule: Default + Send + Sync + 'static {
    /// The rule with its parameters (ncnn's ids); out-of-range values are errors here.
    fn from_params(pd: &ParamDict) -> Result<Self>;

    /// Gamma's length (0: no weights) and whether a beta as long follows it.
    fn weights(&self) -> (usize, bool);

    /// Epsilon.
    fn eps(&self) -> f32;

    /// How each group is scaled.
    fn norm(&self) -> Norm;

    /// The plan for a blob of numpy shape `np`, or an error if the rule does not fit it.
    fn plan(&self, np: &[usize]) -> Result<NormPlan>;
}

/// The layer applying normalization `R`.
#[derive(Default)]
pub struct NormLayer<R> {
    rule: R,
    gamma: Vec<f32>,
    beta: Vec<f32>,
    gpu: Option<GroupPipeline>,
    /// Gamma then beta on the device, each from a multiple of 4 (four unused values
    /// without weights).
    affine: Option<GpuMat>,
}

/// ncnn's channels of a blob of numpy shape `np` (one for 1-D and 2-D blobs) and the values
/// in each.
pub(crate) fn channels(np: &[usize]) -> (usize, usize) {
    let total: usize = np.iter().product();
    if np.len() >= 3 {
        (np[0], total / np[0].max(1))
    } else {
        (1, total)
    }
}

/// The rows LayerNorm and RMSNorm normalize in a blob of numpy shape `np`: the last axis, or
/// as many trailing axes as make `affine_size` (ncnn's `w`, `w·h`, else `w·h·d`).
pub(crate) fn trailing_rows(np: &[usize], affine_size: usize) -> Groups {
    let n = np.len();
    let w = np[n - 1];
    let axes = match n {
        1 | 2 => 1,
        3 if affine_size == w => 1,
        3 => 2,
        _ if affine_size == w => 1,
        _ if affine_size == w * np[n - 2] => 2,
        _ => 3,
    };
    let reduced: Vec<bool> = (0..n).map(|a| a + axes >= n).collect();
    Groups::over(np, &reduced)
}

/// `2=affine`-style flags and their weights' length: `Err` for a length below 1 with weights.
pub(crate) fn affine_len(id: u32, len: i32, affine: bool) -> Result<usize> {
    if affine && len < 1 {
        return Err(crate::error::Error::BadParam {
            id,
            value: len.to_string(),
            allowed: "at least one gamma and beta when affine",
        });
    }
    Ok(len.max(0) as usize)
}

impl<R: NormRule> NormLayer<R> {
    /// The forward on a copy of an unpacked fp32 `bottom` in its own layout, where the groups
    /// are runs of values within its channel planes (LayerNorm and RMSNorm over the last
    /// axes, GroupNorm, InstanceNorm): no gathers and no serial copies (ConvNeXt-tiny's 23
    /// LayerNorms took 22 ms at 2 threads through index lists per group).
    fn normalize_in_place(&self, bottom: &Mat, plan: &NormPlan) -> Option<Mat> {
        let n = plan.groups.contiguous_size()?;
        let same = plan.out == bottom.numpy_shape();
        let [len, _] = bottom.runs();
        if !same || bottom.elempack != 1 || !matches!(bottom.data, MatData::F32(_)) {
            return None;
        }
        if !len.is_multiple_of(n) {
            return None;
        }
        let mut out = bottom.parallel_clone();
        let runs = out.runs();
        let data = out.f32_mut().ok()?;
        let how = (self.rule.norm(), self.rule.eps());
        groups::normalize_runs(data, runs, n, how, self.affine(plan));
        Some(out)
    }

    fn affine(&self, plan: &NormPlan) -> Option<Affine<'_>> {
        (!self.gamma.is_empty()).then_some(Affine {
            gamma: &self.gamma,
            beta: (!self.beta.is_empty()).then_some(&self.beta[..]),
            index: plan.index,
        })
    }

    /// Where beta starts in the device's affine mat: after gamma, from a multiple of 4.
    fn beta_at(&self) -> usize {
        self.gamma.len().next_multiple_of(4)
    }

    /// The plan for `np`, checked to find every gamma and beta it asks for.
    fn checked_plan(&self, np: &[usize]) -> Result<NormPlan> {
        let plan = self.rule.plan(np)?;
        let (len, _) = self.rule.weights();
        let i = plan.index;
        // an empty blob (groups of no values) reads no weights
        let (count, size) = (plan.groups.count(), plan.groups.size());
        let reach = if len == 0 || count == 0 || size == 0 || i.div == 0 || i.modulo == 0 {
            0
        } else {
            let within = ((size - 1) / i.div).min(i.modulo - 1);
            ((count - 1).saturating_mul(i.mul))
                .saturating_add(within)
                .saturating_add(1)
        };
        if reach > len {
            return Err(InputError::Values {
                what: "weights the blob's shape needs",
                got: len,
                expected: reach,
            }
            .into());
        }
        Ok(plan)
    }
}

impl<R: NormRule> Layer for NormLayer<R> {
    fn support(&self) -> Support {
        Support::ONE_BLOB.gpu_pack1(self.gpu.is_some()).gpu_4d()
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.rule = R::from_params(pd)?;
        Ok(())
    }

    fn load_model(&mut self, weights: &mut Weights<'_>) -> Result<()> {
        let (len, beta) = self.rule.weights();
        if len > 0 {
            self.gamma = weights.load(len, 1)?;
            if beta {
                self.beta = weights.load(len, 1)?;
            }
        }
        Ok(())
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        self.gpu = match gpu {
            Some(gpu) => {
                let affine = match (self.gamma.is_empty(), self.beta.is_empty()) {
                    (true, _) => 0,
                    (false, true) => 1,
                    (false, false) => 2,
                };
                let norm = self.rule.norm();
                Some(GroupPipeline::create(
                    gpu,
                    GroupOp::Normalize { norm, affine },
                )?)
            }
            None => None,
        };
        Ok(())
    }

    fn upload_model(&mut self, gpu: GpuSetup<'_>, _opt: &RunOptions) -> Result<()> {
        // gamma and beta each from a multiple of 4, whole vec4s (normalize_vec4.comp)
        let mut values = self.gamma.clone();
        values.resize(self.beta_at(), 0.0);
        values.extend(&self.beta);
        values.resize(values.len().next_multiple_of(4).max(4), 0.0);
        self.affine = Some(gpu.upload_values(&values, 1)?);
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        bottoms.iter().all(|BlobShape { dims, shape: s }| {
            self.checked_plan(&numpy_shape(*dims, *s))
                .is_ok_and(|p| p.groups.count() > 0)
        })
    }

    fn forward(&self, bottom: &Mat, _opt: &RunOptions) -> Result<Mat> {
        let plan = self.checked_plan(&bottom.numpy_shape())?;
        if let Some(out) = self.normalize_in_place(bottom, &plan) {
            return Ok(out);
        }
        let values = bottom.to_values();
        let out = groups::normalize(
            &values,
            &plan.groups,
            self.rule.norm(),
            self.rule.eps(),
            self.affine(&plan),
        );
        Mat::from_numpy(&plan.out, &out)
    }

    fn forward_gpu(&self, bottom: &GpuMat, rec: &mut Recorder<'_>) -> Result<GpuMat> {
        let pipeline = self.gpu.ready()?;
        let affine = self.affine.ready()?;
        let plan = self.checked_plan(&numpy_shape(bottom.dims, bottom.shape()))?;
        let top = alloc_numpy(rec, &plan.out, bottom)?;
        let extras = GroupExtras {
            eps: self.rule.eps(),
            index: plan.index,
            beta_at: self.beta_at(),
            ..GroupExtras::default()
        };
        pipeline.record(rec, (bottom, &top, affine), &plan.groups, extras)?;
        Ok(top)
    }
}
