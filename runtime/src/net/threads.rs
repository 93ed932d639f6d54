//! The CPU thread pools a net runs its CPU layers in: one per thread count (`num_threads`, as
//! ncnn's `Option`), made on first use and shared by every net of the process, so a layer's
//! parallel loops and the GEMM use exactly the threads asked for.

use std::sync::{Arc, Mutex};

use rayon::ThreadPool;

use crate::error::{Error, Result};

static POOLS: Mutex<Vec<(usize, Arc<ThreadPool>)>> = Mutex::new(Vec::new());

/// The pool of `threads` threads.
fn pool(threads: usize) -> Result<Arc<ThreadPool>> {
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == threads) {
        return Ok(p.clone());
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("fpshader-cpu-{i}"))
        .build()
        .map_err(|e| Error::Threads {
            threads,
            problem: e.to_string(),
        })?;
    let p = Arc::new(p);
    pools.push((threads, p.clone()));
    Ok(p)
}

/// Runs `work` on `threads` threads (at least one): where it is, when the current pool has that
/// many already (a caller's `ThreadPool::install`, or a layer inside the net's pool).
pub(crate) fn run_on<T: Send>(threads: usize, work: impl FnOnce() -> T + Send) -> Result<T> {
    let threads = threads.max(1);
    if rayon::current_num_threads() == threads {
        return Ok(work());
    }
    Ok(pool(threads)?.install(work))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_sees_the_threads_asked_for() {
        for n in [1, 3, 2, 3] {
            assert_eq!(run_on(n, rayon::current_num_threads).unwrap(), n);
        }
        // nested: a pool of 3 asking for 3 stays where it is
        let inner = run_on(3, || run_on(3, rayon::current_num_threads).unwrap()).unwrap();
        assert_eq!(inner, 3);
    }
}
