//! Concat: `0=axis`. Inputs agreeing on every other axis, joined along it.

use crate::OptionSet;
use crate::error::{InputError, Result};
use crate::gpu::Recorder;
use crate::gpu::specialize::Specialization;
use crate::layer::contract::{ChannelMoves, GpuSetup, Layer, Packs, Support};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::layer::shared::grain::min_items;
use crate::layer::shared::pipelines::{DeviceSide, PackPipelines};
use crate::layer::shared::strided_copy::{CopyExtras, CopyMode, StridedCopy, alloc_numpy};
use crate::layer::shared::view::{first_input, move_channels, numpy_shape, to_space};
use crate::layer::shared::view::{positive_axis, view_axis};
use crate::shaders::Shader;
use crate::tensor::BlobShape;
use crate::tensor::{ElemType, GpuMat, Mat, Strided};
use rayon::prelude::*;

/// Concat: `0=axis`.
#[derive(Default)]
pub struct Concat {
    axis: i32,
    /// pack1 and pack4 buffer pipelines (pack8 inputs go through pack4).
    gpu: Option<PackPipelines>,
    /// The pack1 strided copy for an axis that is none of the 3-D view's (a 4-D blob's h
    /// between slabs).
    copy: Option<StridedCopy>,
    /// Whether the output is the first input of a layer that appends to it (a chain of
    /// concats): a channel concat's buffer then has room for as many channels again.
    room: bool,
}

impl Layer for Concat {
    fn support(&self) -> Support {
        Support {
            vulkan_same_packing: true,
            // packed CPU blobs as they come: inputs of one packing joined along the channels
            // block by block, others through their unpacked channels
            packing: true,
            any_packing: true,
            same_packing: true,
            ..Support::MANY
                .gpu(self.gpu.is_some())
                .packs(Packs::UP_TO_4)
                .gpu_4d()
        }
    }

    fn create_pipeline(&mut self, _opt: &RunOptions, gpu: Option<GpuSetup<'_>>) -> Result<()> {
        // buffer shaders only: image nets concatenate on the CPU
        self.gpu = match gpu {
            Some(gpu) => Some(PackPipelines::create(
                gpu,
                &[
                    (1, Shader::Concat.module()),
                    (4, Shader::ConcatPack4.module()),
                ],
                &[],
            )?),
            _ => None,
        };
        self.copy = StridedCopy::when(gpu, CopyMode::Copy)?;
        Ok(())
    }

    fn gpu_accepts(&self, bottoms: &[BlobShape]) -> bool {
        let Some(&BlobShape { dims, .. }) = bottoms.first() else {
            return false;
        };
        bottoms.iter().all(|&BlobShape { dims: d, .. }| d == dims)
            && positive_axis(self.axis, dims.into()).is_ok()
    }

    fn gpu_packs(&self, bottoms: &[BlobShape]) -> Option<Packs> {
        let &BlobShape { dims, shape } = bottoms.first()?;
        let axis = positive_axis(self.axis, dims.into()).ok()?;
        concat_axis(dims, shape, axis)
            .is_none()
            .then_some(Packs::ONE)
    }

    fn forward_gpu_many(&self, bottoms: &[GpuMat], rec: &mut Recorder<'_>) -> Result<Vec<GpuMat>> {
        let pipelines = self.gpu.ready()?;
        let first = first_input(bottoms)?;
        let dims = first.dims;
        let axis = positive_axis(self.axis, usize::from(dims))?;
        let Some(at) = concat_axis(dims, first.shape(), axis) else {
            return Ok(vec![self.copy_along(rec, bottoms, axis)?]);
        };
        let out = joined(&gpu_shapes(bottoms), axis)?;
        // the net gives every input one packing (vulkan_same_packing)
        let pack = first.elempack;
        let [w, h, d, c] = to_space(dims, &out, 1);
        let spare = if self.room && at == 2 && dims > 1 {
            c / pack
        } else {
            0
        };
        let top = GpuMat::alloc_space_with_room(
            rec.context(),
            dims,
            [w, h, d, c / pack],
            (pack, spare),
            first.options,
        )?;
        // a 1-D blob's elements lie along c (cstep 1), where grids are short (65535 workgroups
        // of one invocation along z): they are concatenated as one row along w instead
        let row = |m: &GpuMat| match m.dims {
            1 => GpuMat {
                w: m.c,
                c: 1,
                cstep: m.c,
                ..m.clone()
            },
            _ => m.clone(),
        };
        if at == 2 && dims > 1 && flat_channels(rec, bottoms, &top, 0)? {
            return Ok(vec![top]);
        }
        let (at, whole, bottoms) = match dims {
            1 => (0, row(&top), bottoms.iter().map(row).collect::<Vec<_>>()),
            _ => (at, top.clone(), bottoms.to_vec()),
        };
        let view = |m: &GpuMat| [m.w, m.h, m.c];
        let mut offset = 0;
        // two inputs per dispatch; an odd one out is given twice, the second of extent 0
        for pair in bottoms.chunks(2) {
            let a = &pair[0];
            let b = pair.get(1);
            let pipeline = pipelines.for_mat(a)?.clone();
            let mut offsets = [0u32; 3];
            offsets[at] = offset as u32;
            let mut words = a.shape_words().to_vec();
            let mut b_words = b.map_or_else(|| a.shape_words(), |b| b.shape_words());
            if b.is_none() {
                b_words[at] = 0;
            }
            words.extend(b_words);
            words.extend([whole.w as u32, whole.cstep as u32]);
            words.extend(offsets);
            words.push(at as u32);
            // the grid over both: their extents summed along the axis
            let mut grid = view(a);
            grid[at] += b.map_or(0, |b| view(b)[at]);
            let grid = grid.map(|n| n as u32);
            rec.dispatch(&pipeline, &[a, b.unwrap_or(a), &whole], &words, grid)?;
            offset += grid[at] as usize;
        }
        Ok(vec![top])
    }

    fn gpu_appends_to_first(&self) -> bool {
        self.gpu.is_some()
    }

    fn set_gpu_output_appended(&mut self, on: bool) {
        self.room = on;
    }

    /// Along the channels, where the first input's buffer has room: the others written past
    /// its channels, so that a chain of concats copies each input once.
    fn forward_gpu_appended(
        &self,
        bottoms: &[GpuMat],
        rec: &mut Recorder<'_>,
    ) -> Result<Option<Vec<GpuMat>>> {
        let first = first_input(bottoms)?;
        let dims = first.dims;
        let axis = positive_axis(self.axis, usize::from(dims))?;
        if dims == 1 || concat_axis(dims, first.shape(), axis) != Some(2) {
            return Ok(None);
        }
        // inputs that do not agree off the axis are refused as the plain forward refuses them
        joined(&gpu_shapes(bottoms), axis)?;
        let top = GpuMat {
            c: bottoms.iter().map(|m| m.c).sum(),
            ..first.clone()
        };
        let room = first.buffer().is_some_and(|b| b.size() >= top.byte_size());
        if !room || !flat_channels(rec, &bottoms[1..], &top, first.c)? {
            return Ok(None);
        }
        Ok(Some(vec![top]))
    }

    fn channel_moves(&self, bottoms: &[BlobShape]) -> Option<ChannelMoves> {
        // channel q of the output: input i's channel q - (the channels of the inputs before i)
        let &BlobShape {
            dims,
            shape: [w, h, d, _],
        } = bottoms.first()?;
        let along = dims >= 3 && positive_axis(self.axis, dims.into()).ok()? == 0;
        let fits = bottoms.iter().all(
            |&BlobShape {
                 dims: bd,
                 shape: [bw, bh, bdd, _],
             }| (bd, bw, bh, bdd) == (dims, w, h, d),
        );
        let top = bottoms.iter().enumerate().flat_map(
            |(
                i,
                &BlobShape {
                    dims: _,
                    shape: [.., c],
                },
            )| (0..c).map(move |q| (i, q)),
        );
        (along && fits).then(|| vec![top.collect()])
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.axis = pd.int(0, 0);
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let first = first_input(bottoms)?;
        let axis = positive_axis(self.axis, first.numpy_shape().len())?;
        let shapes: Vec<Vec<usize>> = bottoms.iter().map(Mat::numpy_shape).collect();
        let e = joined(&shapes, axis)?;
        let total = e[axis];
        if let Some(top) = packed_channels(bottoms, axis)? {
            return Ok(vec![top]);
        }
        let shapes_4: Vec<_> = bottoms.iter().map(|b| b.blob_shape()).collect();
        if let Some(moves) = self.channel_moves(&shapes_4) {
            return move_channels(bottoms, &moves);
        }
        let outer: usize = e[..axis].iter().product();
        let inner: usize = e[axis + 1..].iter().product();
        let parts: Vec<(Vec<f32>, usize)> = bottoms
            .iter()
            .map(|b| (b.to_values(), b.numpy_shape()[axis]))
            .collect();
        let mut out = Vec::with_capacity(outer * total * inner);
        for o in 0..outer {
            for (v, n) in &parts {
                out.extend_from_slice(&v[o * n * inner..(o + 1) * n * inner]);
            }
        }
        Ok(vec![Mat::from_numpy(&e, &out)?])
    }
}

impl Concat {
    /// The concat along numpy `axis` as one strided copy per input into its place (pack1).
    fn copy_along(
        &self,
        rec: &mut Recorder<'_>,
        bottoms: &[GpuMat],
        axis: usize,
    ) -> Result<GpuMat> {
        let copy = self.copy.ready()?;
        let shapes = gpu_shapes(bottoms);
        let out = joined(&shapes, axis)?;
        let top = alloc_numpy(rec, &out, &bottoms[0])?;
        let whole = Strided::contiguous(&out);
        let mut start = 0;
        for (m, s) in bottoms.iter().zip(&shapes) {
            let to = whole.clone().narrow(axis, start, s[axis]);
            let from = Strided::contiguous(s);
            copy.record(rec, (m, &from), (&top, &to), CopyExtras::default())?;
            start += s[axis];
        }
        Ok(top)
    }
}

/// Along the channels, where every input lies as the output's channels do (its width, height,
/// channel step, packing and storage) in channel blocks of whole 16-byte groups: each pair of
/// inputs' bytes copied as they lie to their place in the output, from its channel block
/// `first` on, 16 bytes per invocation (`concat_flat`). `false`, with nothing recorded, where
/// they do not lie so.
fn flat_channels(
    rec: &mut Recorder<'_>,
    bottoms: &[GpuMat],
    top: &GpuMat,
    first: usize,
) -> Result<bool> {
    let block = top.cstep * top.elempack * top.format.size();
    let lies = |m: &GpuMat| {
        m.buffer().is_some()
            && (m.w, m.h, m.cstep, m.elempack, m.format)
                == (top.w, top.h, top.cstep, top.elempack, top.format)
    };
    let groups = top.c * block / 16;
    if !block.is_multiple_of(16)
        || !lies(top)
        || !bottoms.iter().all(lies)
        || groups > i32::MAX as usize
    {
        return Ok(false);
    }
    let ctx = rec.context();
    let module = Shader::ConcatFlat.module();
    let pipeline = ctx.pipeline(module, OptionSet::FP32, &Specialization::default())?;
    let mut at = first * block / 16;
    for pair in bottoms.chunks(2) {
        let a = &pair[0];
        let b = pair.get(1);
        let [na, nb] = [Some(a), b].map(|m| m.map_or(0, |m| m.c * block / 16));
        let n = na + nb;
        let row = n.clamp(1, 1 << 20);
        let words = [na, nb, row, at].map(|v| v as u32);
        let grid = [row as u32, n.div_ceil(row) as u32, 1];
        rec.dispatch(&pipeline, &[a, b.unwrap_or(a), top], &words, grid)?;
        at += n;
    }
    Ok(true)
}

/// The numpy shape of `shapes` joined along `axis`, or the first that differs from the
/// others off it.
fn joined(shapes: &[Vec<usize>], axis: usize) -> Result<Vec<usize>> {
    let first = shapes.first().map_or(&[][..], Vec::as_slice);
    let mut out = first.to_vec();
    if let Some(n) = out.get_mut(axis) {
        *n = 0;
    }
    for s in shapes {
        if s.len() != out.len() || (0..s.len()).any(|i| i != axis && s[i] != out[i]) {
            return Err(InputError::Mismatch {
                a: first.to_vec(),
                b: s.clone(),
                why: "differ off the concat axis",
            }
            .into());
        }
        out[axis] += s[axis];
    }
    Ok(out)
}

/// The numpy shapes of GPU mats.
fn gpu_shapes(mats: &[GpuMat]) -> Vec<Vec<usize>> {
    mats.iter()
        .map(|m| numpy_shape(m.dims, m.shape()))
        .collect()
}

/// The 3-D view axis a concat along numpy axis `axis` appends to: a 4-D blob's c and w, its d
/// (slabs of one height append the view's rows) and its h where it has one slab; `None` for
/// its h between slabs (the strided copies).
fn concat_axis(dims: u8, [_, _, d, _]: [usize; 4], axis: usize) -> Option<usize> {
    match (dims, axis) {
        (4, 0) => Some(2),
        (4, 1) => Some(1),
        (4, 2) if d == 1 => Some(1),
        (4, 3) => Some(0),
        (4, _) => None,
        _ => view_axis(dims, axis),
    }
}

/// 3-D fp32 `bottoms` of one packing `p > 1` joined along the channels (numpy `axis` 0): each
/// input's blocks of `p` channels copied whole, in order, the output keeping the packing (a
/// fire module's two expansions, both pack8, stay pack8); `None` for any other join.
fn packed_channels(bottoms: &[Mat], axis: usize) -> Result<Option<Mat>> {
    let first = first_input(bottoms)?;
    let (p, w, h) = (first.elempack, first.w, first.h);
    let alike = |b: &Mat| b.dims == 3 && b.elempack == p && [b.w, b.h] == [w, h];
    if p == 1 || axis != 0 || !bottoms.iter().all(alike) {
        return Ok(None);
    }
    let n = w * h * p;
    let mut blocks: Vec<&[f32]> = Vec::new();
    for b in bottoms {
        let Ok(values) = b.f32() else {
            return Ok(None);
        };
        blocks.extend((0..b.c).map(|q| &values[q * b.cstep * p..][..n]));
    }
    // every block written below
    let mut top = Mat::for_writing(3, [w, h, 1, blocks.len()], p, ElemType::F32)?;
    let step = (top.cstep * p).max(1);
    top.f32_mut()?
        .par_chunks_mut(step)
        .with_min_len(min_items(n))
        .zip(blocks.par_iter())
        .for_each(|(o, b)| o[..n].copy_from_slice(b));
    Ok(Some(top))
}
