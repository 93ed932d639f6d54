//! The extractor: inputs in, outputs out, running only the layers a requested blob needs,
//! CPU layers on host mats (converted per their flags).

use std::sync::Arc;
use std::time::Instant;

use super::{
    CpuTime, Forwarded, Net, Placed, RunRecord, check_tops, convert, err_layer, single_input,
    threads,
};
use crate::error::{BlobError, Error, InputError, Result};
use crate::gpu::Recorder;
use crate::layer::RunOptions;
use crate::tensor::{Bands, ElemType, GpuMat, Mat, PendingDownload};

/// Inputs in, outputs out, running only the layers a requested blob needs.
pub struct Extractor<'n> {
    pub(super) net: &'n Net,
    pub(super) opt: RunOptions,
    /// Host blobs, shared: a Split's tops and the readers that do not write are the same mat.
    pub(super) cpu: Vec<Option<Arc<Mat>>>,
    pub(super) gpu: Vec<Option<GpuMat>>,
    /// Device blobs past one buffer, in bands of rows ([`bands`](super::bands)).
    pub(super) bands: Vec<Option<Arc<Bands>>>,
    /// GPU blobs whose buffer another blob shares (Split), so in place needs a copy.
    pub(super) shared: Vec<bool>,
    /// Readers of each blob that have not read it yet: a blob is released (light mode) or
    /// handed to an in-place layer without a copy only when no other reader is left.
    pub(super) remaining: Vec<usize>,
    /// Where the layers run so far went.
    pub(super) record: RunRecord,
}

impl<'n> Extractor<'n> {
    /// Keeps intermediate blobs (light mode off) or releases them after their last reader.
    pub fn set_light_mode(&mut self, on: bool) {
        self.opt.lightmode = on;
    }

    /// Sets input blob `name`: a mat, or an `Arc<Mat>` shared with the caller (no copy: what
    /// feeds the same input to many runs, as ncnn's reference-counted `Mat` does).
    pub fn input(&mut self, name: &str, mat: impl Into<Arc<Mat>>) -> Result<()> {
        let id = self.net.blob_index(name)?;
        self.cpu[id] = Some(mat.into());
        self.gpu[id] = None;
        self.bands[id] = None;
        Ok(())
    }

    /// Where each layer this extractor ran went, and the host round trips on the way.
    pub fn record(&self) -> &RunRecord {
        &self.record
    }

    fn available(&self, id: usize) -> bool {
        self.cpu[id].is_some() || self.gpu[id].is_some() || self.bands[id].is_some()
    }

    /// Computes blob `name` (fp32, elempack 1), running what it needs.
    pub fn extract(&mut self, name: &str) -> Result<Mat> {
        let (target, pending) = self.compute(name, true)?;
        let out = match (&self.cpu[target], pending) {
            (Some(m), _) => Mat::clone(m),
            (None, Some(pending)) => {
                pending.finish(self.net.ctx.as_deref().ok_or(Error::NoDevice {
                    what: "a device blob",
                })?)?
            }
            (None, None) => match self.bands_to_host(target)? {
                Some(m) => Arc::unwrap_or_clone(m),
                None => return Err(missing(name)),
            },
        };
        let out = if out.elemtype() == ElemType::F32 {
            out
        } else {
            out.cast(ElemType::F32)
        };
        // a pack1 result is the output as it is, not a copy of it
        if out.elempack == 1 {
            return Ok(out);
        }
        out.to_packing(1)
    }

    /// Sets input blob `name` from a device mat (ncnn's `input(VkMat)`): no upload.
    pub fn input_gpu(&mut self, name: &str, mat: GpuMat) -> Result<()> {
        let id = self.net.blob_index(name)?;
        self.gpu[id] = Some(mat);
        self.cpu[id] = None;
        self.bands[id] = None;
        self.shared[id] = true;
        Ok(())
    }

    /// Computes blob `name` and leaves it on the device as the last layer made it (ncnn's
    /// `extract(VkMat)`): packed and in the net's storage format; a CPU result is uploaded.
    pub fn extract_gpu(&mut self, name: &str) -> Result<GpuMat> {
        let (target, _) = self.compute(name, false)?;
        let ctx = self.net.ctx.clone().ok_or(Error::NoDevice {
            what: "extract_gpu",
        })?;
        match (&self.gpu[target], &self.cpu[target]) {
            (Some(g), _) => Ok(g.clone()),
            (None, Some(m)) => GpuMat::upload(&ctx, m, self.net.gpu_options),
            // past one buffer of the device: one mat cannot hold it
            (None, None) => match &self.bands[target] {
                Some(bands) => {
                    let [w, h, c] = bands.shape;
                    Err(Error::BeyondLimit {
                        what: "a blob in bands",
                        bytes: (w * h * c) as u64 * 4,
                        limit: ctx.limits().max_buffer_size,
                        limit_name: "max_buffer_size",
                    })
                }
                None => Err(missing(name)),
            },
        }
    }

    /// Runs what blob `name` needs; its index. With `download`, a target left on the device
    /// is also read back in the same submission: the pending download.
    fn compute(&mut self, name: &str, download: bool) -> Result<(usize, Option<PendingDownload>)> {
        if self.net.ctx.is_none() {
            // a CPU net runs the whole extract in its pool: entering the pool for each layer
            // (a thread woken, then the caller woken) cost tens of microseconds per layer
            let threads = self.opt.num_threads;
            return threads::run_on(threads, || self.compute_here(name, download))?;
        }
        self.compute_here(name, download)
    }

    fn compute_here(
        &mut self,
        name: &str,
        download: bool,
    ) -> Result<(usize, Option<PendingDownload>)> {
        let target = self.net.blob_index(name)?;
        // the layers to run: producers of missing blobs, back from the target
        let mut needed = vec![false; self.net.layers.len()];
        let mut stack = vec![target];
        while let Some(b) = stack.pop() {
            if self.available(b) {
                continue;
            }
            let Some(p) = self.net.blobs[b].producer else {
                return Err(BlobError::NoProducer {
                    name: self.net.blobs[b].name.clone(),
                }
                .into());
            };
            let l = &self.net.layers[p];
            if l.support.user_input {
                // an input no one fed is an empty mat, as in ncnn (a decoder's key/value
                // caches on its first step): the layers that read it say whether it may be
                self.cpu[b] = Some(Arc::new(Mat::empty()));
                continue;
            }
            if !needed[p] {
                needed[p] = true;
                stack.extend(l.bottoms.iter().copied());
            }
        }
        let mut remaining = std::mem::take(&mut self.remaining);
        let net = self.net;
        let ctx = net.ctx.as_deref();
        let mut rec: Option<Recorder<'_>> = None;
        // layers a chain before them ran (their tops made by its gather)
        let mut chained = vec![false; net.layers.len()];
        for (i, l) in net.layers.iter().enumerate() {
            if !needed[i] || chained[i] {
                continue;
            }
            let on_gpu = if l.on_gpu && !l.support.alias {
                self.gpu_takes(l)
            } else {
                None
            };
            let placed = match (l.support.alias, &on_gpu) {
                (true, _) => Placed::Alias,
                (false, Some(_)) => Placed::Gpu,
                (false, None) => Placed::Cpu,
            };
            self.record.layers.push((i, placed));
            let result = if l.support.alias {
                self.split(i, &mut remaining, target)
            } else if let Some(shapes) = on_gpu {
                let ctx = ctx.ok_or(Error::NoDevice {
                    what: "a device blob",
                })?;
                let r = rec.get_or_insert_with(|| ctx.recorder());
                r.set_label(&l.name);
                match self.channel_chain(i, &shapes, &needed, target) {
                    Some(chain) => {
                        chain.layers[1..].iter().for_each(|&j| chained[j] = true);
                        self.forward_chain(&chain, r, &mut remaining, target)
                    }
                    None => {
                        let fuse = self.fusion(i, &needed, target);
                        match self.forward_gpu(i, &shapes, r, (&mut remaining, target), fuse) {
                            // past a limit of the device: in bands, or on the CPU
                            Ok(Forwarded::DeviceLimit) => {
                                self.banded_or_cpu(i, &mut rec, &mut remaining, target)
                            }
                            Ok(Forwarded::Fused(layers)) => {
                                layers.into_iter().flatten().for_each(|j| chained[j] = true);
                                Ok(())
                            }
                            done => done.map(drop),
                        }
                    }
                }
            } else if self.wants_bands(l) {
                self.banded_or_cpu(i, &mut rec, &mut remaining, target)
            } else {
                self.cpu_after(i, &mut rec, &mut remaining, target)
            };
            if let Err(e) = result {
                self.remaining = remaining;
                return Err(err_layer(l, e));
            }
        }
        self.remaining = remaining;
        let mut pending = match (&self.cpu[target], &self.gpu[target], ctx) {
            (None, Some(g), Some(ctx)) if download => {
                let r = rec.get_or_insert_with(|| ctx.recorder());
                r.set_label("(download)");
                Some(g.record_download(r)?)
            }
            _ => None,
        };
        if let Some(r) = rec.take() {
            r.submit_and_wait_overlapping(|| pending.iter_mut().for_each(|p| p.prepare()))?;
        }
        Ok((target, pending))
    }

    /// Runs layer `i` in bands of rows on the device where it can, else on the CPU after the
    /// work recorded so far.
    fn banded_or_cpu(
        &mut self,
        i: usize,
        rec: &mut Option<Recorder<'n>>,
        remaining: &mut [usize],
        target: usize,
    ) -> Result<()> {
        let net = self.net;
        if let Some(ctx) = net.ctx.as_deref()
            && net.layers[i].on_gpu
        {
            let r = rec.get_or_insert_with(|| ctx.recorder());
            match self.forward_banded(i, r, remaining, target) {
                Ok(Some(bands)) => {
                    if let Some(last) = self.record.layers.last_mut() {
                        last.1 = Placed::GpuBands(bands);
                    }
                    return Ok(());
                }
                // past a limit even in bands: the CPU's
                Err(e) if e.is_device_limit() => {}
                Ok(None) => {}
                Err(e) => return Err(e),
            }
        }
        self.cpu_after(i, rec, remaining, target)
    }

    /// Runs layer `i` on the CPU once the work recorded so far is done.
    fn cpu_after(
        &mut self,
        i: usize,
        rec: &mut Option<Recorder<'n>>,
        remaining: &mut [usize],
        target: usize,
    ) -> Result<()> {
        if let Some(last) = self.record.layers.last_mut() {
            last.1 = Placed::Cpu;
        }
        if rec.is_some() {
            self.record.waits += 1;
        }
        // the device-only inputs ride in the submission of the work that makes them: one
        // wait for all (each read back on its own was a round trip of its own: three for an
        // SSD's head)
        let mut downloads: Vec<(usize, PendingDownload)> = Vec::new();
        if let Some(ctx) = self.net.ctx.as_deref() {
            for &b in &self.net.layers[i].bottoms {
                let device_only = self.cpu[b].is_none() && self.bands[b].is_none();
                if let Some(g) = self.gpu[b].as_ref().filter(|g| g.buffer().is_some())
                    && device_only
                    && !downloads.iter().any(|(d, _)| *d == b)
                {
                    let r = rec.get_or_insert_with(|| ctx.recorder());
                    r.set_label("(download)");
                    downloads.push((b, g.record_download(r)?));
                }
            }
        }
        if let Some(r) = rec.take() {
            r.submit_and_wait_overlapping(|| downloads.iter_mut().for_each(|(_, p)| p.prepare()))?;
        }
        if let Some(ctx) = self.net.ctx.as_deref() {
            for (b, pending) in downloads {
                self.cpu[b] = Some(Arc::new(pending.finish(ctx)?));
                self.record.downloads += 1;
                if self.opt.lightmode {
                    self.gpu[b] = None;
                }
            }
        }
        self.forward_cpu(i, remaining, target)
    }

    /// The CPU mat of blob `b` for a reader: taken if nothing else reads it later (light mode)
    /// or `inplace` is false and it is kept, else a copy. Downloads GPU-only blobs.
    fn cpu_bottom(&mut self, b: usize, remaining: &mut [usize], target: usize) -> Result<Arc<Mat>> {
        if self.cpu[b].is_none()
            && let Some(m) = self.bands_to_host(b)?
        {
            self.cpu[b] = Some(m);
            if self.opt.lightmode {
                self.bands[b] = None;
            }
        }
        if self.cpu[b].is_none() {
            let g = self.gpu[b]
                .as_ref()
                .ok_or_else(|| missing(&self.net.blobs[b].name))?;
            let ctx = self.net.ctx.as_deref().ok_or(Error::NoDevice {
                what: "a device blob",
            })?;
            let m = g.download(ctx)?;
            self.record.downloads += 1;
            self.cpu[b] = Some(Arc::new(m));
            if self.opt.lightmode {
                self.gpu[b] = None;
            }
        }
        remaining[b] = remaining[b].saturating_sub(1);
        let last = remaining[b] == 0 && self.opt.lightmode && b != target;
        if last {
            self.cpu[b]
                .take()
                .ok_or_else(|| missing(&self.net.blobs[b].name))
        } else {
            self.cpu[b]
                .clone()
                .ok_or_else(|| missing(&self.net.blobs[b].name))
        }
    }

    /// Split: every top is the bottom, where it is. A device blob stays on the device (its
    /// tops share the buffer, so an in-place reader copies while another top still holds it)
    /// and nothing waits for the recorded work.
    fn split(&mut self, i: usize, remaining: &mut [usize], target: usize) -> Result<()> {
        let l = &self.net.layers[i];
        let b = *l.bottoms.first().ok_or(InputError::Count {
            got: 0,
            expected: "1",
        })?;
        remaining[b] = remaining[b].saturating_sub(1);
        let last = remaining[b] == 0 && self.opt.lightmode && b != target;
        let (cpu, gpu, bands) = if last {
            (self.cpu[b].take(), self.gpu[b].take(), self.bands[b].take())
        } else {
            (
                self.cpu[b].clone(),
                self.gpu[b].clone(),
                self.bands[b].clone(),
            )
        };
        if cpu.is_none() && gpu.is_none() && bands.is_none() {
            return Err(missing(&self.net.blobs[b].name));
        }
        let shared = self.shared[b];
        for &t in &l.tops {
            self.cpu[t] = cpu.clone();
            self.gpu[t] = gpu.clone();
            self.bands[t] = bands.clone();
            self.shared[t] = shared;
        }
        Ok(())
    }

    fn forward_cpu(&mut self, i: usize, remaining: &mut [usize], target: usize) -> Result<()> {
        let net = self.net;
        let l = &net.layers[i];
        let opt = self.opt.masked(l.featmask);
        let s = l.support;
        let mut bottoms = Vec::with_capacity(l.bottoms.len());
        let mut convert = std::time::Duration::ZERO;
        for b in &l.bottoms {
            let m = self.cpu_bottom(*b, remaining, target)?;
            let start = Instant::now();
            bottoms.push(convert::to_cpu_layout(m, s, &opt)?);
            convert += start.elapsed();
        }
        if s.any_packing && s.same_packing && opt.use_packing_layout {
            let start = Instant::now();
            convert::to_same_cpu_packing(&mut bottoms)?;
            convert += start.elapsed();
        }
        let layer = &l.layer;
        let start = Instant::now();
        let tops = threads::run_on(opt.num_threads, || -> Result<Vec<Mat>> {
            Ok(match (s.one_blob_only, s.inplace) {
                (true, true) => {
                    // a copy only where another reader still holds the blob
                    let mut m = owned(single_input(bottoms)?);
                    layer.forward_inplace(&mut m, &opt)?;
                    vec![m]
                }
                (true, false) => vec![layer.forward(single_input(bottoms)?.as_ref(), &opt)?],
                (false, inplace) => {
                    // each a copy only where another reader still holds it
                    let mut blobs: Vec<Mat> = bottoms.into_iter().map(owned).collect();
                    if inplace {
                        layer.forward_many_inplace(&mut blobs, &opt)?;
                        blobs
                    } else {
                        layer.forward_many(&blobs, &opt)?
                    }
                }
            })
        })??;
        self.record.cpu_times.push(CpuTime {
            layer: i,
            convert,
            forward: start.elapsed(),
        });
        check_tops(tops.len(), l.tops.len())?;
        for (t, m) in l.tops.iter().zip(tops) {
            self.cpu[*t] = Some(Arc::new(m));
            self.gpu[*t] = None;
            self.bands[*t] = None;
        }
        Ok(())
    }
}

/// The blob itself where this is its last holder, else a copy (made in parallel).
fn owned(m: Arc<Mat>) -> Mat {
    Arc::try_unwrap(m).unwrap_or_else(|shared| shared.parallel_clone())
}

/// The error for blob `name` not being where the run should have put it.
pub(super) fn missing(name: &str) -> Error {
    BlobError::Missing {
        name: name.to_string(),
    }
    .into()
}
