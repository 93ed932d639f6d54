//! The group pipeline: one [`GroupOp`] over the groups of a pack1 buffer blob
//! (`shaders/reduce.comp`, and `normalize_vec4.comp` where normalized groups are contiguous
//! vec4 runs), what Reduction, CumulativeSum, StatisticsPooling, the norms and Gemm's int8
//! quantization record.

use std::sync::Arc;

use crate::error::Result;
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::GpuSetup;
use crate::layer::shared::groups::{GroupExtras, GroupOp, Groups, int_constants, three};
use crate::layer::shared::normalize_vec4::Vec4Norm;
use crate::layer::shared::pipelines::{expect_pack1_buffer, index_word, workgroup_rows};
use crate::shaders::Shader;
use crate::tensor::GpuMat;

/// The reduce pipeline of one [`GroupOp`] (buffer nets, pack1).
pub struct GroupPipeline {
    pipeline: Arc<Pipeline>,
    /// [`GroupOp::Normalize`]: `normalize_vec4.comp` for contiguous vec4 groups.
    vec4: Option<Vec4Norm>,
}

impl GroupPipeline {
    /// The pipeline for `op` with `gpu`'s options.
    pub fn create(gpu: GpuSetup<'_>, op: GroupOp) -> Result<Self> {
        let (mode, reduce, norm, affine) = match op {
            GroupOp::Reduce(o) => (0, o, 0, 0),
            GroupOp::Normalize { norm, affine } => (1, 0, norm as i32, affine),
            GroupOp::Scan => (2, 0, 0, 0),
            GroupOp::Int8 => (3, 0, 0, 0),
        };
        let values = int_constants(&[mode, reduce, norm, affine]);
        let module = Shader::Reduce.module();
        let vec4 = match op {
            GroupOp::Normalize { norm, affine } => Some(Vec4Norm::new(gpu.options, norm, affine)),
            _ => None,
        };
        Ok(GroupPipeline {
            pipeline: gpu.pipeline(module, &values)?,
            vec4,
        })
    }

    /// Records the groups of pack1 `src` into `dst` (one value per group from
    /// `extras.dst_offset` for a reduction; each value's own place otherwise), with `affine`
    /// bound as the gamma/beta mat (any mat when there are none), a whole number of vec4s.
    pub fn record(
        &self,
        rec: &mut Recorder<'_>,
        (src, dst, affine): (&GpuMat, &GpuMat, &GpuMat),
        groups: &Groups,
        extras: GroupExtras,
    ) -> Result<()> {
        self.record_with_side(rec, (src, dst, affine, dst), groups, extras)
    }

    /// [`GroupOp::Int8`]'s record: the levels of `src` into `dst`, each group's descale into
    /// the fp32 mat `descales` from index `dst_offset`.
    pub fn record_int8(
        &self,
        rec: &mut Recorder<'_>,
        (src, dst, descales): (&GpuMat, &GpuMat, &GpuMat),
        groups: &Groups,
        dst_offset: usize,
    ) -> Result<()> {
        let extras = GroupExtras {
            dst_offset,
            ..GroupExtras::default()
        };
        self.record_with_side(rec, (src, dst, src, descales), groups, extras)
    }

    /// [`GroupPipeline::record`] with the fp32 side buffer (binding 3) given.
    fn record_with_side(
        &self,
        rec: &mut Recorder<'_>,
        (src, dst, affine, side): (&GpuMat, &GpuMat, &GpuMat, &GpuMat),
        groups: &Groups,
        extras: GroupExtras,
    ) -> Result<()> {
        for m in [src, dst, affine] {
            expect_pack1_buffer(&self.pipeline, m)?;
        }
        let word = |v: usize, what: &str| index_word(&self.pipeline, v as isize, what);
        let (outer_size, outer_stride) = three(word, &groups.outer, "the groups")?;
        let (inner_size, inner_stride) = three(word, &groups.inner, "a group")?;
        let count = groups.count();
        if count == 0 || groups.size() == 0 {
            return Ok(());
        }
        if let Some(vec4) = &self.vec4
            && vec4.takes(groups, src, dst)
        {
            return vec4.record(rec, (src, dst, affine), groups, extras);
        }
        let mut words = Vec::with_capacity(29);
        for part in [outer_size, outer_stride, inner_size, inner_stride] {
            words.extend(part);
        }
        words.push(word(count, "the groups")?);
        words.push(word(groups.size(), "a group")?);
        for m in [src, dst] {
            words.push(word(m.w * m.h, "a plane")?);
            words.push(word(m.cstep, "a channel step")?);
        }
        let i = extras.index;
        words.push(word(extras.dst_offset, "an offset")?);
        words.extend(i.words(word)?);
        words.push(word(extras.beta_at, "the affine index")?);
        words.push(extras.eps.to_bits());
        words.push(extras.coeff.to_bits());
        // one workgroup of 256 per group
        let grid = workgroup_rows(rec.context(), count, 256);
        rec.dispatch(&self.pipeline, &[src, dst, affine, side], &words, grid)
    }
}
