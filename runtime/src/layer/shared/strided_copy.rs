//! The strided copy shader (`shaders/strided.comp`): numpy's `as_strided` between pack1 buffer
//! blobs, what PixelShuffle, Reorg, Tile, Flip, Diag, CopyTo, DeepCopy and GLU record, with the
//! same [`Strided`] views their CPU forward reads through.

use crate::error::{Result, TensorError};
use crate::gpu::specialize::SpecValue;
use crate::gpu::{Pipeline, Recorder};
use crate::layer::contract::GpuSetup;
use crate::layer::shared::pipelines::{expect_pack1_buffer, index_word, workgroup_rows};
use crate::layer::shared::view::from_numpy_shape;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, Strided};
use std::sync::Arc;

/// The axes the shader walks.
const AXES: usize = 6;
/// Invocations per workgroup (the shader's `local_size_x`).
const LOCAL: usize = 64;

/// What the shader writes (its `mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyMode {
    /// The source value.
    Copy = 0,
    /// A constant.
    Fill = 1,
    /// The source value times the sigmoid of the value a fixed distance further on.
    Glu = 2,
}

/// The strided copy pipeline of one mode (buffer nets, pack1).
pub struct StridedCopy {
    pipeline: Arc<Pipeline>,
    mode: CopyMode,
}

/// Extras some modes take.
#[derive(Clone, Copy, Debug, Default)]
pub struct CopyExtras {
    /// [`CopyMode::Glu`]: the distance to the gate value, in logical indices.
    pub second: isize,
    /// [`CopyMode::Fill`]: the value.
    pub value: f32,
}

impl StridedCopy {
    /// The pipeline writing as `mode` says, for `gpu`'s options.
    pub fn create(gpu: GpuSetup<'_>, mode: CopyMode) -> Result<Self> {
        let module = crate::shaders::Shader::Strided.module();
        Ok(StridedCopy {
            pipeline: gpu.pipeline(module, &[(0, SpecValue::I32(mode as i32))])?,
            mode,
        })
    }

    /// The pipeline when there is a device.
    pub fn when(gpu: Option<GpuSetup<'_>>, mode: CopyMode) -> Result<Option<Self>> {
        gpu.map(|g| Self::create(g, mode)).transpose()
    }

    /// Records writing, at the places `to` shows in `dst`, the values `from` shows in `src`
    /// (the two views of one shape, logical indices: numpy order of each blob).
    pub fn record(
        &self,
        rec: &mut Recorder<'_>,
        (src, from): (&GpuMat, &Strided),
        (dst, to): (&GpuMat, &Strided),
        extras: CopyExtras,
    ) -> Result<()> {
        expect_pack1_buffer(&self.pipeline, src)?;
        expect_pack1_buffer(&self.pipeline, dst)?;
        if from.shape != to.shape {
            return Err(TensorError::View {
                shape: to.shape.clone(),
                extent: to.len(),
                len: from.len(),
            }
            .into());
        }
        let logical = |m: &GpuMat| m.w * m.h * m.c;
        // a fill reads nothing
        let read = (self.mode != CopyMode::Fill).then_some((from, src));
        for (view, m) in read.into_iter().chain([(to, dst)]) {
            let (lo, hi) = view.span();
            if lo < 0 || hi > logical(m) as isize {
                return Err(TensorError::View {
                    shape: view.shape.clone(),
                    extent: hi.max(0) as usize,
                    len: logical(m),
                }
                .into());
            }
        }
        let (from, to) = from.simplified_with(to);
        self.dispatch(rec, (src, &from), (dst, &to), extras)
    }

    /// One dispatch per index of the axes outside the shader's six (a 4-D Tile's view has
    /// eight: a repeat and an extent per axis), each copying a six-axis slice.
    fn dispatch(
        &self,
        rec: &mut Recorder<'_>,
        (src, from): (&GpuMat, &Strided),
        (dst, to): (&GpuMat, &Strided),
        extras: CopyExtras,
    ) -> Result<()> {
        let n = from.shape.len();
        if n > AXES {
            let inner = |v: &Strided, i: usize| Strided {
                offset: (v.offset as isize + i as isize * v.strides[0]) as usize,
                shape: v.shape[1..].to_vec(),
                strides: v.strides[1..].to_vec(),
            };
            for i in 0..from.shape[0] {
                self.dispatch(rec, (src, &inner(from, i)), (dst, &inner(to, i)), extras)?;
            }
            return Ok(());
        }
        let word = |v: isize, what: &str| index_word(&self.pipeline, v, what);
        let total = from.len();
        if total == 0 {
            return Ok(());
        }
        // axes padded to six from the outside with axes of one value
        let pad = AXES - n;
        let mut words = Vec::with_capacity(27);
        words.extend((0..AXES).map(|k| {
            if k < pad {
                1
            } else {
                from.shape[k - pad] as u32
            }
        }));
        for view in [from, to] {
            for k in 0..AXES {
                let s = if k < pad { 0 } else { view.strides[k - pad] };
                words.push(word(s, "a stride")?);
            }
        }
        words.push(word(from.offset as isize, "an offset")?);
        words.push(word(to.offset as isize, "an offset")?);
        words.push(word(total as isize, "a blob")?);
        for m in [src, dst] {
            words.push(word((m.w * m.h) as isize, "a plane")?);
            words.push(word(m.cstep as isize, "a channel step")?);
        }
        words.push(word(extras.second, "a GLU offset")?);
        words.push(extras.value.to_bits());
        let grid = workgroup_rows(rec.context(), total.div_ceil(LOCAL), LOCAL);
        rec.dispatch(&self.pipeline, &[src, dst], &words, grid)
    }

    /// Records a new blob of numpy shape `out` (1 to 4 axes) holding, in order, the values
    /// `from` shows in `src`.
    pub fn gather(
        &self,
        rec: &mut Recorder<'_>,
        src: &GpuMat,
        from: &Strided,
        out: &[usize],
    ) -> Result<GpuMat> {
        let top = alloc_numpy(rec, out, src)?;
        let to = Strided::contiguous(&from.shape);
        self.record(rec, (src, from), (&top, &to), CopyExtras::default())?;
        Ok(top)
    }
}

/// A new pack1 GPU mat of numpy shape `np` (1 to 4 axes) in `like`'s options.
pub(crate) fn alloc_numpy(rec: &Recorder<'_>, np: &[usize], like: &GpuMat) -> Result<GpuMat> {
    let BlobShape { dims, .. } = from_numpy_shape(np)?;
    let space = crate::layer::shared::view::to_space(dims, np, 1);
    GpuMat::alloc_space(rec.context(), dims, space, 1, like.options)
}
