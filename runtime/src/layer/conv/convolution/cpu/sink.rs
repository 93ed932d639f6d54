//! Where the transforms and kernels store their values: a slice one task owns, or a buffer
//! many share.

/// Where a transform stores its rows of values.
pub(super) trait Sink {
    /// Writes `v` at `at`.
    fn put(&mut self, at: usize, v: &[f32]);
}

impl Sink for &mut [f32] {
    #[inline(always)]
    fn put(&mut self, at: usize, v: &[f32]) {
        self[at..at + v.len()].copy_from_slice(v);
    }
}

/// A whole buffer shared by tasks that each store their own values, interleaved with the
/// others' (the output transform's tiles: disjoint pixels of every channel; the input
/// transform's channels: one row of each element), so no safe split of the slice gives each
/// its part.
#[derive(Clone, Copy)]
pub(super) struct Shared {
    pub(super) ptr: *mut f32,
    pub(super) len: usize,
}

// SAFETY: every task that holds a copy writes only its own values
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Sink for Shared {
    #[inline(always)]
    fn put(&mut self, at: usize, v: &[f32]) {
        assert!(at + v.len() <= self.len, "Winograd buffer index");
        // SAFETY: inside the buffer (checked above), which outlives the tasks; the tasks'
        // values are disjoint, so no two write the same ones and nothing reads them meanwhile
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), self.ptr.add(at), v.len()) }
    }
}

impl Shared {
    /// The whole of `values`, for tasks that each write their own part.
    pub(super) fn of(values: &mut [f32]) -> Shared {
        Shared {
            ptr: values.as_mut_ptr(),
            len: values.len(),
        }
    }

    /// The buffer from value `at` on (at most its length).
    pub(super) fn after(self, at: usize) -> Shared {
        let at = at.min(self.len);
        Shared {
            ptr: self.ptr.wrapping_add(at),
            len: self.len - at,
        }
    }

    /// Values `at..at + len` of the buffer, for the one task that owns them.
    ///
    /// # Safety
    /// No other task reads or writes those values while the slice lives.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn part(&self, at: usize, len: usize) -> &mut [f32] {
        assert!(at + len <= self.len, "shared buffer index");
        // SAFETY: inside the buffer (checked above), which outlives the tasks; the caller's
        // values alone
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(at), len) }
    }
}
