//! How finely the CPU layers' parallel loops split: by the work each item holds, so that a
//! small layer runs on fewer threads (on one, below a grain) and sixteen threads are not woken
//! for a 7×7 map, while a big one still spreads over all of them.

/// Values (or multiply-adds) below which a task is not split further: about ten microseconds
/// of work, the cost of waking and joining a thread. Elementwise layers cut their values into
/// chunks of this size.
pub(crate) const GRAIN: usize = 1 << 15;

/// Multiply-adds per GEMM thread: a GEMM below this runs on one thread, above it on one
/// thread per this much work, up to the pool's.
const GEMM_GRAIN: usize = 1 << 20;

/// The fewest items a task takes when each holds `work` (rayon's `with_min_len`).
pub(crate) fn min_items(work: usize) -> usize {
    GRAIN.div_ceil(work.max(1))
}

/// The threads a GEMM of `macs` multiply-adds runs on, out of the current pool's.
pub(crate) fn gemm_threads(macs: usize) -> usize {
    (macs / GEMM_GRAIN).clamp(1, rayon::current_num_threads())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_work_stays_together_and_big_work_splits() {
        assert_eq!(min_items(1), GRAIN);
        assert_eq!(min_items(GRAIN * 4), 1);
        assert_eq!(min_items(0), GRAIN);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        pool.install(|| {
            assert_eq!(gemm_threads(10), 1);
            assert_eq!(gemm_threads(GEMM_GRAIN * 2), 2);
            assert_eq!(gemm_threads(usize::MAX), 4);
        });
    }
}
