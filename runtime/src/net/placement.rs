//! Placement at run time: whether a GPU layer takes the blobs it has now, and its GPU
//! inputs converted (uploaded, repacked, padded, copied) to what its flags ask for.

use std::sync::Arc;

use super::extractor::Extractor;
use super::fuse::Fusion;
use super::{Forwarded, NetLayer, Placed, check_tops, convert, single_input};
use crate::OptionSet;
use crate::error::Result;
use crate::gpu::Recorder;
use crate::layer::RunOptions;
use crate::tensor::BlobShape;
use crate::tensor::{GpuMat, StorageFormat};

impl Extractor<'_> {
    /// The shapes (`(dims, [w, h, d, c])`) of layer `l`'s inputs as they are now.
    fn bottom_shapes(&self, l: &NetLayer) -> Vec<BlobShape> {
        l.bottoms.iter().map(|&b| self.shape_of(b)).collect()
    }

    /// The shapes of GPU layer `l`'s inputs when it runs on the device for the blobs it has
    /// now: 4-D blobs where its flags take them (`vulkan_4d`), image mats exactly 3-D, and a
    /// layer may decline shapes it has no shader for; then (`None`) it runs on the CPU this
    /// time. So does a layer whose input would not fit one binding of the device (a 4096²
    /// photo's first blob on a device binding 128 MiB): decided before anything of it is
    /// allocated. A blob in bands is for a banded forward ([`bands`](super::bands)).
    pub(super) fn gpu_takes(&self, l: &NetLayer) -> Option<Vec<BlobShape>> {
        if !self.fits_a_binding(l) {
            return None;
        }
        let shapes = self.bottom_shapes(l);
        let image = l.gpu_options.contains(crate::Opt::Image);
        let dims = match (image, l.support.vulkan_4d) {
            (true, _) => 3..=3,
            (false, true) => 1..=4,
            (false, false) => 1..=3,
        };
        let takes = shapes
            .iter()
            .all(|BlobShape { dims: d, .. }| dims.contains(d))
            && l.layer.gpu_accepts(&shapes);
        takes.then_some(shapes)
    }

    /// Whether each of `l`'s inputs fits one storage binding of the device in the layer's
    /// storage format (blobs on the device as they are; host ones as they would be uploaded,
    /// with 32-byte channel alignment to spare).
    pub(super) fn fits_a_binding(&self, l: &NetLayer) -> bool {
        let Some(ctx) = self.net.ctx.as_deref() else {
            return true;
        };
        let limit = ctx.limits().max_storage_buffer_binding_size;
        l.bottoms
            .iter()
            .all(|&b| match (&self.gpu[b], &self.cpu[b]) {
                _ if self.bands[b].is_some() => false,
                (Some(g), _) => g.byte_size() <= limit,
                (None, Some(m)) => {
                    let value = StorageFormat::of(l.gpu_options, m.elempack).size() as u64;
                    let values = (m.c * m.cstep * m.elempack) as u64;
                    values * value + 32 * m.c as u64 <= limit
                }
                (None, None) => true,
            })
    }

    /// The elempack blob `b` has now: on the device where it is there, else on the host.
    pub(super) fn current_pack(&self, b: usize) -> usize {
        if let Some(bands) = &self.bands[b] {
            return bands.elempack();
        }
        match (&self.gpu[b], &self.cpu[b]) {
            (Some(g), _) => g.elempack,
            (None, Some(m)) => m.elempack,
            (None, None) => 1,
        }
    }

    /// The layout each GPU input of `l` is converted to: its elempack (within the layer's
    /// packs, one for all where `vulkan_same_packing`), and whether pack1 channels are padded
    /// to pack4 (`vulkan_pad_to_pack4`). A layer taking any packing keeps a device blob's pack;
    /// a blob still on the host is packed as a packed layer would take it (the upload converts
    /// anyway), and with several inputs all take the largest one's pack where it fits them.
    pub(super) fn gpu_layouts(
        &self,
        l: &NetLayer,
        shapes: &[BlobShape],
        opt: &RunOptions,
    ) -> Vec<(usize, bool)> {
        let s = l.support;
        let packs = l.layer.gpu_packs(shapes).unwrap_or(s.vulkan_packs);
        let packed = crate::layer::Support {
            vulkan_any_packing: false,
            ..s
        };
        let channels: Vec<usize> = (shapes.iter())
            .map(|&BlobShape { dims, shape }| crate::layer::shared::view::channels(dims, shape))
            .collect();
        let mut chosen: Vec<usize> = (l.bottoms.iter().zip(&channels))
            .map(
                |(&b, &c)| match self.gpu[b].is_some() || self.bands[b].is_some() {
                    true => convert::gpu_elempack(self.current_pack(b), c, s, packs, opt),
                    false => convert::gpu_elempack(1, c, packed, packs, opt),
                },
            )
            .collect();
        if s.vulkan_any_packing && s.vulkan_same_packing && shapes.len() > 1 {
            match largest_pack(shapes, &chosen, &channels, packs) {
                Some(pack) => chosen.iter_mut().for_each(|p| *p = pack),
                // each as a packed layer's input (its current pack aside), then the least of
                // those (below)
                None => {
                    for (p, &c) in chosen.iter_mut().zip(&channels) {
                        *p = convert::gpu_elempack(1, c, packed, packs, opt);
                    }
                }
            }
        }
        if s.vulkan_same_packing
            && let Some(least) = chosen.iter().copied().min()
        {
            chosen.iter_mut().for_each(|p| *p = least);
        }
        (chosen.into_iter().zip(&channels))
            .map(|(pack, &c)| {
                (
                    pack,
                    pack == 1 && s.vulkan_pad_to_pack4 && !c.is_multiple_of(4),
                )
            })
            .collect()
    }

    /// The GPU mat of blob `b` in layout `(pack, pad)` for a reader of `options` (which reads
    /// int8 storage at the scale `int8` has as it is): uploaded if it is only on the host,
    /// repacked, and copied when an in-place layer must not touch a shared buffer. The blob's
    /// last reader takes the mat out of the extractor (light mode).
    #[allow(clippy::too_many_arguments)] // one blob, one layer's needs, the run's bookkeeping
    pub(super) fn gpu_bottom(
        &mut self,
        rec: &mut Recorder<'_>,
        b: usize,
        (pack, pad): (usize, bool),
        (options, int8): (OptionSet, Option<f32>),
        inplace: bool,
        remaining: &mut [usize],
        target: usize,
    ) -> Result<GpuMat> {
        let ctx = rec.context();
        if self.gpu[b].is_none() {
            let host = self.cpu[b]
                .clone()
                .ok_or_else(|| super::extractor::missing(&self.net.blobs[b].name))?;
            let m = if host.elempack == pack {
                std::borrow::Cow::Borrowed(host.as_ref())
            } else {
                std::borrow::Cow::Owned(host.to_packing(pack)?)
            };
            let g = GpuMat::record_upload(rec, &m, options)?;
            // a Split's other tops hold the same host mat: they share this upload (an SSD's
            // image feeds its first convolution and six PriorBoxes: it went up seven times)
            for (s, cpu) in self.cpu.iter().enumerate() {
                let sibling = cpu.as_ref().is_some_and(|c| Arc::ptr_eq(c, &host));
                if sibling && s != b && self.gpu[s].is_none() && self.bands[s].is_none() {
                    self.gpu[s] = Some(g.clone());
                }
            }
            self.gpu[b] = Some(g);
            if self.opt.lightmode {
                self.cpu[b] = None;
            }
        }
        remaining[b] = remaining[b].saturating_sub(1);
        let last = remaining[b] == 0 && self.opt.lightmode && b != target;
        let g = if last {
            self.gpu[b].take()
        } else {
            self.gpu[b].clone()
        }
        .ok_or_else(|| super::extractor::missing(&self.net.blobs[b].name))?;
        // int8 storage for a reader of its levels at that scale, in the layout it asks for
        let levels = g.format.int8_scale().is_some_and(|s| {
            int8.is_some_and(|r| r.to_bits() == s.to_bits()) && g.elempack == pack && !pad
        });
        // another storage layout (a feature mask; int8 storage for a reader of values):
        // through the host, which decodes int8 storage to its values
        let g = if !levels
            && (StorageFormat::of(options, g.elempack) != g.format
                || g.options.contains(crate::Opt::Image) != options.contains(crate::Opt::Image))
        {
            let mut flush = ctx.recorder();
            std::mem::swap(rec, &mut flush);
            flush.submit_and_wait()?;
            let host = g.download(ctx)?;
            GpuMat::record_upload(rec, &host, options)?
        } else {
            g
        };
        // each conversion's input dropped at once: a view of the same buffer (a 1-D blob
        // repacked) must be its only handle for `exclusive` below, or an in-place reader
        // copies it
        let g = if g.elempack == pack {
            g
        } else {
            let packed = g.record_packing(rec, pack)?;
            drop(g);
            packed
        };
        let g = if pad {
            let padded = g.record_padded_pack4(rec)?;
            drop(g);
            padded
        } else {
            g
        };
        // the reader may write the blob only when no one else can see it (the mat taken out
        // of the extractor is the only handle unless another blob or the user aliases it)
        let exclusive = last && !self.shared[b] && !g.buffer_is_shared();
        if inplace && !exclusive {
            return g.record_copy(rec);
        }
        Ok(g)
    }

    /// Runs GPU layer `i` into `rec`, its inputs converted first; with `fuse`, the layers
    /// after it in its epilogue where it can ([`fuse`](super::fuse)).
    /// [`Forwarded::DeviceLimit`] where the layer met a limit of the device (an output past
    /// the largest buffer, device memory, a grid) before writing anything but its own outputs:
    /// its inputs are back in the extractor and the caller runs it on the CPU.
    pub(super) fn forward_gpu(
        &mut self,
        i: usize,
        shapes: &[BlobShape],
        rec: &mut Recorder<'_>,
        (remaining, target): (&mut [usize], usize),
        fuse: Option<Fusion>,
    ) -> Result<Forwarded> {
        let net = self.net;
        let l = &net.layers[i];
        let opt = self.opt.masked(l.featmask);
        let options = l.gpu_options;
        let s = l.support;
        let layouts = self.gpu_layouts(l, shapes, &opt);
        let mut fused = None;
        // a layer that appends to its first input gets that buffer where it is the layer's
        // alone (asked before the inputs below hold a second handle on it)
        let appends = l.layer.gpu_appends_to_first()
            && (l.bottoms.first()).is_some_and(|&b| self.handed_over(b, remaining, target));
        // the inputs as they are, for the CPU to take if the device cannot hold an output (a
        // layer writing in place has none of its own: its inputs are not kept)
        let originals: Vec<_> = match s.inplace {
            true => Vec::new(),
            false => (l.bottoms.iter())
                .map(|&b| (self.gpu[b].clone(), self.cpu[b].clone()))
                .collect(),
        };
        // blobs this layer reads last leave the extractor here: their buffers go back to the
        // pool when `bottoms` drops
        let mut bottoms = Vec::with_capacity(l.bottoms.len());
        let reads = (options, l.layer.gpu_int8_input());
        for (b, layout) in l.bottoms.iter().zip(layouts) {
            // a forward that writes a new mat need not have its input copied
            let overwrites = s.inplace && !s.vulkan_inplace_new;
            bottoms.push(self.gpu_bottom(rec, *b, layout, reads, overwrites, remaining, target)?);
        }
        let appended = match appends {
            true => l.layer.forward_gpu_appended(&bottoms, rec)?,
            false => None,
        };
        let tops = if let Some(tops) = appended {
            if let Some(last) = self.record.layers.last_mut() {
                last.1 = Placed::GpuAppended;
            }
            tops
        } else if s.one_blob_only && s.inplace {
            let mut m = single_input(bottoms)?;
            l.layer.forward_gpu_inplace(&mut m, rec)?;
            vec![m]
        } else {
            let fused_top = match fuse {
                Some(f) => self.forward_fused(l, &bottoms, f, rec, (remaining, target)),
                None => Ok(None),
            };
            let tops = match fused_top {
                Ok(Some(top)) => {
                    fused = fuse;
                    Ok(vec![top])
                }
                Err(e) => Err(e),
                Ok(None) => match (s.one_blob_only, bottoms.first()) {
                    (true, Some(m)) => l.layer.forward_gpu(m, rec).map(|top| vec![top]),
                    (true, None) => Err(super::no_input()),
                    (false, _) => l.layer.forward_gpu_many(&bottoms, rec),
                },
            };
            match tops {
                Ok(tops) => tops,
                // a new output the device cannot hold: the inputs go back as they were (not
                // as converted for the device: padded channels are not the blob's), and the
                // CPU runs it
                Err(e) if e.is_device_limit() && originals.len() == l.bottoms.len() => {
                    drop(bottoms);
                    for (&b, (gpu, cpu)) in l.bottoms.iter().zip(originals) {
                        remaining[b] += 1;
                        if self.gpu[b].is_none() && self.cpu[b].is_none() {
                            (self.gpu[b], self.cpu[b]) = (gpu, cpu);
                        }
                    }
                    return Ok(Forwarded::DeviceLimit);
                }
                Err(e) => return Err(e),
            }
        };
        check_tops(tops.len(), l.tops.len())?;
        // the output is the last fused layer's top; each blob between was read by the next
        let mut tops_of = &l.tops;
        let folded = fused.map(|f| f.layers()).unwrap_or_default();
        for j in folded.into_iter().flatten() {
            self.record.layers.push((j, Placed::Fused));
            (tops_of.iter()).for_each(|&t| remaining[t] = remaining[t].saturating_sub(1));
            tops_of = &net.layers[j].tops;
        }
        for (t, m) in tops_of.iter().zip(tops) {
            self.gpu[*t] = Some(m);
            self.cpu[*t] = None;
            self.bands[*t] = None;
            self.shared[*t] = false;
        }
        Ok(match fused {
            Some(f) => Forwarded::Fused(f.layers()),
            None => Forwarded::Ran,
        })
    }

    /// GPU layer `l`'s forward of `bottoms` with `fusion` in its epilogue, or `None` where the
    /// layer cannot take it (nothing recorded; a residual it was to read stays for its sum).
    fn forward_fused(
        &mut self,
        l: &NetLayer,
        bottoms: &[GpuMat],
        fusion: Fusion,
        rec: &mut Recorder<'_>,
        (remaining, target): (&mut [usize], usize),
    ) -> Result<Option<GpuMat>> {
        let (other, act) = match fusion {
            Fusion::Activation(_, act) => return l.layer.forward_gpu_activated(bottoms, act, rec),
            Fusion::Residual { other, act, .. } => (other, act.map(|(_, a)| a)),
        };
        // the sum's read of the other blob, as it is on the device
        let pack = self.current_pack(other);
        let reads = (l.gpu_options, None);
        let residual =
            self.gpu_bottom(rec, other, (pack, false), reads, false, remaining, target)?;
        let top = l.layer.forward_gpu_residual(bottoms, &residual, act, rec);
        if !matches!(top, Ok(Some(_))) {
            remaining[other] += 1;
            if self.gpu[other].is_none() {
                self.gpu[other] = Some(residual);
            }
        }
        top
    }
}

/// For a layer taking any packing, one pack for all its inputs: the pack of the largest input
/// (in `chosen`, the widest among equals), where every input's channels and the layer's packs
/// allow it. A small operand (a broadcast vector, a constant) then follows the feature map
/// instead of the map being repacked for it.
fn largest_pack(
    shapes: &[BlobShape],
    chosen: &[usize],
    channels: &[usize],
    packs: crate::layer::Packs,
) -> Option<usize> {
    let elements = |BlobShape { shape: s, .. }: &BlobShape| s.iter().product::<usize>();
    let most = shapes.iter().map(elements).max()?;
    let pack = (shapes.iter().zip(chosen))
        .filter(|(s, _)| elements(s) == most)
        .map(|(_, &p)| p)
        .max()?;
    let fits = channels.iter().all(|c| c.is_multiple_of(pack));
    (fits && packs.contains(pack)).then_some(pack)
}
