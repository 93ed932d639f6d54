//! The implicit GEMM (dense pack4 layers): which shader, which tile and how many slices of its
//! steps, chosen per forward shape, and its dispatch.

use super::{Convolution, GpuConvolution, dispatch_grid, shaped};
use crate::OptionSet;
use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::shaders::Shader;
use crate::tensor::GpuMat;

/// The implicit GEMM's two shaders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Gemm {
    /// `convolution_gemm`: fp32 FMA, any device and path.
    Fma,
    /// `convolution_gemm_cm`: fp16 products on cooperative matrices (tensor cores), for fp16
    /// blobs where [`crate::Context::cooperative_matrix`] holds.
    CooperativeMatrix,
}

impl Gemm {
    pub(super) fn shader(self) -> Shader {
        match self {
            Gemm::Fma => Shader::ConvolutionGemm,
            Gemm::CooperativeMatrix => Shader::ConvolutionGemmCm,
        }
    }

    /// Invocations per workgroup (4 subgroups of 32 for the cooperative-matrix one).
    pub(super) fn invocations(self) -> usize {
        match self {
            Gemm::Fma => 256,
            Gemm::CooperativeMatrix => 128,
        }
    }
}

/// The FMA GEMM's tile: positions × output blocks of 4 per workgroup, its `wide`
/// specialization (constant 13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tile {
    /// 64 × 32, the default.
    Standard = 0,
    /// 128 × 16, for layers of at most 16 output blocks.
    Wide = 1,
    /// 128 × 32 (8 positions per invocation), for layers of at least [`BIG_POSITIONS`]
    /// positions: twice the arithmetic per shared-memory read.
    Big = 2,
}

impl Tile {
    /// Positions × output blocks of 4.
    fn size(self) -> [usize; 2] {
        match self {
            Tile::Standard => [64, 32],
            Tile::Wide => [128, 16],
            Tile::Big => [128, 32],
        }
    }

    /// The tile for a layer of `blocks` output blocks over `positions` outputs.
    fn choose(blocks: usize, positions: usize) -> Tile {
        if blocks <= Tile::Wide.size()[1] {
            Tile::Wide
        } else if positions >= BIG_POSITIONS {
            Tile::Big
        } else {
            Tile::Standard
        }
    }
}

/// The cooperative-matrix GEMM's one tile: positions × output blocks of 4.
const CM_TILE: [usize; 2] = [64, 16];
/// Workgroups the GEMM aims for before it splits its steps (a few per multiprocessor of a large
/// GPU), and the fewest steps a slice keeps.
const TARGET_GROUPS: usize = 512;
const MIN_SLICE_STEPS: usize = 16;
/// Output positions from which [`Tile::Big`] is taken.
const BIG_POSITIONS: usize = 8192;

/// How one forward runs the GEMM: the shader, its tile and the slices its steps are split
/// into (each slice's partial sums added by `convolution_gemm_sum` when more than one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct GemmPlan {
    /// The shader.
    pub gemm: Gemm,
    /// The FMA GEMM's tile (the cooperative-matrix one has one).
    pub tile: Option<Tile>,
    /// Slices of the steps: a power of two.
    pub splits: usize,
}

impl GemmPlan {
    /// The plan for `blocks` output blocks of 4 over `positions` outputs and `steps` steps
    /// (input blocks × kernel positions).
    pub fn choose(gemm: Gemm, blocks: usize, positions: usize, steps: usize) -> GemmPlan {
        let tile = (gemm == Gemm::Fma).then(|| Tile::choose(blocks, positions));
        let [tn, tm] = tile.map_or(CM_TILE, Tile::size);
        let tiles = positions.div_ceil(tn) * blocks.div_ceil(tm);
        let wanted = TARGET_GROUPS.div_ceil(tiles.max(1));
        let most = (steps / MIN_SLICE_STEPS).max(1);
        // a power of two, so that few split counts (pipelines) exist
        let s = wanted.min(most).max(1);
        let splits = if s.is_power_of_two() {
            s
        } else {
            s.next_power_of_two() / 2
        };
        GemmPlan { gemm, tile, splits }
    }

    /// Positions × output blocks per workgroup.
    pub fn tile_size(&self) -> [usize; 2] {
        self.tile.map_or(CM_TILE, Tile::size)
    }
}

impl Convolution {
    /// Records the implicit GEMM (and, when it splits its steps, the pass that adds the
    /// slices) from pack4 `bottom` into `top`.
    pub(super) fn dispatch_gemm(
        &self,
        state: &GpuConvolution,
        rec: &mut Recorder<'_>,
        [bottom, top, weights, bias]: [&GpuMat; 4],
        words: &[u32],
    ) -> Result<()> {
        let (Some(no_partials), Some(gemm)) = (&state.no_partials, state.gemm) else {
            return Err(Error::NotLoaded {
                what: "the GEMM's partial-sum buffer on the device",
            });
        };
        let positions = top.w * top.h;
        let steps = bottom.c * self.window.kernel[0] * self.window.kernel[1];
        let plan = GemmPlan::choose(gemm, self.window.num_output / 4, positions, steps);
        let splits = plan.splits;
        let grid = |v: [usize; 3]| dispatch_grid(v, top);
        let [tn, tm] = plan.tile_size();
        let groups = grid([
            positions.div_ceil(tn) * gemm.invocations(),
            top.c.div_ceil(tm),
            splits,
        ])?;
        let ctx = rec.context();
        // the split and the tile (the sum pass has none) and the shapes, specialized here
        let spec = |tile: Option<Tile>| {
            let mut values = self.window.spec(1);
            values.push((12, SpecValue::I32(splits as i32)));
            values.extend(tile.map(|t| (13, SpecValue::I32(t as i32))));
            shaped(values, words)
        };
        let pipeline = ctx.pipeline(gemm.shader().module(), state.options, &spec(plan.tile))?;
        if splits == 1 {
            return rec.dispatch(
                &pipeline,
                &[bottom, top, weights, bias, no_partials],
                words,
                groups,
            );
        }
        let sum = ctx.pipeline(
            Shader::ConvolutionGemmSum.module(),
            state.options,
            &spec(None),
        )?;
        // one row of fp32 values (a 1-D mat's length is its channel count)
        let partials = GpuMat::alloc(
            ctx,
            2,
            [positions * top.c * splits * 4, 1, 1],
            1,
            OptionSet::FP32,
        );
        rec.dispatch(
            &pipeline,
            &[bottom, top, weights, bias, &partials],
            words,
            groups,
        )?;
        rec.dispatch(
            &sum,
            &[&partials, top, bias],
            words,
            grid([positions, top.c, 1])?,
        )
    }
}
