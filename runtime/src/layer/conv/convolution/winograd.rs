//! The GPU's Winograd F(4×4, 3×3) for dense 3×3 stride-1 pack4 layers (ncnn's Vulkan choice for
//! such layers of at least 16 channels each side): the input transform
//! (`convolution_winograd43_input`), the 36 element-wise products of every tile through the
//! implicit GEMM's shader (its tensor-core or FMA form, as the layer's other shapes take) as
//! 36 batch matrices of a 1×1 kernel, and the output transform with the bias and the activation
//! (`convolution_winograd43_output`). 36 products per 16 outputs against the implicit GEMM's
//! 144, for two passes over the transformed values in memory: it wins on large maps, which
//! the SR models' layers are, and loses on small ones, which keep the implicit GEMM.
//! Transforms split over more invocations (up to six per input tile, each keeping some of its
//! columns, and four per output tile, each making some of its rows) were slower on an H200 at
//! 1024², 280 and 200 us against 140 and 125, and on RRDBNet-6 as a whole: only layers of too
//! few tiles × channel blocks to fill the device split them ([`TRANSFORM_INVOCATIONS`]).

use super::{Convolution, GpuConvolution};
use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::contract::GpuSetup;
use crate::layer::conv::implicit_gemm::Batched;
use crate::layer::conv::implicit_gemm::{dispatch_grid, shaped};
use crate::layer::conv::window::Pack4Kind;
use crate::layer::epilogue::FusedActivation;
use crate::layer::run_options::RunOptions;
use crate::shaders::Shader;
use crate::tensor::GpuMat;

/// The elements of a 6×6 transformed tile: one batch matrix of the GEMM each.
const ELEMENTS: usize = 36;

/// The smallest output side (width and height) that takes Winograd on the GPU: smaller maps
/// keep the implicit GEMM, whose one pass over the input beats the transforms' round trips
/// through memory there.
const MIN_SIDE: usize = 16;

/// The transformed weights on the device ([`Convolution::winograd_weights`]).
pub(super) struct GpuWinograd {
    pub(super) weights: Option<GpuMat>,
}

impl Convolution {
    /// Whether this layer can take Winograd on the GPU at all (per shape: [`Self::winograd_on`]).
    fn winograd_fits(&self) -> bool {
        let w = &self.window;
        // a pack1 output's layer (outputs not in blocks of 4) takes the plain GEMM
        self.uses_gemm()
            && self.pack4_kind() == Pack4Kind::Blocks
            && !self.gemm_pads_input()
            && w.kernel == [3, 3]
            && w.stride == [1, 1]
            && w.dilation == [1, 1]
            && w.channels() >= 16
            && w.num_output >= 16
    }

    /// The device side of Winograd for this layer, where it fits and `opt` allows it.
    pub(super) fn winograd_state(
        &self,
        gpu: GpuSetup<'_>,
        opt: &RunOptions,
    ) -> Result<Option<GpuWinograd>> {
        if !(opt.use_winograd_convolution && self.winograd_fits()) {
            return Ok(None);
        }
        for shader in [
            Shader::ConvolutionWinograd43Input,
            Shader::ConvolutionWinograd43Output,
        ] {
            gpu.ctx.fitting_variants(shader.module(), gpu.options)?;
        }
        Ok(Some(GpuWinograd { weights: None }))
    }

    /// The transformed weights as uploaded: per element of the tile, the implicit GEMM's
    /// layout of a 1×1 kernel (per input block, per output block, four rows of four input
    /// weights).
    pub(super) fn winograd_weights(&self) -> Vec<f32> {
        let (cin, cout) = (self.window.channels(), self.window.num_output);
        let u = super::cpu::f43_weights(&self.weights, cout, cin);
        let batched = Batched {
            in_blocks: cin / 4,
            out_blocks: cout / 4,
            batches: ELEMENTS,
            ..Batched::default()
        };
        batched.weights(|b, i, o| u[(b * cin + i) * cout + o])
    }

    /// Whether a forward onto an output of `ow × oh` takes Winograd.
    pub(super) fn winograd_on(&self, state: &GpuConvolution, [ow, oh]: [usize; 2]) -> bool {
        state.winograd.is_some() && ow.min(oh) >= MIN_SIDE
    }

    /// Records the three steps from pack4 `bottom` into `top`: the input transform, the
    /// products as the implicit GEMM of a 1×1 kernel over each element's tiles (36 batch
    /// matrices in one dispatch), the output transform.
    pub(super) fn dispatch_winograd(
        &self,
        state: &GpuConvolution,
        rec: &mut Recorder<'_>,
        [bottom, top, bias]: [&GpuMat; 3],
        (words, act): (&[u32], Option<FusedActivation>),
    ) -> Result<()> {
        let (
            Some(GpuWinograd {
                weights: Some(weights),
            }),
            Some(gemm),
            Some(no_partials),
        ) = (&state.winograd, state.gemm, &state.no_partials)
        else {
            return Err(Error::NotLoaded {
                what: "the Winograd weights on the device",
            });
        };
        let tiles = top.w.div_ceil(4) * top.h.div_ceil(4);
        let ctx = rec.context();
        // the transformed input and the products, pack4: [36][blocks][tiles]
        let v = GpuMat::alloc(
            ctx,
            2,
            [ELEMENTS * bottom.c * tiles, 1, 1],
            4,
            bottom.options,
        )?;
        let m = GpuMat::alloc(ctx, 2, [ELEMENTS * top.c * tiles, 1, 1], 4, bottom.options)?;
        // each transform's parts per tile (constant 17)
        let spec = |parts: usize| {
            let mut values = self.window.spec_with(Pack4Kind::Blocks, act);
            values.push((17, SpecValue::I32(parts as i32)));
            shaped(values, words)
        };
        let parts = transform_parts(tiles * bottom.c, &[1, 2, 3, 6]);
        let input = ctx.pipeline(
            Shader::ConvolutionWinograd43Input.module(),
            state.options,
            &spec(parts),
        )?;
        rec.dispatch(
            &input,
            &[bottom, &v],
            words,
            dispatch_grid([tiles * parts, bottom.c, 1], top)?,
        )?;
        let batched = Batched {
            positions: tiles,
            in_blocks: bottom.c,
            in_rs: tiles,
            out_blocks: top.c,
            out_rs: tiles,
            batches: ELEMENTS,
        };
        batched.record(
            rec,
            gemm,
            state.options,
            [&v, &m, weights, bias, no_partials],
        )?;
        let parts = transform_parts(tiles * top.c, &[1, 2, 4]);
        let output = ctx.pipeline(
            Shader::ConvolutionWinograd43Output.module(),
            state.options,
            &spec(parts),
        )?;
        rec.dispatch(
            &output,
            &[&m, top, bias],
            words,
            dispatch_grid([tiles * parts, top.c, 1], top)?,
        )
    }
}

/// Invocations a transform wants before it splits a tile's work over more of them (a few
/// warps per multiprocessor of an H200: vgg16's 224² × 64, 50176 invocations, lost split in two,
/// its 28² layers, 3136-6272, won split in six).
const TRANSFORM_INVOCATIONS: usize = 1 << 14;

/// The fewest of `choices` (ascending) parts per tile that give `tiles` (tiles × channel
/// blocks) [`TRANSFORM_INVOCATIONS`], else the most.
fn transform_parts(tiles: usize, choices: &[usize]) -> usize {
    (choices.iter().copied())
        .find(|p| tiles * p >= TRANSFORM_INVOCATIONS)
        .or_else(|| choices.last().copied())
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    /// Large maps keep one invocation per tile (splitting them lost at 1024²); deep layers of
    /// few tiles split theirs.
    #[test]
    fn only_few_tiles_split_their_transforms() {
        let input = [1, 2, 3, 6];
        // RRDBNet's 32-channel layers at 256²: 4096 tiles × 8 blocks
        assert_eq!(super::transform_parts(4096 * 8, &input), 1);
        // vgg16's 224² × 64: 3136 × 16
        assert_eq!(super::transform_parts(3136 * 16, &input), 1);
        // its 56² × 256 (196 × 64) and 28² × 512 (49 × 128) and 28² × 256 (49 × 64)
        assert_eq!(super::transform_parts(196 * 64, &input), 2);
        assert_eq!(super::transform_parts(49 * 128, &input), 3);
        assert_eq!(super::transform_parts(49 * 64, &input), 6);
        assert_eq!(super::transform_parts(49 * 64, &[1, 2, 4]), 4);
    }
}
