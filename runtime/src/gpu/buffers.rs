//! A context's storage buffers: uploads, the pool recorded work allocates from, and reading
//! buffers back.

use std::sync::atomic::Ordering;

use crate::error::{Error, Result};
use crate::gpu::context::Context;
use crate::gpu::pool::{DeviceBuffer, MemoryStats};
use crate::gpu::tickets::{self, Taker};

/// Storage buffer sizes round up to 16 bytes, so flat shaders (16 bytes per invocation) cover
/// any mat's buffer whole.
fn padded_size(bytes: u64) -> u64 {
    bytes.div_ceil(16).max(1) * 16
}

impl Context {
    /// A storage buffer holding `bytes` (also usable as copy source and destination); it
    /// joins the pool when dropped. The queue writes it before the next submission, so a
    /// pooled buffer is reused only once every chunk that may still read it is submitted;
    /// else it is a new one.
    pub fn upload(&self, bytes: &[u8]) -> Result<DeviceBuffer> {
        self.upload_padded(bytes, bytes.len() as u64)
    }

    /// [`Context::upload`] into a buffer of at least `size` bytes, zeros after `bytes`: the
    /// bytes are copied once, straight into the queue's staging memory.
    pub(crate) fn upload_padded(&self, bytes: &[u8], size: u64) -> Result<DeviceBuffer> {
        let n = bytes.len();
        self.upload_with(size.max(n as u64), |mut view| {
            view.slice(..n).copy_from_slice(bytes);
            view.slice(n..).fill(0);
        })
    }

    /// A storage buffer of at least `size` bytes whose contents `write` puts straight into
    /// the queue's staging memory (the view covers the whole padded size: `write` writes all
    /// of it), under the rules of [`Context::upload`].
    pub(crate) fn upload_with(
        &self,
        size: u64,
        write: impl FnOnce(wgpu::WriteOnly<'_, [u8]>),
    ) -> Result<DeviceBuffer> {
        let started = std::time::Instant::now();
        let size = padded_size(size);
        let buffer = match self.pool.take(size, Taker::Queue) {
            Some(b) => b,
            None => self.new_storage_buffer(size)?,
        };
        let staged =
            wgpu::BufferSize::new(size).and_then(|s| self.queue.write_buffer_with(&buffer, 0, s));
        if let Some(mut view) = staged {
            write(view.slice(..));
        }
        self.stats.add(&self.stats.upload_ns, started.elapsed());
        self.stats.uploads.fetch_add(1, Ordering::Relaxed);
        self.stats.upload_bytes.fetch_add(size, Ordering::Relaxed);
        Ok(DeviceBuffer::pooled(buffer, &self.pool))
    }

    /// An uninitialized storage buffer of `size` bytes (rounded up to 16) for recorded work to
    /// write: a pooled one of that size when one is free, else a new one; it goes back to the
    /// pool when its last handle drops. The work is that of this thread's newest recorder:
    /// a pooled buffer that another recorder's unsubmitted chunk may still read is not handed
    /// out. Data written through the queue needs [`Context::upload`] instead.
    ///
    /// A size past the device's `max_buffer_size` or the context's memory budget, or one the
    /// driver cannot hold, is an error ([`Error::BeyondLimit`], [`Error::OutOfMemory`]).
    pub fn storage_buffer(&self, size: u64) -> Result<DeviceBuffer> {
        let size = padded_size(size);
        self.pool.count_request();
        let buffer = match self.pool.take(size, tickets::current_taker()) {
            Some(b) => b,
            None => self.new_storage_buffer(size)?,
        };
        Ok(DeviceBuffer::pooled(buffer, &self.pool))
    }

    fn new_storage_buffer(&self, size: u64) -> Result<wgpu::Buffer> {
        let buffer = self.create_buffer_checked(&wgpu::BufferDescriptor {
            label: Some("fpshader storage"),
            size: padded_size(size),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })?;
        self.stats.new_buffers.fetch_add(1, Ordering::Relaxed);
        self.pool.count_new(buffer.size());
        Ok(buffer)
    }

    /// Frees every pooled buffer (those no mat holds).
    pub fn trim_pool(&self) {
        self.pool.clear();
    }

    /// Device memory of storage buffers: allocated, in use, and the peak in use.
    pub fn memory_stats(&self) -> MemoryStats {
        self.pool.memory()
    }

    /// Starts [`MemoryStats::peak_live`] over from what is in use now.
    pub fn reset_peak_memory(&self) {
        self.pool.reset_peak();
    }

    /// Bytes held by pooled buffers that no mat holds.
    pub fn pooled_bytes(&self) -> u64 {
        self.pool.bytes()
    }

    /// How many storage buffers recorded work has asked for so far (pooled or new): what a
    /// run allocates, copies included.
    pub fn storage_requests(&self) -> u64 {
        self.pool.requests()
    }

    /// Reads a buffer back (waits for the GPU).
    pub fn download(&self, buffer: &wgpu::Buffer) -> Result<Vec<u8>> {
        let mut rec = self.recorder();
        let staging = rec.record_readback(buffer);
        rec.submit_and_wait()?;
        self.read_back_with(staging, <[u8]>::to_vec)
    }

    /// [`Context::read_mapped_with`] on a buffer of [`Recorder::record_readback`], which is
    /// then kept for the next download of its size.
    pub(crate) fn read_back_with<T>(
        &self,
        staging: wgpu::Buffer,
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<T> {
        let data = self.read_mapped_with(&staging, read)?;
        self.recycle_readback(staging);
        Ok(data)
    }

    /// Keeps a readback buffer that was read (and unmapped) for the next download of its
    /// size; the few most recent are kept.
    fn recycle_readback(&self, staging: wgpu::Buffer) {
        const KEPT: usize = 8;
        if let Ok(mut free) = self.readbacks.lock() {
            if free.len() == KEPT {
                free.remove(0);
            }
            free.push(staging);
        }
    }

    /// The bytes of a readback buffer whose copy has completed (see
    /// [`Recorder::record_readback`](crate::gpu::Recorder::record_readback)).
    pub fn read_mapped(&self, staging: &wgpu::Buffer) -> Result<Vec<u8>> {
        self.read_mapped_with(staging, <[u8]>::to_vec)
    }

    /// Maps `staging` (after the work writing it) and hands its bytes to `read`: one copy out
    /// of the mapping where `read` decodes straight into what it returns.
    pub fn read_mapped_with<T>(
        &self,
        staging: &wgpu::Buffer,
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<T> {
        let started = std::time::Instant::now();
        let (tx, rx) = std::sync::mpsc::channel();
        staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.wait_for(None, "a read-back")?;
        let read_back = |source| Error::ReadBack {
            what: "a buffer",
            source,
        };
        // the callback is dropped unsent only where the device is gone
        rx.recv()
            .map_err(|_| read_back(wgpu::BufferAsyncError))?
            .map_err(read_back)?;
        let data = read(
            &staging
                .slice(..)
                .get_mapped_range()
                .map_err(|_| read_back(wgpu::BufferAsyncError))?,
        );
        staging.unmap();
        self.stats.add(&self.stats.read_ns, started.elapsed());
        Ok(data)
    }
}
