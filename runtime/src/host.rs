//! The host's memory: what an allocation of a mat may take before it is refused with
//! [`Error::OutOfMemory`] instead of the allocator aborting the process (or the system
//! thrashing) on a shape nobody can hold.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Memory, Result};

/// A cap below the system's figure ([`set_budget`]); 0: none.
static BUDGET: AtomicU64 = AtomicU64::new(0);

/// Caps what [`available`] reports for this process (`None`: the system's figure alone): a
/// server sharing a machine, or a fuzzer that must not have a mutated size allocate the host.
pub fn set_budget(bytes: Option<u64>) {
    BUDGET.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// Allocations below this are never checked: reading the system's figure costs a file read.
const UNCHECKED: u64 = 64 << 20;

/// Bytes the host has available now: `MemAvailable` of `/proc/meminfo` on Linux, else no
/// limit known; at most the budget [`set_budget`] set.
pub fn available() -> u64 {
    let cap = match BUDGET.load(Ordering::Relaxed) {
        0 => u64::MAX,
        cap => cap,
    };
    system_available().min(cap)
}

fn system_available() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kib.checked_mul(1024)
        })
        .unwrap_or(u64::MAX)
}

/// The number of fp32 values of `shape`, if their product is a number and the host can hold
/// them: what a layer checks before it allocates an output of its own.
pub(crate) fn values(shape: &[usize]) -> Result<usize> {
    let n = (shape.iter()).try_fold(1usize, |n, &e| n.checked_mul(e));
    // `ok_or_else`: the figure is a file read, made only for the error (read on every call,
    // it was a tenth of the host's time recording a small net)
    let bytes = (n.and_then(|n| n.checked_mul(4))).ok_or_else(|| Error::OutOfMemory {
        memory: Memory::Host,
        needed: u64::MAX,
        available: available(),
    })?;
    check(bytes as u64)?;
    Ok(bytes / 4)
}

/// `Ok` if `bytes` may be allocated on the host now.
pub fn check(bytes: u64) -> Result<()> {
    let cap = BUDGET.load(Ordering::Relaxed);
    if cap != 0 && bytes > cap {
        return Err(Error::OutOfMemory {
            memory: Memory::Host,
            needed: bytes,
            available: cap,
        });
    }
    if bytes < UNCHECKED {
        return Ok(());
    }
    let available = available();
    if bytes > available {
        return Err(Error::OutOfMemory {
            memory: Memory::Host,
            needed: bytes,
            available,
        });
    }
    Ok(())
}
