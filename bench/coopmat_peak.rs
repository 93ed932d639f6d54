//! The cooperative-matrix multiply-add's own rate on this device (`bench/probes/
//! coopmat_peak.comp`): 16 × 16 × 16 fp16 products into fp32 or fp16 accumulators, by
//! accumulators per subgroup and subgroups per workgroup, nothing else in the loop. The
//! ceiling the GEMM shaders (`gemm_cm`, `convolution_gemm_cm`) are measured against.
//!
//! `cargo run --release --example coopmat_peak [-- WORKGROUPS [REPEATS]]` (defaults 4224, 20).
//! One line per measurement: `coopmat KIND ACCUMULATORS local L TFLOPs X`.

use fpshader::meta::ShaderModule;
use fpshader::specialize::Specialization;
use fpshader::{ContextOptions, OptionSet, ShaderPath, shader};

macro_rules! peak {
    ($acc:literal, $fa:literal, $fb:literal) => {
        (
            shader!(
                "bench/probes/coopmat_peak.comp",
                define: [("ACC_T", $acc), ("FA", $fa), ("FB", $fb)],
                target_env: "vulkan1.3",
            ),
            1.0,
        )
    };
    ($acc:literal, $fa:literal, $fb:literal, unroll) => {
        (
            shader!(
                "bench/probes/coopmat_peak.comp",
                define: [("ACC_T", $acc), ("FA", $fa), ("FB", $fb), ("UNROLL", "[[unroll]]")],
                target_env: "vulkan1.3",
            ),
            1.0,
        )
    };
}

/// Fragments from shared memory every step (`coopmat_shared.comp`): 2 steps of 16 per
/// iteration.
macro_rules! shared {
    ($elem:literal, $per:literal, $fa:literal, $fb:literal) => {
        (
            shader!(
                "bench/probes/coopmat_shared.comp",
                define: [("ELEM", $elem), ("PER_ELEM", $per), ("FA", $fa), ("FB", $fb)],
                target_env: "vulkan1.3",
            ),
            2.0,
        )
    };
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let groups: u32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(4224);
    let repeats: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(20);
    let ctx = fpshader::Context::new(ContextOptions {
        path: Some(ShaderPath::Passthrough),
        ..ContextOptions::default()
    })?;
    println!("device {}", ctx.describe().replace(' ', "_"));
    // (name, accumulators per subgroup, (shader, multiply-add steps per iteration))
    let probes: [(&str, u32, (&'static ShaderModule, f64)); 20] = [
        ("shared_uvec4", 8, shared!("uvec4", "8", "4", "2")),
        ("shared_f16vec4", 8, shared!("f16vec4", "4", "4", "2")),
        ("shared_half", 8, shared!("float16_t", "1", "4", "2")),
        ("shared_uvec4", 4, shared!("uvec4", "8", "2", "2")),
        ("shared_f16vec4", 4, shared!("f16vec4", "4", "2", "2")),
        ("shared_half", 4, shared!("float16_t", "1", "2", "2")),
        ("f32", 1, peak!("float", "1", "1")),
        ("f32", 4, peak!("float", "2", "2")),
        ("f32", 8, peak!("float", "4", "2")),
        ("f32", 16, peak!("float", "4", "4")),
        ("f16", 1, peak!("float16_t", "1", "1")),
        ("f16", 4, peak!("float16_t", "2", "2")),
        ("f16", 8, peak!("float16_t", "4", "2")),
        ("f16", 16, peak!("float16_t", "4", "4")),
        ("f32_unroll", 4, peak!("float", "2", "2", unroll)),
        ("f32_unroll", 8, peak!("float", "4", "2", unroll)),
        ("f32_unroll", 16, peak!("float", "4", "4", unroll)),
        ("f16_unroll", 4, peak!("float16_t", "2", "2", unroll)),
        ("f16_unroll", 8, peak!("float16_t", "4", "2", unroll)),
        ("f16_unroll", 16, peak!("float16_t", "4", "4", unroll)),
    ];
    let iters = 2048u32;
    let a = ctx.storage_buffer(16 * 1024)?;
    for (acc, frags, (module, steps)) in probes {
        for local in [128u32, 256] {
            let spec = Specialization {
                values: vec![],
                local_size: Some([local, 1, 1]),
            };
            let pipeline = match ctx.pipeline(module, OptionSet::FP32, &spec) {
                Ok(p) => p,
                Err(e) => {
                    println!("coopmat {acc} {frags} local {local} error {e}");
                    continue;
                }
            };
            let subgroups = u64::from(groups) * u64::from(local / 32);
            let c = ctx.storage_buffer(subgroups * u64::from(frags) * 1024)?;
            // best of runs over at least a second: the SM clock rises only under load
            let start = std::time::Instant::now();
            let mut secs = f64::MAX;
            while start.elapsed().as_secs_f64() < 1.0 {
                secs = secs.min(fpshader_tests::seconds_per_dispatch(
                    &ctx,
                    &pipeline,
                    &[&a, &c],
                    &[iters],
                    [groups * local, 1, 1],
                    repeats,
                )?);
            }
            let flops =
                steps * subgroups as f64 * f64::from(frags) * f64::from(iters) * 2.0 * 4096.0;
            println!(
                "coopmat {acc} {frags} local {local} TFLOPs {:.1}",
                flops / secs / 1e12
            );
        }
    }
    Ok(())
}
