//! The GPU GEMM the matrix layers share (MatMul, Gemm, MultiHeadAttention's projections):
//! `gemm.comp`'s FMA tiles over pack1 buffers (`gemm_cm.comp`'s tensor cores for fp16 blobs), each operand described by its row and batch
//! strides so that a layer hands over its blobs (or their columns, or one head's block) as
//! they lie, with no copy.

use std::sync::Arc;

use crate::Opt;
use crate::error::Result;
use crate::gpu::specialize::SpecValue;
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::GpuSetup;
use crate::layer::run_options::RunOptions;
use crate::shaders::Shader;
use crate::tensor::GpuMat;

/// The compile-time form of one GEMM: `alpha · (op(A) · op(B) + beta · C)` (C's broadcast comes
/// with each dispatch).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Form {
    /// A is stored `K × M`.
    pub trans_a: bool,
    /// B is stored `N × K`.
    pub trans_b: bool,
    /// The output is stored `N × M`.
    pub out_trans: bool,
    pub alpha: f32,
    pub beta: f32,
    /// A fused activation after alpha (InnerProduct's `activation_type`, 0 none) and its two
    /// parameters.
    pub activation: (i32, [f32; 2]),
    /// Gemm's int8 product: A and B are int8 levels, scaled by their [`Descales`].
    pub int8: bool,
}

impl Form {
    /// `A · B`, nothing else.
    pub const PLAIN: Form = Form {
        trans_a: false,
        trans_b: false,
        out_trans: false,
        alpha: 1.0,
        beta: 1.0,
        activation: (0, [0.0; 2]),
        int8: false,
    };

    /// The pipelines of this form in the layer's variant, one per tile size, on the engine
    /// [`Engine::choose`] picks (and on `gemm_cm` as well where that is `gemm_cm2`, for the
    /// products it runs faster: [`MATRIX2_TILES_MIN`]).
    pub fn pipeline(&self, gpu: GpuSetup<'_>, opt: &RunOptions) -> Result<Pipelines> {
        let engine = match Engine::choose(gpu, opt) {
            // gemm_cm2 reads no descales (constant 9): int8 products stay on gemm_cm; so do
            // the forms its epilogue has not been checked on against the CPU on a device yet
            // (a transposed A or output, alpha, an activation; C: see `record`)
            Engine::WorkgroupMatrix if self.int8 || !self.matrix2_checked() => {
                Engine::CooperativeMatrix
            }
            engine => engine,
        };
        let (preferred, subgroup) = match engine {
            Engine::WorkgroupMatrix => {
                let subgroup = self.engine_set(gpu, Engine::CooperativeMatrix)?;
                // a driver that offers the extension but refuses the pipelines (an older
                // one's flexible sizes) leaves the subgroup tiles, which it took
                match self.engine_set(gpu, engine) {
                    Ok(workgroup) => (workgroup, Some(subgroup)),
                    Err(_) => (subgroup, None),
                }
            }
            _ => (self.engine_set(gpu, engine)?, None),
        };
        Ok(Pipelines {
            preferred,
            subgroup,
            trans_a: self.trans_a,
            trans_b: self.trans_b,
        })
    }

    /// Whether `gemm_cm2` has been checked on NVIDIA against the CPU for this form: `A · op(B)`
    /// plus any broadcast of C into a plain output (`gemm_engines`' workgroup-matrix cases).
    fn matrix2_checked(&self) -> bool {
        !self.trans_a && !self.out_trans && self.alpha == 1.0 && self.activation.0 == 0
    }

    /// This form's pipelines on `engine`.
    fn engine_set(&self, gpu: GpuSetup<'_>, engine: Engine) -> Result<EngineSet> {
        let flag = |b: bool| SpecValue::I32(i32::from(b));
        let tiled = |size: usize, loads: Loads| -> Result<Tiled> {
            let mut spec = vec![
                (0, flag(self.trans_a)),
                (1, flag(self.trans_b)),
                (2, flag(self.out_trans)),
                (3, SpecValue::F32(self.alpha)),
                (4, SpecValue::F32(self.beta)),
                (6, SpecValue::I32(self.activation.0)),
                (7, SpecValue::F32(self.activation.1[0])),
                (8, SpecValue::F32(self.activation.1[1])),
                (9, flag(self.int8)),
            ];
            match engine {
                Engine::Fma => spec.push((5, SpecValue::I32(PER[size]))),
                Engine::CooperativeMatrix => {
                    spec.push((5, SpecValue::I32(PER[size])));
                    spec.push((10, SpecValue::I32(loads as i32)));
                }
                Engine::WorkgroupMatrix => spec.push((11, SpecValue::I32(size as i32))),
            }
            let pipeline = gpu.pipeline(engine.shader().module(), &spec)?;
            Ok(Tiled {
                pipeline,
                tile: engine.tile(size),
                threads: engine.threads(),
                depth: engine.depth(size),
            })
        };
        let sizes = |loads| {
            (0..engine.sizes())
                .map(|size| tiled(size, loads))
                .collect::<Result<Vec<_>>>()
        };
        let aligned = match engine {
            Engine::CooperativeMatrix => Some([sizes(Loads::Aligned)?, sizes(Loads::WholeStages)?]),
            Engine::Fma | Engine::WorkgroupMatrix => None,
        };
        Ok(EngineSet {
            any: sizes(Loads::Any)?,
            aligned,
        })
    }
}

/// `gemm`'s and `gemm_cm`'s constant 5 for each of their tile sizes, largest first.
const PER: [i32; 2] = [4, 2];

/// What `gemm_cm`'s loads may assume (its constant 10): a specialization per case, since the
/// mere presence of a load path the operands do not need slows every product.
#[derive(Clone, Copy)]
enum Loads {
    /// Any strides and sizes: groups of 8 loaded value by value where they must be.
    Any = 0,
    /// Every group of 8 one aligned 16-byte load ([`Operand::aligned`]).
    Aligned = 1,
    /// That, and K a multiple of the tile's stage depth: no load zeroed past K.
    WholeStages = 2,
}

/// The GEMM's shaders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Engine {
    /// `gemm`: fp32 FMA tiles, any device and path.
    Fma,
    /// `gemm_cm`: fp16 products on cooperative matrices (tensor cores), for fp16 blobs where
    /// [`crate::Context::cooperative_matrix`] holds.
    CooperativeMatrix,
    /// `gemm_cm2`: the same on VK_NV_cooperative_matrix2's workgroup-scope matrices, loaded
    /// by the driver as tensors, where [`crate::Context::workgroup_matrices`] holds.
    WorkgroupMatrix,
}

/// Whether a GEMM takes tensor cores: they multiply fp16, so only operands that are fp16
/// already (`fp16_blobs`) take them, where the context has them and the run allows them. The
/// rule of this GEMM and of the convolutions' implicit one.
pub(crate) fn tensor_cores(gpu: GpuSetup<'_>, opt: &RunOptions, fp16_blobs: bool) -> bool {
    opt.use_cooperative_matrix && fp16_blobs && gpu.ctx.cooperative_matrix()
}

impl Engine {
    /// The engine for this layer's variant: pack1 blobs are fp16 with fp16 storage.
    pub fn choose(gpu: GpuSetup<'_>, opt: &RunOptions) -> Engine {
        match tensor_cores(gpu, opt, gpu.options.contains(Opt::Fp16Storage)) {
            true if gpu.ctx.workgroup_matrices() => Engine::WorkgroupMatrix,
            true => Engine::CooperativeMatrix,
            false => Engine::Fma,
        }
    }

    fn shader(self) -> Shader {
        match self {
            Engine::Fma => Shader::Gemm,
            Engine::CooperativeMatrix => Shader::GemmCm,
            Engine::WorkgroupMatrix => Shader::GemmCm2,
        }
    }

    /// How many tile sizes the engine has.
    fn sizes(self) -> usize {
        match self {
            Engine::Fma | Engine::CooperativeMatrix => PER.len(),
            Engine::WorkgroupMatrix => 3,
        }
    }

    /// Steps of K per stage of tile size `size` (`gemm_cm`'s `DEPTH`).
    fn depth(self, size: usize) -> usize {
        match self {
            Engine::Fma => 16,
            Engine::CooperativeMatrix => 256 / PER[size] as usize,
            Engine::WorkgroupMatrix => 64,
        }
    }

    /// Invocations per workgroup.
    fn threads(self) -> usize {
        match self {
            Engine::Fma => 256,
            Engine::CooperativeMatrix => 128,
            Engine::WorkgroupMatrix => crate::gpu::matrix2::WORKGROUP as usize,
        }
    }

    /// The output block (rows, columns) of tile size `size`.
    fn tile(self, size: usize) -> [usize; 2] {
        match self {
            Engine::Fma => [16 * PER[size] as usize; 2],
            Engine::CooperativeMatrix => [32 * PER[size] as usize; 2],
            // gemm_cm2's constant 11
            Engine::WorkgroupMatrix => [[128, 256], [128, 128], [64, 64]][size],
        }
    }
}

/// One pipeline and the block of the output (rows, columns) each of its workgroups computes.
struct Tiled {
    pipeline: Arc<Pipeline>,
    tile: [usize; 2],
    threads: usize,
    depth: usize,
}

/// One form's pipelines on one engine, one per tile size, largest first: large tiles (FMA
/// 64 × 64, 4 × 4 outputs per invocation; tensor cores 128 × 128, or 128 × 256 and 128 × 128
/// on workgroup matrices) and smaller ones for products whose large tiles would leave most of
/// a large device idle.
struct EngineSet {
    /// For any operands.
    any: Vec<Tiled>,
    /// `gemm_cm`'s pairs for operands whose every group of 8 is one aligned 16-byte load
    /// ([`Operand::aligned`]), then for those with K a multiple of the tile's depth as well:
    /// without its 8-load fallback that shader ran the 4096³ product in 0.86 ms instead of 2.0
    /// on an H100, and without zeroing the loads past K in 0.62 instead of 0.92.
    aligned: Option<[Vec<Tiled>; 2]>,
}

impl EngineSet {
    /// The tile size a product of `tiles(size)` tiles takes: the largest with at least
    /// `wide_min`, else the smallest.
    fn size(&self, tiles: impl Fn(&Tiled) -> usize, wide_min: usize) -> usize {
        let last = self.any.len() - 1;
        (0..last)
            .find(|s| tiles(&self.any[*s]) >= wide_min)
            .unwrap_or(last)
    }
}

/// One form's pipelines.
pub(crate) struct Pipelines {
    /// On the engine [`Engine::choose`] picked.
    preferred: EngineSet,
    /// Where that is `gemm_cm2`: on `gemm_cm`, for the products with fewer than
    /// [`MATRIX2_TILES_MIN`] workgroup-matrix tiles.
    subgroup: Option<EngineSet>,
    trans_a: bool,
    trans_b: bool,
}

/// Below this many tiles (of the size chosen) a product takes `gemm_cm`'s subgroup tiles
/// rather than `gemm_cm2`'s workgroup matrices. Measured on an H200 (µs, cm2 / cm), more
/// tiles: 4096³ (512 of 128 × 256) 605 / 645, 256 × 3072 × 1024 (192 of 64 × 64) 25.3 / 27.7,
/// 1024³ (256) 25.0 / 28.0; fewer: 197 × 2304 × 768 (144) 24.3 / 22.4, 256 × 2048 × 1024
/// (128) 19.1 / 17.5, 256 × 1024 × 3072 (64) 35.9 / 31.1, 197 × 768 × 3072 (48) 52.5 / 31.0
/// (a workgroup of 256 over a few long products leaves most of the device idle, where
/// `gemm_cm`'s 128-invocation tiles 128 deep fill it better).
const MATRIX2_TILES_MIN: usize = 192;

/// Below this many tiles of a size a product takes the next smaller size. Measured on an H200 (132
/// SMs): ViT-B's 197 × 3072 MLP products (192 tiles) run faster in 64 × 64 FMA tiles, its
/// 197 × 768 projections (48 tiles) and ConvNeXt-tiny's late stages in 32 × 32 ones; small
/// devices (lavapipe) lose little either way.
const WIDE_TILES_MIN: usize = 128;

/// [`WIDE_TILES_MIN`] for `gemm_cm2` once a product takes it (its workgroups hold a
/// multiprocessor each). Measured on an H200: a MultiHeadAttention's 1024 × 3072 × 1024
/// projection ran in 68.3 µs as 192 128 × 128 tiles, 63.7 as 768 64 × 64 ones (77.3 on
/// `gemm_cm`); 4096³ keeps 128 × 256 (512 tiles: 603 µs, 680 in 128 × 128). The engine is
/// chosen at [`WIDE_TILES_MIN`]'s size first, so 2048³ (128 tiles of 128 × 256) stays on
/// `gemm_cm`: 101.9 µs there, 106.4 in 256 128 × 128 workgroup tiles, 131.5 in 64 × 64 ones.
const MATRIX2_WIDE_TILES_MIN: usize = 256;

impl Pipelines {
    /// The variant options its blobs are in.
    pub fn options(&self) -> crate::OptionSet {
        self.preferred.any[0].pipeline.options
    }
}

/// A matrix in a GPU mat: stored value `(i, j)` of batch matrix `z` (in groups of
/// [`Sizes::inner`]) at `z / inner · outer + z % inner · batch + i · rs + j`.
#[derive(Clone, Copy)]
pub(crate) struct Operand<'a> {
    pub mat: &'a GpuMat,
    /// Values between stored rows.
    pub rs: usize,
    /// Values between batch matrices of a group (0: one matrix serves every batch).
    pub batch: usize,
    /// Values between groups of batch matrices (a 4-D blob's channels; 0: one group serves
    /// every group).
    pub outer: usize,
}

impl<'a> Operand<'a> {
    /// Whether every group of 8 values `gemm_cm` loads along the operand's stored rows (`K`
    /// values each, or `lines` when the rows run along the tile's lines) starts on a multiple
    /// of 8 and lies inside the row or past its end as a whole.
    fn aligned(&self, k: usize, lines: usize, across: bool) -> bool {
        let row = if across { lines } else { k };
        [self.rs, self.batch, self.outer, row]
            .iter()
            .all(|v| v % 8 == 0)
    }

    /// One matrix stored as rows `rs` apart (a weight's dense rows).
    pub fn dense(mat: &'a GpuMat, rs: usize) -> Self {
        Operand {
            mat,
            rs,
            batch: 0,
            outer: 0,
        }
    }

    /// A blob as one matrix of its rows, as GPU mats lay 1-D, 2-D and `N×1×M` blobs out: a
    /// 1-D blob is one row, a 2-D blob's rows and an `N×1×M` blob's channels lie `cstep` apart.
    pub fn rows(mat: &'a GpuMat) -> Self {
        let rs = if mat.dims == 1 { mat.c } else { mat.cstep };
        Operand::dense(mat, rs)
    }
}

/// The sizes of one recorded GEMM: `batches` products of `M × K` by `K × N`, in groups of
/// `inner` (the inner of two batch axes; `batches` for one).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sizes {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub batches: usize,
    pub inner: usize,
}

impl Sizes {
    /// One batch axis of `batches`.
    pub fn batched(m: usize, n: usize, k: usize, batches: usize) -> Self {
        Sizes {
            m,
            n,
            k,
            batches,
            inner: batches.max(1),
        }
    }
}

/// C as the shader reads it: the blob, ncnn's broadcast type (0 one value, 1 one per row, 3 the
/// whole `M × N`, 4 one per column) and, for type 3, its row stride.
#[derive(Clone, Copy)]
pub(crate) struct Addend<'a> {
    pub mat: &'a GpuMat,
    pub broadcast: i32,
    pub rs: usize,
}

/// An int8 product's descales (fp32): one per row of A, and B's one.
#[derive(Clone, Copy)]
pub(crate) struct Descales<'a> {
    pub a: &'a GpuMat,
    pub b: &'a GpuMat,
}

/// Records `out = alpha · (op(a) · op(b) + beta · c)` with `pipelines` (of a [`Form`]); an int8
/// form's product is scaled by `descales` first.
#[allow(clippy::too_many_arguments)]
pub(crate) fn record(
    rec: &mut Recorder<'_>,
    pipelines: &Pipelines,
    sizes: Sizes,
    a: Operand<'_>,
    b: Operand<'_>,
    c: Option<Addend<'_>>,
    out: Operand<'_>,
    descales: Option<Descales<'_>>,
) -> Result<()> {
    let Sizes {
        m,
        n,
        k,
        batches,
        inner,
    } = sizes;
    let (c_mat, c_rs, c_type) = c.map_or((a.mat, 0, -1), |c| (c.mat, c.rs, c.broadcast));
    let mut push: Vec<u32> = [
        m, n, k, a.rs, b.rs, c_rs, out.rs, a.batch, b.batch, out.batch,
    ]
    .map(|w| w as u32)
    .to_vec();
    // C's broadcast (-1: none), then the batch groups
    push.push(c_type as u32);
    push.extend([inner.max(1), a.outer, b.outer, out.outer].map(|w| w as u32));
    let tiles = |t: &Tiled| m.div_ceil(t.tile[0]) * n.div_ceil(t.tile[1]) * batches;
    let mut set = &pipelines.preferred;
    let mut size = set.size(tiles, WIDE_TILES_MIN);
    if let Some(subgroup) = &pipelines.subgroup {
        if tiles(&set.any[size]) < MATRIX2_TILES_MIN {
            set = subgroup;
            size = set.size(tiles, WIDE_TILES_MIN);
        } else {
            size = set.size(tiles, MATRIX2_WIDE_TILES_MIN);
        }
    }
    let aligned = a.aligned(k, m, pipelines.trans_a) && b.aligned(k, n, !pipelines.trans_b);
    let tiled = match &set.aligned {
        Some(sets) if aligned => {
            let exact = k.is_multiple_of(sets[1][size].depth);
            &sets[usize::from(exact)][size]
        }
        _ => &set.any[size],
    };
    let Tiled {
        pipeline,
        tile,
        threads,
        ..
    } = tiled;
    let grid = [
        (n.div_ceil(tile[1]) * threads) as u32,
        m.div_ceil(tile[0]) as u32,
        batches as u32,
    ];
    // an fp32 form binds any buffer for the descales it does not read
    let d = descales.unwrap_or(Descales { a: a.mat, b: a.mat });
    rec.dispatch(
        pipeline,
        &[a.mat, b.mat, c_mat, out.mat, d.a, d.b],
        &push,
        grid,
    )
}
