//! Recycled fp32 buffers for blobs and layer scratch, as ncnn's pool allocator does for its
//! blobs: glibc hands large blocks back to the kernel on free, so a net that allocates each
//! layer's output afresh page-faults through every one of them on every run (a third of
//! mobilenet_v2's CPU time on 2 threads). Buffers of at least [`MIN_BYTES`] that a mat or a
//! scratch buffer drops are kept here, up to [`MAX_POOLED_BYTES`] in all, and handed to the
//! next request they fit.

use std::sync::Mutex;

/// Smaller buffers go straight back to the system allocator, which serves them cheaply.
const MIN_BYTES: usize = 64 << 10;
/// The most bytes the pool keeps; past it the oldest buffers are released.
const MAX_POOLED_BYTES: usize = 256 << 20;

static FREE: Mutex<Vec<Vec<f32>>> = Mutex::new(Vec::new());

/// `n` zeros, in a recycled buffer where one of at most twice the size is free.
pub(crate) fn zeros(n: usize) -> Vec<f32> {
    recycled(n, true)
}

/// `n` values of no particular content (a recycled buffer's old values, zeros past them; NaN in
/// debug builds): for scratch that is written before it is read, which need not pay for zeroing.
pub(crate) fn any(n: usize) -> Vec<f32> {
    recycled(n, false)
}

/// `n` values in a recycled buffer where one fits (its old values kept unless `zero`), else a
/// fresh buffer of zeros.
fn recycled(n: usize, zero: bool) -> Vec<f32> {
    if n * 4 >= MIN_BYTES
        && let Some(mut v) = take(n)
    {
        if zero {
            v.clear();
        }
        v.resize(n, 0.0);
        if !zero {
            poison(&mut v);
        }
        return v;
    }
    let mut v = vec![0.0; n];
    if !zero {
        poison(&mut v);
    }
    v
}

/// `n` values of no particular content ([`any`]) in a recycled buffer, if one fits: for memory
/// that is otherwise better made fresh in parallel (a large download's landing place).
pub(crate) fn reused(n: usize) -> Option<Vec<f32>> {
    let mut v = (n * 4 >= MIN_BYTES).then(|| take(n)).flatten()?;
    v.resize(n, 0.0);
    poison(&mut v);
    Some(v)
}

/// In debug builds, NaN in every value of a buffer handed out unzeroed: a layer that reads a
/// value it did not write then fails every test that runs it, where with the pool's recycled
/// values it failed only under load (LRN summed into another test's old blob that way).
#[inline]
fn poison(v: &mut [f32]) {
    if cfg!(debug_assertions) {
        v.fill(f32::NAN);
    }
}

/// The smallest free buffer holding `n` values and at most `2n`.
fn take(n: usize) -> Option<Vec<f32>> {
    let mut free = FREE.lock().ok()?;
    let (at, _) = free
        .iter()
        .enumerate()
        .filter(|(_, v)| (n..=2 * n).contains(&v.capacity()))
        .min_by_key(|(_, v)| v.capacity())?;
    Some(free.swap_remove(at))
}

/// Keeps `v`'s memory for a later [`zeros`] (or frees it when small or the pool is full).
pub(crate) fn give(v: Vec<f32>) {
    let bytes = v.capacity() * 4;
    if !(MIN_BYTES..=MAX_POOLED_BYTES).contains(&bytes) {
        return;
    }
    let Ok(mut free) = FREE.lock() else {
        return;
    };
    let mut total = bytes + free.iter().map(|b| b.capacity() * 4).sum::<usize>();
    while total > MAX_POOLED_BYTES && !free.is_empty() {
        total -= free.remove(0).capacity() * 4;
    }
    free.push(v);
}

/// Releases every buffer the pool keeps (ncnn's `PoolAllocator::clear`): for a program that
/// is done running nets and wants the memory back now.
pub fn release_pooled_buffers() {
    if let Ok(mut free) = FREE.lock() {
        free.clear();
    }
}

/// The bytes the pool keeps now.
pub fn pooled_bytes() -> usize {
    FREE.lock()
        .map(|f| f.iter().map(|b| b.capacity() * 4).sum())
        .unwrap_or(0)
}

/// A scratch buffer of zeros from the pool, given back when dropped.
pub(crate) struct Scratch(Vec<f32>);

impl Scratch {
    /// `n` zeros.
    pub(crate) fn zeros(n: usize) -> Self {
        Scratch(zeros(n))
    }

    /// `n` values of no particular content ([`any`]).
    pub(crate) fn any(n: usize) -> Self {
        Scratch(any(n))
    }
}

impl std::ops::Deref for Scratch {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        &self.0
    }
}

impl std::ops::DerefMut for Scratch {
    fn deref_mut(&mut self) -> &mut [f32] {
        &mut self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        give(std::mem::take(&mut self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_buffer_serves_the_next_request_zeroed() {
        let n = MIN_BYTES; // 4·MIN_BYTES bytes: pooled
        let mut a = Scratch::zeros(n);
        a.fill(7.0);
        let at = a.as_ptr();
        drop(a);
        // other tests share the pool: find ours among the free buffers by address
        let b = Scratch::zeros(n - 1);
        assert!(b.iter().all(|v| *v == 0.0));
        assert_eq!(b.len(), n - 1);
        let reused = b.as_ptr() == at;
        drop(b);
        assert!(reused || pooled_bytes() > 0);
        // small buffers are not kept
        let small = Scratch::zeros(16);
        let before = pooled_bytes();
        drop(small);
        assert_eq!(pooled_bytes(), before);
    }
}
