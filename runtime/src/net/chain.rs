//! Chains of GPU layers that only move channels ([`crate::layer::Layer::channel_moves`]), run
//! as one gather: shufflenet's Concat → ShuffleChannel → Slice in each block was three
//! dispatches, each paying the host's encoding and the device's barrier for a few kilobytes.
//! Found at run time (the moves depend on the shapes), in light mode only: the links between
//! the layers are never made, so nothing else may want to read them.

use std::collections::HashMap;

use super::extractor::Extractor;
use super::{NetLayer, Placed, convert};
use crate::error::Result;
use crate::gpu::{DeviceBuffer, Recorder};
use crate::layer::{ChannelMoves, Packs, Support};
use crate::tensor::BlobShape;
use crate::tensor::{CHANNEL_GATHER_MATS, GpuMat, StorageFormat, channel_gather_table};

/// A chain found at layer `layers[0]`: the layers in order and, per top of the last, the
/// `(input of the first, channel)` each of its channels copies.
pub(super) struct Chain {
    pub(super) layers: Vec<usize>,
    moves: ChannelMoves,
}

/// The gathers' tables on the device, by content: a net's runs reuse them.
#[derive(Default)]
pub(super) struct Tables(std::sync::Mutex<HashMap<Vec<u32>, DeviceBuffer>>);

impl Tables {
    /// Past this many tables (nets run at ever new shapes) the cache starts over.
    const KEEP: usize = 256;

    fn get(&self, ctx: &crate::gpu::Context, table: Vec<u32>) -> Result<DeviceBuffer> {
        let mut cache = match self.0.lock() {
            Ok(cache) => cache,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(buffer) = cache.get(&table) {
            return Ok(buffer.clone());
        }
        if cache.len() >= Self::KEEP {
            cache.clear();
        }
        let buffer = ctx.upload(bytemuck::cast_slice(&table))?;
        cache.insert(table, buffer.clone());
        Ok(buffer)
    }
}

impl Extractor<'_> {
    /// The chain of channel-moving GPU layers that starts at layer `i` (inputs of `shapes`),
    /// if it has two layers or more: each next layer the only reader of the last one's only
    /// top, that top not the target, every input a device buffer the gather can read or a host
    /// mat it uploads.
    pub(super) fn channel_chain(
        &self,
        i: usize,
        shapes: &[BlobShape],
        needed: &[bool],
        target: usize,
    ) -> Option<Chain> {
        let net = self.net;
        let first = &net.layers[i];
        if !self.opt.lightmode || !StorageFormat::scalar_views(first.gpu_options) {
            return None;
        }
        // device buffers as they are, or host mats (uploaded as they are)
        let buffers = !first.gpu_options.contains(crate::Opt::Image);
        let inputs_fit = buffers
            && first.bottoms.len() <= CHANNEL_GATHER_MATS
            && first.bottoms.iter().all(|&b| match &self.gpu[b] {
                Some(g) => g.buffer().is_some() && g.options == first.gpu_options,
                None => self.cpu[b].is_some(),
            });
        if !inputs_fit {
            return None;
        }
        let mut moves = first.layer.channel_moves(shapes)?;
        let BlobShape {
            dims,
            shape: [w, h, d, _],
        } = *shapes.first()?;
        let mut layers = vec![i];
        let mut tops = &first.tops;
        while let [t] = tops[..] {
            let j = match net.blobs[t].consumers[..] {
                [j] if t != target && needed[j] => j,
                _ => break,
            };
            let next = &net.layers[j];
            let shape = [BlobShape::new(dims, [w, h, d, moves[0].len()])];
            let links = next.on_gpu
                && !next.support.alias
                && next.bottoms == [t]
                && next.gpu_options == first.gpu_options
                && next.layer.gpu_accepts(&shape);
            let Some(more) = links.then(|| next.layer.channel_moves(&shape)).flatten() else {
                break;
            };
            let through = &moves[0];
            let composed = more
                .iter()
                .map(|top| top.iter().map(|&(_, q)| through.get(q).copied()).collect());
            let Some(composed) = composed.collect::<Option<ChannelMoves>>() else {
                break;
            };
            moves = composed;
            layers.push(j);
            tops = &next.tops;
        }
        let fits =
            layers.len() >= 2 && moves.len() <= CHANNEL_GATHER_MATS && tops.len() == moves.len();
        fits.then_some(Chain { layers, moves })
    }

    /// Runs `chain` into `rec`: its first layer's inputs as they are, its last layer's tops
    /// made by one gather. The layers between count as run on the device.
    pub(super) fn forward_chain(
        &mut self,
        chain: &Chain,
        rec: &mut Recorder<'_>,
        remaining: &mut [usize],
        target: usize,
    ) -> Result<()> {
        let net = self.net;
        let first: &NetLayer = &net.layers[chain.layers[0]];
        let opt = self.opt.masked(first.featmask);
        let mut inputs = Vec::with_capacity(first.bottoms.len());
        for &b in &first.bottoms {
            let layout = (self.current_pack(b), false);
            let g = self.gpu_bottom(
                rec,
                b,
                layout,
                (first.gpu_options, None),
                false,
                remaining,
                target,
            )?;
            inputs.push(g);
        }
        let ctx = rec.context();
        let table = net.tables.get(ctx, channel_gather_table(&chain.moves))?;
        // the widest pack the options and each output's channels allow
        let packed = Support::MANY.gpu(true);
        let packs: Vec<usize> = chain
            .moves
            .iter()
            .map(|top| convert::gpu_elempack(1, top.len(), packed, Packs::ALL, &opt))
            .collect();
        let tops = GpuMat::record_channel_gather(rec, &inputs, &chain.moves, &packs, &table)?;
        for &j in &chain.layers[1..] {
            self.record.layers.push((j, Placed::Gpu));
            // the links between the layers were read by the next one, without being made
            for &b in &net.layers[j].bottoms {
                remaining[b] = remaining[b].saturating_sub(1);
            }
        }
        let last = &net.layers[chain.layers[chain.layers.len() - 1]];
        for (&t, m) in last.tops.iter().zip(tops) {
            self.gpu[t] = Some(m);
            self.cpu[t] = None;
            self.shared[t] = false;
        }
        Ok(())
    }
}
