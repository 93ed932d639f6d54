//! `fpshader bench --extractors N`: a server's case, N threads extracting from one net at
//! once, each with its own extractor; extracts per second over all of them.

use std::time::Instant;

use fpshader::net::{Extractor, Net};

use crate::CliError;

/// `threads` threads × `loops` extracts of `output` on `net`; extracts per second, and the
/// slowest thread's mean time per extract in ms.
pub fn throughput(
    net: &Net,
    feed: &(dyn Fn(&mut Extractor<'_>) -> Result<(), CliError> + Sync),
    output: &str,
    threads: usize,
    loops: usize,
) -> Result<(f64, f64), CliError> {
    let loops = loops.max(1);
    let started = Instant::now();
    let per_thread = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                s.spawn(move || -> Result<f64, CliError> {
                    let t = Instant::now();
                    for _ in 0..loops {
                        let mut ex = net.create_extractor()?;
                        feed(&mut ex)?;
                        ex.extract(output)?;
                    }
                    Ok(t.elapsed().as_secs_f64())
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .map_err(|_| CliError::Usage("an extracting thread panicked".into()))?
            })
            .collect::<Result<Vec<f64>, CliError>>()
    })?;
    let wall = started.elapsed().as_secs_f64();
    let slowest = per_thread.iter().copied().fold(0.0, f64::max);
    Ok((
        (threads.max(1) * loops) as f64 / wall,
        slowest / loops as f64 * 1e3,
    ))
}
