//! The host's memory: what an allocation of a mat may take before it is refused with
//! [`Error::OutOfMemory`] instead of the allocator aborting the process (or the system
//! thrashing) on a shape nobody can hold.

use crate::error::{Error, Memory, Result};

/// Allocations below this are never checked: reading the system's figure costs a file read.
const UNCHECKED: u64 = 64 << 20;

/// Bytes the host has available now: `MemAvailable` of `/proc/meminfo` on Linux, else no
/// limit known.
pub fn available() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kib.checked_mul(1024)
        })
        .unwrap_or(u64::MAX)
}

/// `Ok` if `bytes` may be allocated on the host now.
pub fn check(bytes: u64) -> Result<()> {
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
