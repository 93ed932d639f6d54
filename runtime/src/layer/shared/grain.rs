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

/// The pools from which the grains are finer (tasks of half the values, GEMM threads for a
/// quarter of the multiply-adds): a large pool's threads are there to be used, and waiting on
/// idle ones costs more than the extra tasks. Measured on a 16-core host
/// (the zoo, best of three rounds): at 16 threads every model faster (squeezenet 4.28 → 3.31
/// ms, mnasnet 4.58 → 3.62, resnet50 16.5 → 14.7), at 2 threads mixed (resnet18 20.5 → 26.6,
/// efficientnet_b0 14.5 → 12.4).
const FINE_POOL: usize = 8;

/// The grains in the current pool: `(values per task, multiply-adds per GEMM thread)`.
fn grains() -> (usize, usize) {
    if rayon::current_num_threads() >= FINE_POOL {
        (GRAIN / 2, GEMM_GRAIN / 4)
    } else {
        (GRAIN, GEMM_GRAIN)
    }
}

/// The fewest items a task takes when each holds `work` (rayon's `with_min_len`).
pub(crate) fn min_items(work: usize) -> usize {
    grains().0.div_ceil(work.max(1))
}

/// The threads a GEMM of `macs` multiply-adds runs on, out of the current pool's.
pub(crate) fn gemm_threads(macs: usize) -> usize {
    (macs / grains().1).clamp(1, rayon::current_num_threads())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_work_stays_together_and_big_work_splits() {
        let pool = |n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
        };
        pool(4).install(|| {
            assert_eq!(min_items(1), GRAIN);
            assert_eq!(min_items(GRAIN * 4), 1);
            assert_eq!(min_items(0), GRAIN);
            assert_eq!(gemm_threads(10), 1);
            assert_eq!(gemm_threads(GEMM_GRAIN * 2), 2);
            assert_eq!(gemm_threads(usize::MAX), 4);
        });
        // a large pool splits finer
        pool(16).install(|| {
            assert_eq!(min_items(1), GRAIN / 2);
            assert_eq!(gemm_threads(GEMM_GRAIN * 2), 8);
            assert_eq!(gemm_threads(usize::MAX), 16);
        });
    }
}
