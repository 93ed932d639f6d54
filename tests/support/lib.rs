//! Support for fpshader's cross-crate integration tests and examples (not published).

/// The shaders of `tests/shaders`, compiled by this package's build script.
pub mod generated {
    include!(concat!(env!("OUT_DIR"), "/fpshader_shaders.rs"));
}

/// The examples' shaders (`examples/shaders`: relu, sigmoid and clip at packs 1/4/8), compiled
/// by this package's build script in every variant the runtime's built-in shaders have.
pub mod example_shaders {
    include!(concat!(env!("OUT_DIR"), "/example_shaders.rs"));
}

/// Seconds per dispatch of `pipeline` over `global`, with `repeats` dispatches recorded into one
/// submission after a two-dispatch warm-up; timed from submission to completion (the benchmark
/// examples' measurement).
pub fn seconds_per_dispatch(
    ctx: &fpshader::Context,
    pipeline: &fpshader::Pipeline,
    buffers: &[&fpshader::wgpu::Buffer],
    push: &[u32],
    global: [u32; 3],
    repeats: usize,
) -> Result<f64, fpshader::Error> {
    let run = |n: usize| -> Result<f64, fpshader::Error> {
        let mut rec = ctx.recorder();
        for _ in 0..n {
            rec.dispatch(pipeline, buffers, push, global)?;
        }
        let start = std::time::Instant::now();
        rec.submit_and_wait()?;
        Ok(start.elapsed().as_secs_f64())
    };
    run(2)?;
    Ok(run(repeats.max(1))? / repeats.max(1) as f64)
}

/// The benchmark examples' command line, `[VALUES [REPEATS]]` (defaults 2^28 and 50), and the
/// default adapter's context, announced on stdout as `device NAME`.
pub fn bench_setup() -> Result<(u64, usize, fpshader::Context), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let values: u64 = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(1 << 28);
    let repeats: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(50);
    Ok((values, repeats, bench_context()?))
}

/// The benchmarks' device, announced on stdout as `device NAME`: the default adapter, a
/// software one (lavapipe) too where there is no GPU, whose figures say little but show that
/// the program runs.
pub fn bench_context() -> fpshader::Result<fpshader::Context> {
    let ctx = fpshader::Context::new(fpshader::ContextOptions {
        allow_cpu_adapter: true,
        ..Default::default()
    })?;
    println!("device {}", ctx.describe().replace(' ', "_"));
    Ok(ctx)
}
