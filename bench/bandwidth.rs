//! Memory bandwidth of elementwise shaders (the built-in binaryop, the examples' relu), and fpshader's per-dispatch overhead
//! next to a raw wgpu dispatch of the same pipeline.
//!
//! `cargo run --release --example bandwidth [-- ELEMENTS [REPEATS]]` (defaults: 2^28 values, 50).
//! For fp32, fp16p, fp16s and fp16sa: relu_pack4 and relu_pack8 (read + write) and binaryop_pack4
//! and binaryop_pack8 add (2 reads + write), shapes given as push constants or as specialization constants, `REPEATS` dispatches in one submission, GB/s counting bytes read and written. Prints one
//! line per measurement, `key value` pairs, for scripts.

use std::time::Instant;

use fpshader::shaders::Shader;
use fpshader::specialize::{SpecValue, Specialization};
use fpshader::{OptionSet, StorageFormat};
use fpshader_tests::example_shaders::Shader as Relu;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (elements, repeats, ctx) = fpshader_tests::bench_setup()?;
    // pack4 elements along x, split over y to stay under the per-dimension group limit
    let vec4s = elements / 4;
    let w = 65536u32.min(vec4s as u32);
    let h = (vec4s / u64::from(w)) as u32;
    let elements = u64::from(w) * u64::from(h) * 4;

    for class in ["", "fp16p", "fp16s", "fp16s,fp16a"] {
        let options = OptionSet::parse(class)?;
        for ((name, shader, inputs, pack), shapes) in [
            ("relu", Relu::ReluPack4.module(), 1, 4),
            ("relu_pack8", Relu::ReluPack8.module(), 1, 8),
            ("add", Shader::BinaryopPack4.module(), 2, 4),
            ("add_pack8", Shader::BinaryopPack8.module(), 2, 8),
        ]
        .into_iter()
        .flat_map(|op| [(op, "push"), (op, "spec")])
        {
            let mut values = vec![(0, SpecValue::F32(0.0))];
            if inputs == 2 {
                values = vec![(0, SpecValue::I32(0))];
            }
            // pack8 covers the same values with half the elements along y
            let h = h * 4 / pack;
            // shapes as specialization constants (ncnn does this when shapes are known) or, all
            // zero, through psc()'s push-constant fallback
            if shapes == "spec" {
                let shape = [w, h, 1, w * h].map(|v| SpecValue::I32(v as i32));
                for (i, v) in shape
                    .iter()
                    .cycle()
                    .take(if inputs == 1 { 4 } else { 12 })
                    .enumerate()
                {
                    values.push((1 + i as u32, *v));
                }
            }
            let spec = Specialization {
                values,
                local_size: Some([256, 1, 1]),
            };
            let pipeline = ctx.pipeline(shader, options, &spec)?;
            let format = StorageFormat::of(pipeline.options, pack as usize);
            let bytes = elements * format.size() as u64;
            let a = ctx.storage_buffer(bytes)?;
            let b = ctx.storage_buffer(bytes)?;
            let out = ctx.storage_buffer(bytes)?;
            let (buffers, push): (Vec<&fpshader::wgpu::Buffer>, Vec<u32>) = if inputs == 1 {
                (vec![&a, &out], vec![w, h, 1, w * h])
            } else {
                let s = [w, h, 1, w * h];
                (vec![&a, &b, &out], [s, s, s].concat())
            };
            let secs = fpshader_tests::seconds_per_dispatch(
                &ctx,
                &pipeline,
                &buffers,
                &push,
                [w, h, 1],
                repeats,
            )?;
            let moved = (inputs + 1) as f64 * bytes as f64;
            println!(
                "bandwidth op {name} shapes {shapes} class {} ran {} bytes {bytes} ms {:.4} GBps {:.1}",
                options.name(),
                pipeline.options.name(),
                secs * 1e3,
                moved / secs / 1e9
            );
        }
    }

    // per-dispatch overhead: tiny dispatches, fpshader's recorder vs raw wgpu with one bind group
    let spec = Specialization {
        values: vec![(0, SpecValue::F32(0.0))],
        local_size: Some([64, 1, 1]),
    };
    let pipeline = ctx.pipeline(Relu::ReluPack4.module(), OptionSet::FP32, &spec)?;
    let a = ctx.storage_buffer(4096)?;
    let b = ctx.storage_buffer(4096)?;
    let push = [64u32, 1, 1, 64];
    let n = 2000;
    let ours = || -> Result<f64, Box<dyn std::error::Error>> {
        let start = Instant::now();
        let mut rec = ctx.recorder();
        for _ in 0..n {
            rec.dispatch(&pipeline, &[&a, &b], &push, [64, 1, 1])?;
        }
        rec.submit_and_wait()?;
        Ok(start.elapsed().as_secs_f64())
    };
    // raw wgpu, one bind group, either a compute pass per dispatch or all in one pass
    let raw = |one_pass: bool| -> Result<f64, Box<dyn std::error::Error>> {
        let start = Instant::now();
        let bind_group = ctx
            .device
            .create_bind_group(&fpshader::wgpu::BindGroupDescriptor {
                label: None,
                layout: pipeline.bind_group_layout(),
                entries: &[
                    fpshader::wgpu::BindGroupEntry {
                        binding: 0,
                        resource: a.as_entire_binding(),
                    },
                    fpshader::wgpu::BindGroupEntry {
                        binding: 1,
                        resource: b.as_entire_binding(),
                    },
                ],
            });
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        let bytes: Vec<u8> = push.iter().flat_map(|w| w.to_le_bytes()).collect();
        if one_pass {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            for _ in 0..n {
                pass.set_pipeline(pipeline.wgpu_pipeline());
                pass.set_bind_group(0, &bind_group, &[]);
                pass.set_immediates(0, &bytes);
                pass.dispatch_workgroups(1, 1, 1);
            }
        } else {
            for _ in 0..n {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(pipeline.wgpu_pipeline());
                pass.set_bind_group(0, &bind_group, &[]);
                pass.set_immediates(0, &bytes);
                pass.dispatch_workgroups(1, 1, 1);
            }
        }
        let index = ctx.queue.submit([encoder.finish()]);
        ctx.device.poll(fpshader::wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: None,
        })?;
        Ok(start.elapsed().as_secs_f64())
    };
    // alternate and keep the best of five of each: both include the GPU's work
    let (mut ours_best, mut raw_best, mut passes_best) = (f64::MAX, f64::MAX, f64::MAX);
    for _ in 0..5 {
        ours_best = ours_best.min(ours()?);
        raw_best = raw_best.min(raw(true)?);
        passes_best = passes_best.min(raw(false)?);
    }
    let us = |t: f64| t / n as f64 * 1e6;
    println!(
        "overhead dispatches {n} fpshader_us {:.2} raw_wgpu_us {:.2} ratio {:.2} raw_wgpu_pass_per_dispatch_us {:.2}",
        us(ours_best),
        us(raw_best),
        ours_best / raw_best,
        us(passes_best)
    );
    Ok(())
}
