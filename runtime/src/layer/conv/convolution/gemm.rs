//! Convolution's implicit GEMM forward (dense pack4 layers): the plan of
//! [`crate::layer::conv::implicit_gemm`] recorded, with the pass that adds split slices.

use super::{Convolution, GpuConvolution};
use crate::OptionSet;
use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::conv::implicit_gemm::{GemmPlan, Tile, dispatch_grid, shaped};
use crate::layer::conv::window::Pack4Kind as Kind;
use crate::layer::epilogue::Epilogue;
use crate::layer::shared::pipelines::fold_into_z;
use crate::shaders::Shader;
use crate::tensor::GpuMat;

impl Convolution {
    /// Records the implicit GEMM (and, when it splits its steps, the pass that adds the
    /// slices) from pack4 `bottom` into `top`, with the residual and activation the net fused
    /// into its epilogue.
    pub(super) fn dispatch_gemm(
        &self,
        state: &GpuConvolution,
        rec: &mut Recorder<'_>,
        [bottom, top, weights, bias]: [&GpuMat; 4],
        (words, epilogue): (&[u32], Epilogue<'_>),
    ) -> Result<()> {
        let (Some(no_partials), Some(gemm)) = (&state.no_partials, state.gemm) else {
            return Err(Error::NotLoaded {
                what: "the GEMM's partial-sum buffer on the device",
            });
        };
        let positions = top.w * top.h;
        let steps = bottom.c * self.window.kernel[0] * self.window.kernel[1];
        let plan = GemmPlan::choose(gemm, top.c, positions, steps);
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
        // the residual's binding, or a stand-in (read-only, as the bias)
        let residual = epilogue.residual.unwrap_or(bias);
        let spec = |tile: Option<Tile>| {
            let mut values = self.window.spec_with(Kind::Blocks, epilogue.act);
            values.push((12, SpecValue::I32(splits as i32)));
            values.push((16, SpecValue::I32(i32::from(epilogue.residual.is_some()))));
            values.extend(tile.map(|t| (13, SpecValue::I32(t as i32))));
            shaped(values, words)
        };
        let pipeline = ctx.pipeline(gemm.shader().module(), state.options, &spec(plan.tile))?;
        if splits == 1 {
            // unsplit, the shader continues its position tiles along z past the device limit
            let groups = fold_into_z(ctx, &pipeline, groups, 0);
            return rec.dispatch(
                &pipeline,
                &[bottom, top, weights, bias, no_partials, residual],
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
        )?;
        rec.dispatch(
            &pipeline,
            &[bottom, top, weights, bias, &partials, residual],
            words,
            groups,
        )?;
        rec.dispatch(
            &sum,
            &[&partials, top, bias, residual],
            words,
            grid([positions, top.c, 1])?,
        )
    }
}
