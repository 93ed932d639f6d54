//! Uploads recorded into a submission through staging buffers the context keeps mapped.
//!
//! `Queue::write_buffer_with` stages every write in a staging buffer of its own, made for it and
//! freed after it: on the NVIDIA driver the host's first writes into a fresh mapping fault its
//! pages in (a 300×300 RGB input took 0.7 ms to write on an H200 host, a third of an SSD's
//! run), and the write waits on the queue's lock while the submission thread submits. An input
//! uploaded each run goes instead through a staging buffer of the context's, mapped once and
//! written again run after run, and a copy recorded into the run's own submission.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use std::time::Instant;

use crate::error::{DeviceError, Result};
use crate::gpu::buffers::padded_size;
use crate::gpu::context::Context;
use crate::gpu::pool::DeviceBuffer;
use crate::gpu::recorder::Recorder;

/// The context's staging buffers: those mapped for writing and free, and those being mapped
/// again after their copies ran.
#[derive(Default)]
pub(crate) struct StagingBuffers(Arc<Mutex<Buffers>>);

#[derive(Default)]
struct Buffers {
    free: Vec<wgpu::Buffer>,
    /// Buffers waiting for their mapping, by number: the callback names its buffer by number
    /// (holding the buffer itself there would make the buffer own its own handle).
    mapping: Vec<(u64, wgpu::Buffer)>,
    numbered: u64,
}

impl StagingBuffers {
    /// Mapped buffers kept free: a few inputs of a few sizes.
    const KEPT: usize = 8;

    /// A staging buffer of `size` bytes mapped for writing, and its mapping: a free one of
    /// that size, else a new one, mapped at creation.
    pub(crate) fn take(
        &self,
        ctx: &Context,
        size: u64,
    ) -> Result<(wgpu::Buffer, wgpu::BufferViewMut)> {
        let free = {
            let mut buffers = self.lock();
            let at = buffers.free.iter().position(|b| b.size() == size);
            at.map(|at| buffers.free.swap_remove(at))
        };
        // a free buffer is mapped (its callback said so); one that is not is dropped
        if let Some(buffer) = free
            && let Ok(view) = buffer.get_mapped_range_mut(..)
        {
            return Ok((buffer, view));
        }
        let buffer = ctx.create_buffer_checked(&wgpu::BufferDescriptor {
            label: Some("fpshader upload"),
            size,
            usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: true,
        })?;
        ctx.stats.new_buffers.fetch_add(1, Ordering::Relaxed);
        let view = buffer
            .get_mapped_range_mut(..)
            .map_err(|e| DeviceError::Failed {
                what: "mapping an upload's staging buffer",
                message: e.to_string(),
            })?;
        Ok((buffer, view))
    }

    /// Maps `buffers` (whose copies were submitted) for writing again: each joins the free
    /// ones once the device is done with it and a poll reports it mapped.
    pub(crate) fn recycle(&self, buffers: Vec<wgpu::Buffer>) {
        for buffer in buffers {
            let number = {
                let mut all = self.lock();
                all.numbered += 1;
                let number = all.numbered;
                all.mapping.push((number, buffer.clone()));
                number
            };
            let shared: Weak<Mutex<Buffers>> = Arc::downgrade(&self.0);
            buffer.map_async(wgpu::MapMode::Write, .., move |mapped| {
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                let mut all = shared.lock().unwrap_or_else(PoisonError::into_inner);
                let Some(at) = all.mapping.iter().position(|(n, _)| *n == number) else {
                    return;
                };
                let (_, buffer) = all.mapping.swap_remove(at);
                if mapped.is_ok() && all.free.len() < Self::KEPT {
                    all.free.push(buffer);
                }
            });
        }
    }

    fn lock(&self) -> MutexGuard<'_, Buffers> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Context {
    /// Maps the staging buffers of a recording that was waited for again, and polls once so
    /// that they are free for the next run's uploads (the device is done with them).
    pub(super) fn recycle_staging(&self, staged: Vec<wgpu::Buffer>) {
        if staged.is_empty() {
            return;
        }
        self.staging.recycle(staged);
        // a failed poll leaves them mapping: the next wait's poll finishes them
        let _ = self.device.poll(wgpu::PollType::Poll);
    }
}

impl Recorder<'_> {
    /// A storage buffer of at least `size` bytes (rounded up to 16) holding what `write`
    /// writes (the view covers the whole rounded size: `write` writes all of it), copied in
    /// from one of the context's staging buffers at this point of the recording: an upload for
    /// work recorded after it, under the pool's rules for recorded work
    /// ([`Context::storage_buffer`]).
    pub fn upload_with(
        &mut self,
        size: u64,
        write: impl FnOnce(wgpu::WriteOnly<'_, [u8]>),
    ) -> Result<DeviceBuffer> {
        let started = Instant::now();
        let ctx = self.ctx;
        let size = padded_size(size);
        let target = ctx.storage_buffer(size)?;
        let (staging, mut view) = ctx.staging.take(ctx, size)?;
        write(view.slice(..));
        drop(view);
        staging.unmap();
        self.copy_buffer_range((&staging, 0), (target.raw(), 0), size);
        self.staged.push(staging);
        ctx.stats.add(&ctx.stats.upload_ns, started.elapsed());
        Ok(target)
    }
}
