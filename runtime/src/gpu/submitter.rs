//! A context's submission thread: ends a recorder's chunks, finishes and submits them while
//! the recorder goes on recording the next.
//!
//! wgpu encodes a command encoder's passes when it finishes (validation, resource tracking,
//! barriers, the driver's commands): on an H200 that was most of the host's time for a zoo
//! model of many small layers, and done on the recording thread it came on top of the
//! layers' own recording. One thread per context keeps submissions in the order they were
//! handed over, which is the queue's order the recorders rely on.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::gpu::pool::BufferPool;

/// What came of one handed-over chunk: its submission or the validation error that finishing
/// it raised, and the host time it took.
pub(crate) struct Submitted {
    pub(crate) index: Result<wgpu::SubmissionIndex, String>,
    pub(crate) took: Duration,
}

/// One chunk to submit, and where its outcome goes.
struct Job {
    pass: Option<wgpu::ComputePass<'static>>,
    encoder: wgpu::CommandEncoder,
    reply: Sender<Submitted>,
    /// The chunk's ticket, closed once it is in the queue (when the chunk holds recorded work).
    ticket: Option<(u64, Arc<BufferPool>)>,
}

/// The thread and the channel to it, started on the first chunk.
#[derive(Default)]
pub(crate) struct Submitter {
    worker: OnceLock<Worker>,
}

/// The channel to the thread, absent where it could not be spawned.
struct Worker {
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Submitter {
    /// Hands `encoder` (with its open `pass`, ended first) to the thread; the outcome arrives
    /// on `reply`. Where the thread cannot be had, submits here.
    pub(crate) fn submit(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        pass: Option<wgpu::ComputePass<'static>>,
        encoder: wgpu::CommandEncoder,
        reply: &Sender<Submitted>,
        ticket: Option<(u64, Arc<BufferPool>)>,
    ) {
        let job = Job {
            pass,
            encoder,
            reply: reply.clone(),
            ticket,
        };
        let worker = self.worker.get_or_init(|| Worker::start(device, queue));
        let sent = match &worker.jobs {
            Some(jobs) => jobs.send(job).map_err(|e| e.0),
            None => Err(job),
        };
        // no thread (it could not be spawned, or it is gone): the same work, here
        if let Err(job) = sent {
            run(device, queue, job);
        }
    }
}

impl Worker {
    fn start(device: &wgpu::Device, queue: &wgpu::Queue) -> Worker {
        let (send, jobs) = channel::<Job>();
        let (device, queue) = (device.clone(), queue.clone());
        let thread = std::thread::Builder::new()
            .name("fpshader-submit".into())
            .spawn(move || serve(&device, &queue, jobs))
            .ok();
        Worker {
            jobs: thread.as_ref().map(|_| send),
            thread,
        }
    }
}

fn serve(device: &wgpu::Device, queue: &wgpu::Queue, jobs: Receiver<Job>) {
    for job in jobs {
        run(device, queue, job);
    }
}

/// Ends the pass, finishes the encoder and submits it under an error scope (thread-local in
/// wgpu: each thread catches its own encoders' errors).
fn run(device: &wgpu::Device, queue: &wgpu::Queue, job: Job) {
    let started = Instant::now();
    drop(job.pass);
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let index = queue.submit([job.encoder.finish()]);
    let index = match pollster::block_on(scope.pop()) {
        Some(e) => Err(e.to_string()),
        None => Ok(index),
    };
    if let Some((ticket, pool)) = job.ticket {
        pool.tickets(|t| t.close(ticket));
    }
    // a recorder dropped before collecting its outcomes no longer listens
    let _ = job.reply.send(Submitted {
        index,
        took: started.elapsed(),
    });
}

impl Drop for Worker {
    fn drop(&mut self) {
        // closing the channel ends the thread once the chunks handed over are submitted
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl crate::gpu::Context {
    /// Submits `encoder` after the chunks that recorders handed over before it, returning once
    /// it is in the queue (a submission straight to the queue could overtake them).
    pub(crate) fn submit_in_order(&self, encoder: wgpu::CommandEncoder) -> crate::Result<()> {
        let (reply, outcome) = channel();
        self.submitter
            .submit(&self.device, &self.queue, None, encoder, &reply, None);
        let submitted = outcome
            .recv()
            .map_err(|_| crate::error::DeviceError::SubmitterGone)?;
        (submitted.index.map(drop)).map_err(|message| self.fault("a submission", message))
    }
}
