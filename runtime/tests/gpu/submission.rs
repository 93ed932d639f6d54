//! Several dispatches in one submission, long recordings in chunks.

use super::*;

/// The fp32 ReLU pipeline with slope 0.5 (local size 32).
pub(crate) fn leaky_relu(ctx: &Context) -> std::sync::Arc<fpshader::Pipeline> {
    let spec = Specialization {
        values: vec![(0, SpecValue::F32(0.5))],
        local_size: Some([32, 1, 1]),
    };
    ctx.pipeline(RELU, OptionSet::FP32, &spec).unwrap()
}

#[test]
fn several_dispatches_in_one_submission() {
    for ctx in contexts() {
        let pipeline = leaky_relu(&ctx);
        let n = 1000u32;
        let input = random(n as usize, 9);
        let a = ctx.upload(&StorageFormat::Fp32.encode(&input)).unwrap();
        let b = ctx.storage_buffer(u64::from(n) * 4).unwrap();
        let c = ctx.storage_buffer(u64::from(n) * 4).unwrap();
        let push = [n, 1, 1, n];
        let mut rec = ctx.recorder();
        rec.dispatch(&pipeline, &[&a, &b], &push, [n, 1, 1])
            .unwrap();
        rec.dispatch(&pipeline, &[&b, &c], &push, [n, 1, 1])
            .unwrap();
        assert_eq!(rec.len(), 2);
        rec.submit_and_wait().unwrap();
        let got = StorageFormat::Fp32.decode(&ctx.download(&c).unwrap(), n as usize);
        let want: Vec<f32> = input
            .iter()
            .map(|x| if *x < 0.0 { x * 0.25 } else { *x })
            .collect();
        assert_close(&got, &want, 0.001, "two relus");
    }
}

/// A recording longer than a chunk goes to the queue in pieces while it is recorded; the
/// pieces run in order, buffers dropped mid-recording are reused by later dispatches, and an
/// upload while unsubmitted work still reads a dropped buffer gets a buffer of its own.
#[test]
fn long_recordings_run_in_chunks_in_order() {
    for ctx in contexts() {
        let pipeline = leaky_relu(&ctx);
        let n = 1000u32;
        let bytes = u64::from(n) * 4;
        let input = random(n as usize, 10);
        let marked = random(n as usize, 11);
        let push = [n, 1, 1, n];
        let before = ctx.submission_stats();
        let mut rec = ctx.recorder();
        let mut prev = ctx.upload(&StorageFormat::Fp32.encode(&input)).unwrap();
        let mut side = None;
        const STEPS: usize = 40;
        for step in 0..STEPS {
            let next = ctx.storage_buffer(bytes).unwrap();
            rec.dispatch(&pipeline, &[&prev, &next], &push, [n, 1, 1])
                .unwrap();
            // `prev` goes back to the pool while the dispatch that reads it is unsubmitted
            prev = next;
            if step == 20 {
                let up = ctx.upload(&StorageFormat::Fp32.encode(&marked)).unwrap();
                let out = ctx.storage_buffer(bytes).unwrap();
                rec.dispatch(&pipeline, &[&up, &out], &push, [n, 1, 1])
                    .unwrap();
                side = Some(out);
            }
        }
        assert_eq!(rec.len(), STEPS + 1);
        rec.submit_and_wait().unwrap();
        let d = ctx.submission_stats() - before;
        assert!(d.submissions >= 3, "{} submissions", d.submissions);
        let leaky = |x: f32, times: i32| if x < 0.0 { x * 0.5f32.powi(times) } else { x };
        let got = StorageFormat::Fp32.decode(&ctx.download(&prev).unwrap(), n as usize);
        let want: Vec<f32> = input.iter().map(|x| leaky(*x, STEPS as i32)).collect();
        assert_close(&got, &want, 1e-6, &format!("{STEPS} chained relus"));
        let side = side.unwrap();
        let got = StorageFormat::Fp32.decode(&ctx.download(&side).unwrap(), n as usize);
        let want: Vec<f32> = marked.iter().map(|x| leaky(*x, 1)).collect();
        assert_close(&got, &want, 1e-6, "an upload made mid-recording");
    }
}

/// A wait that polls the device before blocking (`spin_wait`: long enough to cover the work,
/// and too short, so that the blocking wait follows) returns once the work is done: the
/// queue is empty then, and the chained results are complete; so do the waits of three
/// threads at once, of which one polls and the others block.
#[test]
fn waits_that_poll_first_return_once_the_work_is_done() {
    use std::time::Duration;
    if std::env::var_os("FPSHADER_SKIP_GPU").is_some() {
        return;
    }
    for spin in [Duration::from_secs(5), Duration::from_micros(1)] {
        let ctx = Context::new(ContextOptions {
            backends: Some(wgpu::Backends::VULKAN),
            allow_cpu_adapter: true,
            spin_wait: Some(spin),
            ..Default::default()
        })
        .unwrap();
        let chain = |seed: u64| {
            let pipeline = leaky_relu(&ctx);
            let n = 1 << 16;
            let input = random(n as usize, seed);
            let mut prev = ctx.upload(&StorageFormat::Fp32.encode(&input)).unwrap();
            let mut rec = ctx.recorder();
            for _ in 0..20 {
                let next = ctx.storage_buffer(u64::from(n) * 4).unwrap();
                rec.dispatch(&pipeline, &[&prev, &next], &[n, 1, 1, n], [n, 1, 1])
                    .unwrap();
                prev = next;
            }
            rec.submit_and_wait().unwrap();
            (input, prev)
        };
        let check = |(input, out): (Vec<f32>, fpshader::gpu::DeviceBuffer)| {
            let n = input.len();
            let got = StorageFormat::Fp32.decode(&ctx.download(&out).unwrap(), n);
            let want: Vec<f32> = (input.iter())
                .map(|x| if *x < 0.0 { x * 0.5f32.powi(20) } else { *x })
                .collect();
            assert_close(&got, &want, 1e-6, &format!("{spin:?}: 20 chained relus"));
        };
        let done = chain(12);
        let status = ctx.device.poll(wgpu::PollType::Poll).unwrap();
        assert!(
            status.is_queue_empty(),
            "{spin:?}: {status:?} after the wait"
        );
        check(done);
        std::thread::scope(|s| {
            for seed in 13..16 {
                s.spawn(move || check(chain(seed)));
            }
        });
    }
}
