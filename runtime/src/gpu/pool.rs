//! Storage buffers that go back to their context's pool when the last handle drops (ncnn's
//! blob allocator): a net's second run allocates nothing, and neither does a user who drops
//! the mats a run handed out.

use std::collections::{BTreeSet, HashMap};
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// Free storage buffers by size, each size's in a fixed order: a request takes the first, so
/// a net's runs, which free and request in the same sequence, get the same buffers for the
/// same blobs every time and find their bind groups cached. (A stack would hand them out
/// permuted from run to run.)
#[derive(Debug, Default)]
pub(crate) struct BufferPool {
    free: Mutex<HashMap<u64, BTreeSet<wgpu::Buffer>>>,
    requests: AtomicU64,
}

impl BufferPool {
    /// Counts one request for a storage buffer.
    pub(crate) fn count_request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Storage buffers requested so far.
    pub(crate) fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// A free buffer of exactly `size` bytes, if one is pooled.
    pub(crate) fn take(&self, size: u64) -> Option<wgpu::Buffer> {
        self.free
            .lock()
            .ok()
            .and_then(|mut free| free.get_mut(&size).and_then(BTreeSet::pop_first))
    }

    fn give(&self, buffer: wgpu::Buffer) {
        if let Ok(mut free) = self.free.lock() {
            free.entry(buffer.size()).or_default().insert(buffer);
        }
    }

    /// Frees every pooled buffer.
    pub(crate) fn clear(&self) {
        if let Ok(mut free) = self.free.lock() {
            free.clear();
        }
    }

    /// Bytes held by free buffers.
    pub(crate) fn bytes(&self) -> u64 {
        self.free
            .lock()
            .map(|free| free.iter().map(|(size, v)| size * v.len() as u64).sum())
            .unwrap_or(0)
    }
}

/// A storage buffer shared by the mats that hold it; the last one dropped returns it to the
/// pool of the context that made it. Safe because only recorded work writes pooled buffers
/// (never the queue directly), and the queue runs recorded work in submission order.
#[derive(Clone, Debug)]
pub struct DeviceBuffer(Arc<Pooled>);

#[derive(Debug)]
struct Pooled {
    buffer: wgpu::Buffer,
    home: Weak<BufferPool>,
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(pool) = self.home.upgrade() {
            pool.give(self.buffer.clone());
        }
    }
}

impl DeviceBuffer {
    pub(crate) fn pooled(buffer: wgpu::Buffer, pool: &Arc<BufferPool>) -> Self {
        DeviceBuffer(Arc::new(Pooled {
            buffer,
            home: Arc::downgrade(pool),
        }))
    }

    /// Whether another handle holds this buffer too (a mat that aliases it).
    pub fn is_shared(&self) -> bool {
        Arc::strong_count(&self.0) > 1
    }

    /// The wgpu buffer.
    pub fn raw(&self) -> &wgpu::Buffer {
        &self.0.buffer
    }
}

impl Deref for DeviceBuffer {
    type Target = wgpu::Buffer;
    fn deref(&self) -> &wgpu::Buffer {
        &self.0.buffer
    }
}
