//! The implicit GEMM of the dense pack4 convolutions (Convolution, and Deconvolution's taps):
//! which shader ([`GemmEngine`]), which tile and how many slices of its steps, chosen per
//! forward shape ([`GemmPlan`]); one layer's forward ([`GemmCall`]); the batched 1×1 form
//! ([`Batched`]: Winograd's products, a transposed convolution's taps); the specialization and
//! grid of a forward.

use crate::error::{Error, Result};
use crate::gpu::Recorder;
use crate::gpu::specialize::{SpecValue, Specialization};
use crate::layer::contract::GpuSetup;
use crate::layer::conv::window::{DepthAxis, Pack4Kind as Kind, Rank, Window};
use crate::layer::epilogue::Epilogue;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::gpu_gemm;
use crate::layer::shared::pipelines::fold_into_z;
use crate::shaders::Shader;
use crate::tensor::GpuMat;
use crate::{Opt, OptionSet as Options};

/// The specialization of one forward: `values`, then the `psc()` shapes from its push constants
/// (input then output w, h, c, cstep: constants 20–27 of `convolution_head.comp`).
pub(crate) fn shaped(values: Vec<(u32, SpecValue)>, words: &[u32]) -> Specialization {
    let shapes = words.iter().take(8).zip(20..);
    Specialization {
        values: values
            .into_iter()
            .chain(shapes.map(|(v, id)| (id, SpecValue::I32(*v as i32))))
            .collect(),
        local_size: None,
    }
}

/// A dispatch grid of `v` invocations, or the error naming the output too large for one.
pub(crate) fn dispatch_grid(v: [usize; 3], top: &GpuMat) -> Result<[u32; 3]> {
    let one = |x: usize| {
        u32::try_from(x).map_err(|_| {
            Error::from(crate::error::InputError::Output {
                what: "too large to dispatch",
                shape: vec![top.w, top.h, top.c * top.elempack],
            })
        })
    };
    Ok([one(v[0])?, one(v[1])?, one(v[2])?])
}

/// The implicit GEMM's two engines: the choice of shader for dense pack4 convolutions (as
/// `CpuAlgo` is on the CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GemmEngine {
    /// `convolution_gemm`: fp32 FMA, any device and path.
    Fma,
    /// `convolution_gemm_cm`: fp16 products on cooperative matrices (tensor cores), for fp16
    /// blobs where [`crate::Context::cooperative_matrix`] holds.
    CooperativeMatrix,
}

impl GemmEngine {
    /// The GEMM pack4 blobs take in this variant: tensor cores where their fp16 blobs, the
    /// device and the run allow (pack4 blobs are fp16 with fp16 storage or fp16 packing).
    pub(crate) fn choose(gpu: GpuSetup<'_>, opt: &RunOptions) -> GemmEngine {
        let fp16 = gpu.options.contains(Opt::Fp16Storage) || gpu.options.contains(Opt::Fp16Packed);
        if gpu_gemm::tensor_cores(gpu, opt, fp16) {
            GemmEngine::CooperativeMatrix
        } else {
            GemmEngine::Fma
        }
    }

    pub(crate) fn shader(self) -> Shader {
        match self {
            GemmEngine::Fma => Shader::ConvolutionGemm,
            GemmEngine::CooperativeMatrix => Shader::ConvolutionGemmCm,
        }
    }

    /// Invocations per workgroup (4 subgroups of 32 for the cooperative-matrix one).
    pub(crate) fn invocations(self) -> usize {
        match self {
            GemmEngine::Fma => 256,
            GemmEngine::CooperativeMatrix => 128,
        }
    }
}

/// The FMA GEMM's tile: positions × output blocks of 4 per workgroup, its `wide`
/// specialization (constant 13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tile {
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

/// The cooperative-matrix GEMM's tiles (its constant 13): positions × output blocks of 4.
/// (A 128 × 8 tile, 1 × 4 subgroups of 32 × 32, for layers of at most 8 output blocks, which
/// leave half of the square one's products unused, took RRDBNet's 32-output Winograd products
/// from 28 to 36 us on an H200, and RRDBNet-6 from 13.2 to 15.5 ms.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmTile {
    /// 64 positions × 16 blocks, the default.
    Square = 0,
    /// 64 positions × 32 blocks, for 3-D windows of at least 32 output blocks over at most
    /// [`TALL_POSITIONS`] positions (split steps): each staged input serves twice the outputs.
    /// (Taken for 2-D windows too it slowed alexnet's device time from 0.27 to 0.30 ms and
    /// mobilenet_v2's from 0.67 to 0.71 on an H200.)
    Tall = 5,
}

impl CmTile {
    /// Positions × output blocks of 4.
    fn size(self) -> [usize; 2] {
        match self {
            CmTile::Square => [64, 16],
            CmTile::Tall => [64, 32],
        }
    }

    fn choose(blocks: usize, positions: usize, volume: bool) -> CmTile {
        if volume && blocks >= 32 && positions <= TALL_POSITIONS {
            CmTile::Tall
        } else {
            CmTile::Square
        }
    }
}

/// Output positions up to which [`CmTile::Tall`] is taken (r3d_18's 28² × 8 layers, 6272
/// positions, lost with it: 93 against 107 us).
const TALL_POSITIONS: usize = 1024;
/// Workgroups the GEMM aims for before it splits its steps (a few per multiprocessor of a large
/// GPU), and the fewest steps a slice keeps.
const TARGET_GROUPS: usize = 512;
const MIN_SLICE_STEPS: usize = 16;
/// Output positions from which [`Tile::Big`] is taken.
const BIG_POSITIONS: usize = 8192;

/// How one forward runs the GEMM: the shader, its tile and the slices its steps are split
/// into (each slice's partial sums added by `convolution_gemm_sum` when more than one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GemmPlan {
    /// The shader.
    pub gemm: GemmEngine,
    /// Its tile, of the engine's shader.
    pub tile: PlanTile,
    /// Slices of the steps: a power of two.
    pub splits: usize,
}

impl GemmPlan {
    /// The plan for `blocks` output blocks of 4 over `positions` outputs and `steps` steps
    /// (input blocks × kernel positions) of a 2-D window, or a 3-D one where `volume`.
    pub fn choose(
        gemm: GemmEngine,
        [blocks, positions, steps]: [usize; 3],
        volume: bool,
    ) -> GemmPlan {
        let tile = match gemm {
            GemmEngine::Fma => PlanTile::Fma(Tile::choose(blocks, positions)),
            GemmEngine::CooperativeMatrix => {
                PlanTile::CooperativeMatrix(CmTile::choose(blocks, positions, volume))
            }
        };
        let [tn, tm] = tile.size();
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
}

/// A plan's tile: the FMA GEMM's or the cooperative-matrix GEMM's, constant 13 of its shader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PlanTile {
    /// `convolution_gemm`'s.
    Fma(Tile),
    /// `convolution_gemm_cm`'s.
    CooperativeMatrix(CmTile),
}

impl PlanTile {
    /// Positions × output blocks per workgroup.
    pub fn size(self) -> [usize; 2] {
        match self {
            PlanTile::Fma(t) => t.size(),
            PlanTile::CooperativeMatrix(t) => t.size(),
        }
    }

    /// Its specialization (constant 13).
    fn spec(self) -> (u32, SpecValue) {
        let tile = match self {
            PlanTile::Fma(t) => t as i32,
            PlanTile::CooperativeMatrix(t) => t as i32,
        };
        (13, SpecValue::I32(tile))
    }
}

/// A batched 1×1 GEMM on pack4 buffers (Winograd's 36 products; a transposed convolution's
/// taps, one batch): `batches` products of `out_blocks × in_blocks` blocks of weights by
/// `in_blocks × positions` inputs (rows `in_rs` apart), outputs `out_blocks × positions` (rows
/// `out_rs` apart), each batch's input, output and weights right after the last one's.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Batched {
    pub positions: usize,
    pub in_blocks: usize,
    pub in_rs: usize,
    pub out_blocks: usize,
    pub out_rs: usize,
    pub batches: usize,
}

/// A 3-D window's depth over one forward's slabs: its `axis` (kernel, dilation and stride; its
/// pad params resolved as `pad_front`), and the input's and output's depths. Per output slab,
/// `kernel` input slabs are summed, `dilation` apart, the first at `stride` times the output
/// slab less `pad_front` (zero outside). A batched GEMM with one takes a window along the
/// depth alone (the 3-D Winograd's products: each batch's slabs a row of `positions` each).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DepthSlabs {
    pub axis: DepthAxis,
    pub pad_front: usize,
    pub depth: usize,
    pub outdepth: usize,
}

impl DepthSlabs {
    /// `convolution_head.comp`'s constants of the slabs: the front pad and the depths (33–35).
    pub(crate) fn spec(&self) -> [(u32, SpecValue); 3] {
        let i = |v: usize| SpecValue::I32(v as i32);
        [
            (33, i(self.pad_front)),
            (34, i(self.depth)),
            (35, i(self.outdepth)),
        ]
    }
}

impl Batched {
    /// Weights `w(batch, input, output)` in the layout the batched GEMM reads: per batch, per
    /// input block, per output block, four rows (one per output lane) of four input weights.
    pub(crate) fn weights(&self, w: impl Fn(usize, usize, usize) -> f32) -> Vec<f32> {
        self.weights_over_taps(1, |b, i, _, o| w(b, i, o))
    }

    /// Weights `w(batch, input, tap, output)` of a window of `taps` depth taps
    /// ([`DepthSlabs`]): per batch, per input block and tap (the GEMM's steps), per output
    /// block, four rows of four input weights.
    pub(crate) fn weights_over_taps(
        &self,
        taps: usize,
        w: impl Fn(usize, usize, usize, usize) -> f32,
    ) -> Vec<f32> {
        let (ib, ob) = (self.in_blocks, self.out_blocks);
        let mut out = Vec::with_capacity(self.batches * ib * taps * ob * 16);
        for b in 0..self.batches {
            for i4 in 0..ib {
                for t in 0..taps {
                    for o4 in 0..ob {
                        for lane in 0..4 {
                            for j in 0..4 {
                                out.push(w(b, i4 * 4 + j, t, o4 * 4 + lane));
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// Records it with `gemm` in the variant `options`: `input` into `output` with `weights`
    /// (from [`Batched::weights`], or [`Batched::weights_over_taps`] with `depth`); `bias` and
    /// `partials` fill bindings it does not use (two distinct buffers: one is read-only, the
    /// other writable).
    pub(crate) fn record(
        &self,
        rec: &mut Recorder<'_>,
        (gemm, options, depth): (GemmEngine, Options, Option<DepthSlabs>),
        [input, output, weights, bias, partials]: [&GpuMat; 5],
    ) -> Result<()> {
        // the positions as one row of a 1×1 layer (or one row per slab of a window along the
        // depth alone): shapes w, h, c, cstep of its input and output, no padding across
        let [din, dout] = depth.map_or([1, 1], |d| [d.depth, d.outdepth]);
        let words: Vec<u32> = [
            self.positions,
            din,
            self.in_blocks,
            self.in_rs,
            self.positions,
            dout,
            self.out_blocks,
            self.out_rs,
            0,
            0,
            0,
        ]
        .iter()
        .map(|&x| x as u32)
        .collect();
        let positions = self.positions * dout;
        let plan = GemmPlan::choose(gemm, [self.out_blocks, positions, 1], false);
        let int = |v: usize| SpecValue::I32(v as i32);
        let mut values = vec![(0, int(0)), (1, int(0))];
        values.extend([(2, SpecValue::F32(0.0)), (3, SpecValue::F32(0.0))]);
        values.extend((4..12).map(|id| (id, int(1))));
        values.extend([(12, int(1)), (14, int(1))]);
        values.push(plan.tile.spec());
        if let Some(d) = depth {
            values.extend(d.axis.spec());
            values.extend(d.spec());
        }
        let pipeline =
            rec.context()
                .pipeline(gemm.shader().module(), options, &shaped(values, &words))?;
        let [tn, tm] = plan.tile.size();
        let grid = [
            positions.div_ceil(tn) * gemm.invocations(),
            self.out_blocks.div_ceil(tm),
            self.batches,
        ];
        rec.dispatch(
            &pipeline,
            // the residual's binding: a stand-in
            &[input, output, weights, bias, partials, bias],
            &words,
            dispatch_grid(grid, output)?,
        )
    }
}

/// One implicit GEMM forward of a dense pack4 layer: its engine and variant, what it binds as
/// unused partial sums, its window, and the specialization of its shape beyond the `psc()`
/// words (a 3-D window's pads and depths).
pub(crate) struct GemmCall<'a> {
    pub gemm: GemmEngine,
    pub options: Options,
    pub no_partials: &'a GpuMat,
    pub window: &'a Window,
    pub shape: Vec<(u32, SpecValue)>,
}

impl GemmCall<'_> {
    /// Records the GEMM (and, when it splits its steps, the pass that adds the slices) from
    /// pack4 `bottom` into `top`, with the residual and activation the net fused into its
    /// epilogue.
    pub(crate) fn record(
        &self,
        rec: &mut Recorder<'_>,
        [bottom, top, weights, bias]: [&GpuMat; 4],
        (words, epilogue): (&[u32], Epilogue<'_>),
    ) -> Result<()> {
        let gemm = self.gemm;
        let positions = top.w * top.h;
        let steps = bottom.c * self.window.taps_count();
        let volume = self.window.rank == Rank::Three;
        let plan = GemmPlan::choose(gemm, [top.c, positions, steps], volume);
        let splits = plan.splits;
        let grid = |v: [usize; 3]| dispatch_grid(v, top);
        let [tn, tm] = plan.tile.size();
        let groups = grid([
            positions.div_ceil(tn) * gemm.invocations(),
            top.c.div_ceil(tm),
            splits,
        ])?;
        let ctx = rec.context();
        // the residual's binding, or a stand-in (read-only, as the bias)
        let residual = epilogue.residual.unwrap_or(bias);
        // the split and the tile (the sum pass has none) and the shapes, specialized here
        let spec = |tile: Option<(u32, SpecValue)>| {
            let mut values = self.window.spec_with(Kind::Blocks, epilogue.act);
            values.push((12, SpecValue::I32(splits as i32)));
            values.push((16, SpecValue::I32(i32::from(epilogue.residual.is_some()))));
            values.extend(tile);
            values.extend(self.shape.iter().copied());
            shaped(values, words)
        };
        let pipeline = ctx.pipeline(
            gemm.shader().module(),
            self.options,
            &spec(Some(plan.tile.spec())),
        )?;
        if splits == 1 {
            // unsplit, the shader continues its position tiles along z past the device limit
            let groups = fold_into_z(ctx, &pipeline, groups, 0);
            return rec.dispatch(
                &pipeline,
                &[bottom, top, weights, bias, self.no_partials, residual],
                words,
                groups,
            );
        }
        let sum = ctx.pipeline(
            Shader::ConvolutionGemmSum.module(),
            self.options,
            &spec(None),
        )?;
        // one row of fp32 values (a 1-D mat's length is its channel count)
        let partials = GpuMat::alloc(
            ctx,
            2,
            [positions * top.c * splits * 4, 1, 1],
            1,
            Options::FP32,
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

/// The pack4 weights of the implicit GEMM from ncnn's `[outs][cin][taps]`: per step (input
/// block of 4 and kernel tap), per output block, four rows (one per output lane) of four input
/// weights; a last, partial block of inputs or outputs has zeros past them.
pub(crate) fn gemm_weights(weights: &[f32], cin: usize, taps: usize, outs: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(weights.len());
    for i4 in 0..cin.div_ceil(4) {
        for k in 0..taps {
            for o4 in 0..outs.div_ceil(4) {
                for lane in 0..4 {
                    for j in 0..4 {
                        let (o, i) = (o4 * 4 + lane, i4 * 4 + j);
                        out.push(match i < cin && o < outs {
                            true => weights[(o * cin + i) * taps + k],
                            false => 0.0,
                        });
                    }
                }
            }
        }
    }
    out
}
