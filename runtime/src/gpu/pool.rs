//! Storage buffers that go back to their context's pool when the last handle drops (ncnn's
//! blob allocator): a net's second run allocates nothing, and neither does a user who drops
//! the mats a run handed out.

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::gpu::tickets::{Taker, Tickets};

/// Free storage buffers by size, each size's in a fixed order. A request takes the first of
/// the smallest size that holds it, up to twice its size: blobs of other sizes reuse what
/// earlier layers freed (exact sizes only kept up to 2.5 times the largest live set in use on
/// the zoo), and a net's runs, which free and request in the same sequence, get the same
/// buffers for the same blobs every time and find their bind groups cached. (A stack would
/// hand them out permuted from run to run.) A free buffer carries the stamp of its release,
/// which says which recorded work may still read it ([`Tickets`]).
#[derive(Debug, Default)]
pub(crate) struct BufferPool {
    free: Mutex<Free>,
    requests: AtomicU64,
    /// Bytes of the pool's buffers in use (held by a mat or weights) and free, and the most
    /// ever in use since the last reset: the pool's overhead is allocated over peak.
    live: AtomicU64,
    peak: AtomicU64,
    allocated: AtomicU64,
}

/// A context's device memory for storage buffers ([`crate::Context::memory_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Bytes of every storage buffer the context holds: in use or free in its pool.
    pub allocated: u64,
    /// Bytes in use now: held by mats, weights and recorded work's inputs.
    pub live: u64,
    /// The most bytes in use at once since [`crate::Context::reset_peak_memory`].
    pub peak_live: u64,
}

/// The free buffers by size, each with its release stamp, and the chunk tickets under the
/// same lock: a release's stamp and a take's check see one state.
#[derive(Debug, Default)]
struct Free {
    buffers: BTreeMap<u64, BTreeMap<wgpu::Buffer, u64>>,
    tickets: Tickets,
}

impl BufferPool {
    /// Runs `f` on the chunk tickets.
    pub(crate) fn tickets<T>(&self, f: impl FnOnce(&mut Tickets) -> T) -> Option<T> {
        self.free.lock().ok().map(|mut free| f(&mut free.tickets))
    }

    /// Counts one request for a storage buffer.
    pub(crate) fn count_request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Storage buffers requested so far.
    pub(crate) fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Counts a new buffer of `size` bytes.
    pub(crate) fn count_new(&self, size: u64) {
        self.allocated.fetch_add(size, Ordering::Relaxed);
    }

    /// What [`MemoryStats`] reports.
    pub(crate) fn memory(&self) -> MemoryStats {
        MemoryStats {
            allocated: self.allocated.load(Ordering::Relaxed),
            live: self.live.load(Ordering::Relaxed),
            peak_live: self.peak.load(Ordering::Relaxed),
        }
    }

    /// Starts the peak over from what is in use now.
    pub(crate) fn reset_peak(&self) {
        self.peak
            .store(self.live.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    fn in_use(&self, size: u64) {
        let now = self.live.fetch_add(size, Ordering::Relaxed) + size;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }

    /// A free buffer of at least `size` bytes and at most twice that that `taker` may use now,
    /// if one is pooled: the first of the smallest such size.
    #[allow(clippy::mutable_key_type)] // a buffer orders by its id, which its state leaves alone
    pub(crate) fn take(&self, size: u64, taker: Taker) -> Option<wgpu::Buffer> {
        let mut guard = self.free.lock().ok()?;
        let Free { buffers, tickets } = &mut *guard;
        let (found, buffer) =
            (buffers.range(size..=size.saturating_mul(2))).find_map(|(&s, set)| {
                let (b, _) = set
                    .iter()
                    .find(|(_, tag)| tickets.clear_for(taker, **tag))?;
                Some((s, b.clone()))
            })?;
        let set = buffers.get_mut(&found)?;
        set.remove(&buffer);
        if set.is_empty() {
            buffers.remove(&found);
        }
        Some(buffer)
    }

    fn give(&self, buffer: wgpu::Buffer) {
        self.live.fetch_sub(buffer.size(), Ordering::Relaxed);
        if let Ok(mut free) = self.free.lock() {
            let tag = free.tickets.stamp();
            free.buffers
                .entry(buffer.size())
                .or_default()
                .insert(buffer, tag);
        }
    }

    /// Frees every pooled buffer.
    pub(crate) fn clear(&self) {
        if let Ok(mut free) = self.free.lock() {
            self.allocated
                .fetch_sub(free_bytes(&free.buffers), Ordering::Relaxed);
            free.buffers.clear();
        }
    }

    /// Bytes held by free buffers.
    pub(crate) fn bytes(&self) -> u64 {
        (self.free.lock())
            .map(|free| free_bytes(&free.buffers))
            .unwrap_or(0)
    }
}

fn free_bytes(free: &BTreeMap<u64, BTreeMap<wgpu::Buffer, u64>>) -> u64 {
    free.iter().map(|(size, v)| size * v.len() as u64).sum()
}

/// A storage buffer shared by the mats that hold it; the last one dropped returns it to the
/// pool of the context that made it. Safe because the queue runs recorded work in submission
/// order, and a pooled buffer is handed out only once the work that may still read it is
/// handed over (to a recorder) or submitted (to a queue write): its tickets.
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
        pool.in_use(buffer.size());
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
