//! The GPU's Winograd F(4×4, 3×3), shared by Convolution and Convolution3D: the input
//! transform (`convolution_winograd43_input`), the 36 element-wise products of every tile
//! through the implicit GEMM's shader (its tensor-core or FMA form, as the layer's other
//! shapes take) as 36 batch matrices, and the output transform with the bias, the net's
//! residual sum and the activation (`convolution_winograd43_output`). 36 products per 16
//! outputs against the implicit GEMM's 144, for two passes over the transformed values in
//! memory: it wins on large maps and loses on small ones, which keep the implicit GEMM.
//!
//! A 3-D window of 3×3 across and any kernel, dilation, stride and padding along the depth
//! ([`DepthSlabs`]) is a sum of 2-D 3×3 convolutions of the input's depth slabs: each slab is
//! transformed as a 2-D map, and each of the 36 products becomes a 3-D convolution of one tap
//! across over the transformed slabs (`[blocks][slabs][tiles]`, a tile row per slab), whose
//! steps sum the input blocks and the depth taps. The implicit GEMM takes that window as it
//! takes any 3-D one. (r3d_18's 3×3×3 layers of 64 channels at 16 × 56² took 167 µs each in
//! the implicit GEMM on an H200: 27 products per output against Winograd's 6.75.)
//! Transforms split over more invocations (up to six per input tile, each keeping some of its
//! columns, and four per output tile, each making some of its rows) were slower on an H200 at
//! 1024², 280 and 200 us against 140 and 125, and on RRDBNet-6 as a whole: only layers of too
//! few tiles × channel blocks to fill the device split them ([`TRANSFORM_INVOCATIONS`]).

use crate::OptionSet;
use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::gpu::Context;
use crate::gpu::Recorder;
use crate::gpu::specialize::SpecValue;
use crate::layer::contract::GpuSetup;
use crate::layer::conv::convolution::cpu::f43_weights;
use crate::layer::conv::implicit_gemm::{Batched, DepthSlabs, GemmEngine, dispatch_grid, shaped};
use crate::layer::conv::window::{Pack4Kind, Window};
use crate::layer::epilogue::Epilogue;
use crate::shaders::Shader;
use crate::tensor::GpuMat;

/// The elements of a 6×6 transformed tile: one batch matrix of the GEMM each.
pub(crate) const ELEMENTS: usize = 36;

/// The smallest output side (width and height) that takes Winograd on the GPU: smaller maps
/// keep the implicit GEMM, whose one pass over the input beats the transforms' round trips
/// through memory there.
const MIN_SIDE: usize = 16;

/// [`MIN_SIDE`] for windows of at least 3 depth taps, whose products sum 3 times the steps
/// per transformed value: r3d_18's 14² × 4 layers of 256 channels took 69–71 us against the
/// implicit GEMM's 84–86 on an H200, its 7² × 2 ones 115–119 against 56–58.
const MIN_SIDE_DEEP: usize = 12;

/// Invocations per workgroup of both transforms.
const TRANSFORM_GROUP: usize = 64;

/// Whether a window takes Winograd at all: 3×3 across, stride and dilation 1 across, at least
/// 16 channels each side (ncnn's Vulkan choice for dense 3×3 stride-1 pack4 layers). The caller
/// checks the rest: dense blocks of 4, no padded input, and the shapes ([`fits_grid`]).
pub(crate) fn fits_window(w: &Window) -> bool {
    w.kernel == [3, 3]
        && w.stride == [1, 1]
        && w.dilation == [1, 1]
        && w.channels() >= 16
        && w.num_output >= 16
}

/// Whether an output of `[ow, oh]`, with `depth_taps` taps along the depth (1 for a 2-D
/// window), is large enough for Winograd ([`MIN_SIDE`], [`MIN_SIDE_DEEP`]). (A 2-D layer's
/// grid or transformed values past the device's limits are the net's to split: it runs the
/// layer in bands of rows.)
pub(crate) fn large_enough([ow, oh]: [usize; 2], depth_taps: usize) -> bool {
    let min_side = if depth_taps >= 3 {
        MIN_SIDE_DEEP
    } else {
        MIN_SIDE
    };
    ow.min(oh) >= min_side
}

/// Whether a 3-D layer's output of `[ow, oh]` over `slabs` (input, output) depth slabs of
/// `blocks` (input, output) blocks of 4, with `depth_taps` taps along the depth, takes
/// Winograd: [`large_enough`], the transforms' and the products' grids within a dispatch of
/// `ctx`, and the transformed values within one of its buffers (reckoned at 4 bytes a value);
/// otherwise the layer takes its implicit GEMM, whose grid folds past the limit.
pub(crate) fn fits_grid(
    ctx: &Context,
    out: [usize; 2],
    blocks: [usize; 2],
    slabs: [usize; 2],
    depth_taps: usize,
) -> bool {
    let limit = ctx.limits().max_compute_workgroups_per_dimension as usize;
    let tiles = out[0].div_ceil(4) * out[1].div_ceil(4);
    // the most parts a transform splits a tile into: six
    let across = (tiles * 6).div_ceil(TRANSFORM_GROUP);
    let bytes = |i: usize| (ELEMENTS * blocks[i] * slabs[i] * tiles * 16) as u64;
    // the products' workgroups along x: at least 64 positions each, positions every output
    // slab's tiles
    let products = (tiles * slabs[1]).div_ceil(64);
    large_enough(out, depth_taps)
        && across.max(products) <= limit
        && (0..2).all(|i| blocks[i] * slabs[i] <= limit && bytes(i) <= ctx.largest_mat_bytes())
}

/// The device side: the transformed weights, made and uploaded by the first forward that
/// takes Winograd. (Uploaded with the layer's other weights, those of layers whose maps never
/// reach [`MIN_SIDE`] took memory for nothing: r3d_18's 7² layers, about 170 MB; its device
/// memory on lavapipe went from 407 to 258 MiB, 177 without Winograd.)
#[derive(Default)]
pub(crate) struct GpuWinograd {
    weights: OnceLock<GpuMat>,
}

impl GpuWinograd {
    /// The transformed weights on the device of `gpu`, from `kernels` of `[cin, cout, taps]`
    /// ([`transformed_weights`]), uploaded at the first call; kernels of another size are an
    /// error, not a panic.
    pub(crate) fn weights(
        &self,
        gpu: GpuSetup<'_>,
        kernels: &[f32],
        [cin, cout, taps]: [usize; 3],
    ) -> Result<&GpuMat> {
        let not_loaded = || Error::NotLoaded {
            what: "the Winograd weights on the device",
        };
        if let Some(w) = self.weights.get() {
            return Ok(w);
        }
        if kernels.len() != cin * cout * taps * 9 || cin % 4 != 0 || cout % 4 != 0 {
            return Err(not_loaded());
        }
        let values = transformed_weights(kernels, [cin, cout, taps]);
        // two threads may both upload: the first to set keeps its own, the other's is dropped
        let _ = self.weights.set(gpu.upload_values(&values, 4)?);
        self.weights.get().ok_or_else(not_loaded)
    }
}

/// The shaders a layer taking Winograd needs in its variant: checked at `create_pipeline`.
pub(crate) fn check_shaders(ctx: &Context, options: OptionSet) -> Result<()> {
    for shader in [
        Shader::ConvolutionWinograd43Input,
        Shader::ConvolutionWinograd43Output,
    ] {
        ctx.fitting_variants(shader.module(), options)?;
    }
    Ok(())
}

/// The transformed weights as the batched GEMM reads them, from kernels `[cout][cin][taps][3][3]`
/// (`taps` depth taps; 1 for a 2-D window): per depth tap, the F(4,3) weights of its 3×3
/// kernels (the CPU's Winograd's transform, through 0, ±√2, ±√2/2, as the shaders' `Bᵀ` and
/// `Aᵀ`), laid out per batch, per input block and tap, per output block.
fn transformed_weights(weights: &[f32], [cin, cout, taps]: [usize; 3]) -> Vec<f32> {
    let per_tap: Vec<Vec<f32>> = (0..taps)
        .map(|kz| {
            // `[cout][cin][3][3]` of depth tap kz
            let kernels = weights.chunks_exact(9).skip(kz).step_by(taps);
            let plane: Vec<f32> = kernels.flatten().copied().collect();
            f43_weights(&plane, cout, cin)
        })
        .collect();
    let batched = Batched {
        in_blocks: cin / 4,
        out_blocks: cout / 4,
        batches: ELEMENTS,
        ..Batched::default()
    };
    batched.weights_over_taps(taps, |b, i, t, o| per_tap[t][(b * cin + i) * cout + o])
}

/// One Winograd forward of a layer: its GEMM engine and variant, transformed weights, what it
/// binds as unused partial sums, its window, and a 3-D window's depth axis.
pub(crate) struct WinogradCall<'a> {
    pub gemm: GemmEngine,
    pub options: OptionSet,
    pub weights: &'a GpuMat,
    pub no_partials: &'a GpuMat,
    pub window: &'a Window,
    pub depth: Option<DepthSlabs>,
}

impl WinogradCall<'_> {
    /// Records the three steps from pack4 `bottom` into `top` (`words`: the convolution's push
    /// constants, shapes of 3-D blobs as their `h · d` views), with the net's epilogue. Its
    /// buffers are made before anything is recorded: an error past a limit of the device or
    /// the memory budget ([`crate::Error::is_device_limit`]) leaves the recording as it was.
    pub(crate) fn record(
        &self,
        rec: &mut Recorder<'_>,
        [bottom, top, bias]: [&GpuMat; 3],
        (words, epilogue): (&[u32], Epilogue<'_>),
    ) -> Result<()> {
        let [din, dout] = self.depth.map_or([1, 1], |d| [d.depth, d.outdepth]);
        let (oh, ow) = (top.h / dout, top.w);
        let tiles = ow.div_ceil(4) * oh.div_ceil(4);
        let ctx = rec.context();
        // the transformed input and the products, pack4: [36][blocks][slabs][tiles]
        let v = GpuMat::alloc(
            ctx,
            2,
            [ELEMENTS * bottom.c * din * tiles, 1, 1],
            4,
            bottom.options,
        )?;
        let m = GpuMat::alloc(
            ctx,
            2,
            [ELEMENTS * top.c * dout * tiles, 1, 1],
            4,
            bottom.options,
        )?;
        let int = |v: usize| SpecValue::I32(v as i32);
        // each transform's parts per tile (constant 17), and the depths
        let spec = |parts: usize, residual: bool| {
            let mut values = self.window.spec_with(Pack4Kind::Blocks, epilogue.act);
            // (the transforms read no depth taps: the products take them)
            values.retain(|(id, _)| *id < 30);
            values.push((17, int(parts)));
            if residual {
                values.push((16, int(1)));
            }
            if self.depth.is_some() {
                values.extend([(34, int(din)), (35, int(dout))]);
            }
            shaped(values, words)
        };
        let parts = transform_parts(tiles * bottom.c * din, &[1, 2, 3, 6]);
        let input = ctx.pipeline(
            Shader::ConvolutionWinograd43Input.module(),
            self.options,
            &spec(parts, false),
        )?;
        rec.dispatch(
            &input,
            &[bottom, &v],
            words,
            dispatch_grid([tiles * parts, bottom.c * din, 1], top)?,
        )?;
        let batched = Batched {
            positions: tiles,
            in_blocks: bottom.c,
            in_rs: tiles * din,
            out_blocks: top.c,
            out_rs: tiles * dout,
            batches: ELEMENTS,
        };
        batched.record(
            rec,
            (self.gemm, self.options, self.depth),
            [&v, &m, self.weights, bias, self.no_partials],
        )?;
        let parts = transform_parts(tiles * top.c * dout, &[1, 2, 4]);
        let output = ctx.pipeline(
            Shader::ConvolutionWinograd43Output.module(),
            self.options,
            &spec(parts, epilogue.residual.is_some()),
        )?;
        // the residual's binding, or a stand-in (read-only, as the bias)
        let residual = epilogue.residual.unwrap_or(bias);
        rec.dispatch(
            &output,
            &[&m, top, bias, residual],
            words,
            dispatch_grid([tiles * parts, top.c * dout, 1], top)?,
        )
    }
}

/// Invocations a transform wants before it splits a tile's work over more of them (a few
/// warps per multiprocessor of an H200: vgg16's 224² × 64, 50176 invocations, lost split in two,
/// its 28² layers, 3136-6272, won split in six). r3d_18 on an H200 with 65536 and 131072
/// here: layer 1's input transforms (50176) 21.5 → 25–28 us, layer 2's (12544, then in six
/// parts, not two) 20 → 14.5; the network's device time 1.298 → 1.313–1.319 ms.
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
