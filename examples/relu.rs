//! Runs `examples/shaders/relu_pack4.comp` (ncnn's ReLU, compiled by this package's build script)
//! in every variant the device can run, on the default
//! adapter (`WGPU_BACKEND`, `FPSHADER_ADAPTER` and `FPSHADER_PATH` choose), checks each against
//! the CPU and prints the time per dispatch.
//!
//! `cargo run --release --example relu [-- ELEMENTS]`

use std::time::Instant;

use fpshader::specialize::{SpecValue, Specialization};
use fpshader::{Context, ContextOptions, StorageFormat};
use fpshader_tests::example_shaders::Shader;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let elements: u32 = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 1 << 22,
    };
    // a software adapter (lavapipe) too where there is no GPU: this shows a shader run
    let ctx = Context::new(ContextOptions {
        allow_cpu_adapter: true,
        ..Default::default()
    })?;
    println!("device: {}", ctx.describe());
    let module = Shader::ReluPack4.module();
    let w = elements / 4;
    let input: Vec<f32> = (0..elements)
        .map(|i| ((u64::from(i) * 7919) % 2001) as f32 / 500.0 - 2.0)
        .collect();
    println!(
        "{:<12} {:<12} {:>10} {:>10} {:>8}",
        "variant", "ran", "ms/disp", "GB/s", "max err"
    );
    for variant in module.variants.iter() {
        let wanted = variant.options;
        if wanted.contains(fpshader::Opt::Image) || wanted.contains(fpshader::Opt::LocalMemory) {
            continue; // the buffer paths; relu has no local-memory code
        }
        let spec = Specialization {
            values: vec![(0, SpecValue::F32(0.0))],
            local_size: Some([256, 1, 1]),
        };
        let pipeline = match ctx.pipeline(module, wanted, &spec) {
            Ok(p) => p,
            Err(e) => {
                println!("{:<12} skipped: {e}", wanted.name());
                continue;
            }
        };
        let format = StorageFormat::of(pipeline.options, 4);
        let stored = format.decode(&format.encode(&input), input.len());
        let a = ctx.upload(&format.encode(&stored))?;
        let b = ctx.storage_buffer(u64::from(elements) * format.size() as u64)?;
        let push = [w, 1, 1, w];
        let run = |times: usize| -> Result<f64, fpshader::Error> {
            let mut rec = ctx.recorder();
            for _ in 0..times {
                rec.dispatch(&pipeline, &[&a, &b], &push, [w, 1, 1])?;
            }
            let start = Instant::now();
            rec.submit_and_wait()?;
            Ok(start.elapsed().as_secs_f64() / times as f64)
        };
        run(1)?; // first dispatch compiles
        let secs = run(10)?;
        let got = format.decode(&ctx.download(&b)?, stored.len());
        let err = got
            .iter()
            .zip(&stored)
            .map(|(g, x)| (g - x.max(0.0)).abs())
            .fold(0.0f32, f32::max);
        let bytes = 2.0 * f64::from(elements) * format.size() as f64;
        println!(
            "{:<12} {:<12} {:>10.3} {:>10.2} {:>8.4}",
            wanted.name(),
            pipeline.options.name(),
            secs * 1e3,
            bytes / secs / 1e9,
            err
        );
        if err > 0.01 {
            return Err(format!("{} differs from the CPU by {err}", wanted.name()).into());
        }
    }
    Ok(())
}
