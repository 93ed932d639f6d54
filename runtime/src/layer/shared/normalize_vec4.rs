//! `normalize_vec4.comp` (and its subgroup twin): the normalizations over groups that are
//! contiguous runs of whole vec4s, each group (or tile of one) held in one workgroup's registers;
//! [`crate::layer::shared::group_pipeline::GroupPipeline`] takes it where the groups allow and `reduce.comp`
//! elsewhere.

use std::sync::{Arc, OnceLock};

use crate::OptionSet;
use crate::error::Result;
use crate::gpu::specialize::{SpecValue, Specialization};
use crate::gpu::{Context, Pipeline, Recorder};
use crate::layer::shared::groups::{GroupExtras, Groups, Norm, int_constants, three};
use crate::layer::shared::pipelines::{index_word, workgroup_rows};
use crate::shaders::Shader;
use crate::tensor::{GpuMat, StorageFormat};

/// `normalize_vec4.comp` (or its subgroup twin) for one normalization: its constants besides
/// the mode and workgroup size, and the pipelines made so far.
pub(crate) struct Vec4Norm {
    options: OptionSet,
    norm: Norm,
    affine: i32,
    /// Mode 0 at 32, 64, 128 and 256 lanes, then modes 1 to 3 (256 lanes), narrow then wide:
    /// made on first use, as the lanes depend on the blob, and kept so that a run does no
    /// cache lookups.
    made: [[OnceLock<Arc<Pipeline>>; 7]; 2],
}

/// Values of a group one lane of `normalize_vec4.comp` holds in registers.
const LANE_VALUES: usize = 4 * 8;

/// `normalize_vec4.comp`'s most lanes per workgroup.
const MAX_LANES: usize = 256;

impl Vec4Norm {
    /// Its pipelines for normalization `norm` (with `affine`) in variant `options`.
    pub(crate) fn new(options: OptionSet, norm: Norm, affine: i32) -> Self {
        Vec4Norm {
            options,
            norm,
            affine,
            made: Default::default(),
        }
    }

    /// The pipeline of `mode` with `lanes` (a power of two from 32; 256 but for mode 0)
    /// invocations per workgroup.
    /// `wide`: 8 fp16 values per access (the shader's constant 4).
    fn pipeline(
        &self,
        ctx: &Context,
        mode: i32,
        lanes: usize,
        wide: bool,
    ) -> Result<Arc<Pipeline>> {
        let slot = match mode {
            0 => lanes.ilog2() as usize - 5,
            _ => 3 + mode as usize,
        };
        let made = &self.made[usize::from(wide)][slot];
        if let Some(p) = made.get() {
            return Ok(p.clone());
        }
        let mut values = int_constants(&[mode, self.norm as i32, self.affine]);
        values.push((4, SpecValue::I32(i32::from(wide))));
        let spec = Specialization {
            values,
            local_size: Some([lanes as u32, 1, 1]),
        };
        // its sums on subgroup arithmetic where the device has it and the path takes it
        let subgroups = Shader::NormalizeVec4Subgroup.module();
        let p = match ctx.candidates(subgroups, self.options).is_empty() {
            false => ctx.pipeline(subgroups, self.options, &spec).ok(),
            true => None,
        };
        let p = match p {
            Some(p) => p,
            None => ctx.pipeline(Shader::NormalizeVec4.module(), self.options, &spec)?,
        };
        Ok(made.get_or_init(|| p).clone())
    }

    /// Records a normalization of contiguous vec4 groups: one dispatch when a group fits a
    /// tile, else partials, their combination and the apply.
    pub(crate) fn record(
        &self,
        rec: &mut Recorder<'_>,
        (src, dst, affine): (&GpuMat, &GpuMat, &GpuMat),
        groups: &Groups,
        extras: GroupExtras,
    ) -> Result<()> {
        let (count, n) = (groups.count(), groups.size());
        // a group in one workgroup's registers when it fits, with as few lanes as hold it
        // (a row of 2048 values takes 64: a tree of 256 lanes over it cost 2x), else split
        // over tiles of 256 lanes
        let lanes = n
            .div_ceil(LANE_VALUES)
            .next_power_of_two()
            .clamp(32, MAX_LANES);
        let segs = n.div_ceil(MAX_LANES * LANE_VALUES);
        let ctx = rec.context();
        // 16-byte accesses of fp16 values where every group starts on a multiple of 8
        let wide = src.format == StorageFormat::Fp16
            && dst.format == StorageFormat::Fp16
            && n.is_multiple_of(8)
            && groups.outer.strides.iter().all(|v| v % 8 == 0);
        let first = self.pipeline(ctx, if segs == 1 { 0 } else { 1 }, lanes, wide)?;
        let word = |v: usize, what: &str| index_word(&first, v as isize, what);
        let (outer_size, outer_stride) = three(word, &groups.outer, "the groups")?;
        let mut words = Vec::with_capacity(15);
        words.extend(outer_size);
        words.extend(outer_stride);
        for (v, what) in [(count, "the groups"), (n, "a group"), (segs, "the tiles")] {
            words.push(word(v, what)?);
        }
        let i = extras.index;
        words.extend(i.words(word)?);
        // how the four values of a vec4 find their entries (the shader's aff_kind)
        let kind = if i.div.is_multiple_of(4) || i.modulo == 1 {
            1
        } else if i.div == 1
            && i.modulo >= n
            && i.mul.is_multiple_of(4)
            && extras.beta_at.is_multiple_of(4)
        {
            2
        } else {
            0
        };
        words.push(kind);
        words.push(word(extras.beta_at, "the affine index")?);
        words.push(extras.eps.to_bits());
        // mean and squared deviations per tile, then (a, b) per group: fp32 pairs
        let pairs = if segs > 1 { count * segs + count } else { 1 };
        let partials = GpuMat::alloc(ctx, 2, [pairs * 2, 1, 1], 1, OptionSet::FP32)?;
        let bindings = [src, dst, affine, &partials];
        if segs == 1 {
            return rec.dispatch(
                &first,
                &bindings,
                &words,
                workgroup_rows(rec.context(), count, lanes),
            );
        }
        let (combine, apply) = (
            self.pipeline(ctx, 2, MAX_LANES, wide)?,
            self.pipeline(ctx, 3, MAX_LANES, wide)?,
        );
        let tiles = workgroup_rows(rec.context(), count * segs, MAX_LANES);
        rec.dispatch(&first, &bindings, &words, tiles)?;
        rec.dispatch(
            &combine,
            &bindings,
            &words,
            workgroup_rows(rec.context(), count, MAX_LANES),
        )?;
        rec.dispatch(&apply, &bindings, &words, tiles)
    }

    /// Whether `normalize_vec4.comp` can take these groups: each group contiguous in memory (a
    /// blob whose channels lie back to back, so logical is physical) and in whole vec4s.
    pub(crate) fn takes(&self, groups: &Groups, src: &GpuMat, dst: &GpuMat) -> bool {
        // 1-D and 2-D mats are one row of channels or of rows, whatever their cstep
        let back_to_back = |m: &GpuMat| m.dims <= 2 || m.cstep == m.w * m.h;
        let (inner, _) = groups.inner.simplified_with(&groups.inner);
        back_to_back(src)
            && back_to_back(dst)
            && groups.inner.offset == 0
            && groups.outer.offset == 0
            && inner.shape.len() == 1
            && inner.strides[0] == 1
            && inner.shape[0].is_multiple_of(4)
            && groups.outer.strides.iter().all(|v| *v >= 0 && *v % 4 == 0)
    }
}
