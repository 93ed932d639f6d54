//! Whole channels of buffer mats copied into new mats in one dispatch
//! (`shaders/channel_gather.comp`): how the net runs a chain of layers that only move channels.

use crate::error::{Result, TensorError};
use crate::gpu::specialize::Specialization;
use crate::gpu::{DeviceBuffer, Recorder, Resource};
use crate::shaders::Shader;
use crate::tensor::{GpuMat, StorageFormat};

/// The most inputs and the most outputs of one gather (the shader's bindings).
pub const CHANNEL_GATHER_MATS: usize = 4;

/// The gather's table: output after output, per scalar channel, `input << 24 | channel`.
pub fn channel_gather_table(moves: &[Vec<(usize, usize)>]) -> Vec<u32> {
    moves
        .iter()
        .flatten()
        .map(|&(i, c)| ((i as u32) << 24) | (c as u32 & 0xff_ffff))
        .collect()
}

fn problem(problem: String) -> crate::Error {
    TensorError::ChannelGather { problem }.into()
}

impl GpuMat {
    /// Records copying channels of `inputs` (buffer mats of one channel plane, any elempack)
    /// into new mats: output `o` gets `moves[o].len()` channels of elempack `packs[o]`, its
    /// channel `q` a copy of channel `moves[o][q].1` of input `moves[o][q].0`. `table` holds
    /// [`channel_gather_table`] of `moves` on the device.
    pub fn record_channel_gather(
        rec: &mut Recorder<'_>,
        inputs: &[GpuMat],
        moves: &[Vec<(usize, usize)>],
        packs: &[usize],
        table: &DeviceBuffer,
    ) -> Result<Vec<GpuMat>> {
        let first = inputs.first().ok_or_else(|| problem("no input".into()))?;
        let n = CHANNEL_GATHER_MATS;
        if inputs.len() > n || moves.is_empty() || moves.len() > n || packs.len() != moves.len() {
            return Err(problem(format!(
                "{} inputs, {} outputs and {} packs (1 to {n} of each, a pack per output)",
                inputs.len(),
                moves.len(),
                packs.len()
            )));
        }
        let options = first.options;
        if !StorageFormat::scalar_views(options) {
            return Err(problem(format!(
                "{} mats hold fp32 pack1 and fp16 packs",
                options.name()
            )));
        }
        let plane = first.w * first.h;
        let channels: Vec<usize> = inputs.iter().map(|m| m.c * m.elempack).collect();
        for m in inputs {
            if m.buffer().is_none()
                || m.dims != first.dims
                || m.w * m.h != plane
                || m.format != first.format
            {
                return Err(problem(format!(
                    "inputs of {}-D {:?} and {}-D {:?} ({:?}, {:?}): buffers of one channel plane and format",
                    first.dims,
                    first.shape(),
                    m.dims,
                    m.shape(),
                    first.format,
                    m.format
                )));
            }
        }
        let wrong = moves
            .iter()
            .flatten()
            .find(|&&(i, c)| channels.get(i).is_none_or(|&have| c >= have) || c > 0xff_ffff);
        if let Some((i, c)) = wrong {
            return Err(problem(format!(
                "channel {c} of input {i} (the inputs have {channels:?})"
            )));
        }
        let total: usize = moves.iter().map(Vec::len).sum();
        if (table.size() as usize) < total * 4 {
            return Err(problem(format!(
                "a table of {} bytes for {total} channels",
                table.size()
            )));
        }
        let ctx = rec.context();
        let [w, h, d, _] = first.space();
        let mut tops = Vec::with_capacity(moves.len());
        for (top, &pack) in moves.iter().zip(packs) {
            if ![1, 4, 8].contains(&pack) || !top.len().is_multiple_of(pack) {
                return Err(problem(format!(
                    "{} output channels in elempack {pack}",
                    top.len()
                )));
            }
            let space = [w, h, d, top.len() / pack];
            tops.push(GpuMat::alloc_space(ctx, first.dims, space, pack, options)?);
        }
        let pipeline = ctx.pipeline(
            Shader::ChannelGather.module(),
            options,
            &Specialization::default(),
        )?;
        if StorageFormat::of(pipeline.options, 1) != first.format {
            return Err(TensorError::VariantStorage {
                shader: "channel_gather".into(),
                variant: pipeline.options.name(),
                stores: format!("{:?}", StorageFormat::of(pipeline.options, 1)),
                mats: format!("{:?}", first.format),
            }
            .into());
        }
        // unused bindings repeat the first input (read) and the first output (written)
        let mut resources: Vec<Resource<'_>> = (0..n)
            .map(|k| inputs.get(k).unwrap_or(first).into())
            .collect();
        resources.extend((0..n).map(|k| Resource::from(tops.get(k).unwrap_or(&tops[0]))));
        resources.push(table.into());
        let word = |f: &dyn Fn(usize) -> usize, len: usize| -> [u32; 4] {
            std::array::from_fn(|k| if k < len { f(k) as u32 } else { 1 })
        };
        let mut offsets = Vec::with_capacity(moves.len());
        let mut at = 0;
        for top in moves {
            offsets.push(at);
            at += top.len();
        }
        let mut push = word(&|k| inputs[k].cstep, inputs.len()).to_vec();
        push.extend(word(&|k| inputs[k].elempack, inputs.len()));
        push.extend(word(&|k| tops[k].cstep, tops.len()));
        push.extend(word(&|k| tops[k].elempack, tops.len()));
        push.extend(word(&|k| tops[k].c, tops.len()));
        push.extend(word(&|k| offsets[k], tops.len()));
        push.extend([plane as u32, tops.len() as u32]);
        let widest = packs.iter().copied().max().unwrap_or(1);
        let deepest = tops.iter().map(|t| t.c).max().unwrap_or(0);
        let grid = [plane * widest, deepest, tops.len()].map(|v| v as u32);
        rec.dispatch(&pipeline, &resources, &push, grid)?;
        Ok(tops)
    }
}
