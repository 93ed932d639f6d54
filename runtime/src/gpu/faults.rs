//! A context's faults as typed errors of the call that meets them: a lost device, errors wgpu
//! raised outside any scope, waits past the timeout, and buffers past a limit, the budget or
//! the driver's memory.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::error::{DeviceError, Error, Memory, Result};
use crate::gpu::context::Context;

impl Context {
    /// An error if the device was lost, or if wgpu raised an error outside any scope since
    /// the last call (which it clears).
    pub fn check_device(&self) -> Result<()> {
        if let Some(reason) = self.health.lost_reason() {
            return Err(DeviceError::Lost { reason }.into());
        }
        let errors = self.health.take_uncaptured();
        if !errors.is_empty() {
            return Err(DeviceError::Uncaptured { errors }.into());
        }
        Ok(())
    }

    /// Whether the device was lost.
    pub fn is_lost(&self) -> bool {
        self.health.is_lost()
    }

    /// Waits for `index` (everything submitted when `None`) within the context's timeout.
    pub(crate) fn wait_for(
        &self,
        index: Option<wgpu::SubmissionIndex>,
        what: &'static str,
    ) -> Result<()> {
        self.check_device()?;
        let polled = match self.spin_for() {
            Ok(false) => self.device.poll(wgpu::PollType::Wait {
                submission_index: index,
                timeout: Some(self.wait_timeout),
            }),
            done => done.map(|_| wgpu::PollStatus::WaitSucceeded),
        };
        match polled {
            Ok(_) => self.check_device(),
            Err(wgpu::PollError::Timeout) => Err(DeviceError::Timeout {
                what,
                waited: self.wait_timeout,
            }
            .into()),
            Err(e) => Err(self.fault(what, e.to_string())),
        }
    }

    /// Polls the device for up to [`ContextOptions::spin_wait`](crate::ContextOptions::spin_wait):
    /// whether the work submitted so far (a wait's among it) completed meanwhile. One waiter
    /// polls at a time; others block at once, so that many threads extracting on one context
    /// do not each take a core to wait.
    fn spin_for(&self) -> Result<bool, wgpu::PollError> {
        if self.spin_wait.is_zero() || self.spinning.swap(true, Ordering::Acquire) {
            return Ok(false);
        }
        let polled = self.poll_for();
        self.spinning.store(false, Ordering::Release);
        polled
    }

    /// [`Context::spin_for`]'s loop, by the one waiter that polls: until the queue's work
    /// submitted so far (the work waited for among it) is done. Not `poll(Wait)` with a zero
    /// timeout: wgpu 30 asserts, and panics, where another thread's poll retired the
    /// submissions between its reading of the fence and its own retiring (seen with three
    /// threads in `waits_that_poll_first_return_once_the_work_is_done`).
    fn poll_for(&self) -> Result<bool, wgpu::PollError> {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = done.clone();
        self.queue
            .on_submitted_work_done(move || flag.store(true, Ordering::Release));
        let started = Instant::now();
        loop {
            // retires finished submissions and runs their callbacks, ours among them
            self.device.poll(wgpu::PollType::Poll)?;
            if done.load(Ordering::Acquire) {
                return Ok(true);
            }
            if started.elapsed() >= self.spin_wait {
                return Ok(false);
            }
            // a pause between polls: each takes the device's locks, which the submission
            // thread and other recorders need too
            let pause = Instant::now();
            while pause.elapsed() < Duration::from_micros(2) {
                std::hint::spin_loop();
            }
        }
    }

    /// The error a failed submission or wait stands for: [`DeviceError::Lost`] where the
    /// device is lost, else `message`. A destroyed device is lost only once wgpu's maintenance
    /// sees its queue empty and calls the lost callback (other threads' submissions may still
    /// be in it): the queue is drained first, within the wait timeout.
    pub(crate) fn fault(&self, what: &'static str, message: String) -> Error {
        let drain = self.wait_timeout.min(Duration::from_secs(10));
        for _ in 0..2 {
            let _ = self.device.poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: Some(drain),
            });
            if let Err(e) = self.check_device() {
                return e;
            }
        }
        DeviceError::Failed { what, message }.into()
    }

    /// A new buffer from `desc`, or a typed error: beyond `max_buffer_size`, beyond the
    /// context's memory budget, or refused by the driver (out of memory, caught in an error
    /// scope). The pool's free buffers are given back first when memory is short.
    pub(crate) fn create_buffer_checked(
        &self,
        desc: &wgpu::BufferDescriptor<'_>,
    ) -> Result<wgpu::Buffer> {
        let limit = self.limits().max_buffer_size;
        if desc.size > limit {
            return Err(Error::BeyondLimit {
                what: "a buffer",
                bytes: desc.size,
                limit,
                limit_name: "max_buffer_size",
            });
        }
        self.check_device()?;
        let out_of_memory = |ctx: &Context| Error::OutOfMemory {
            memory: Memory::Device,
            needed: desc.size,
            available: ctx.budget_left().unwrap_or(0),
        };
        if self.budget_left().is_some_and(|left| left < desc.size) {
            self.trim_pool();
            if self.budget_left().is_some_and(|left| left < desc.size) {
                return Err(out_of_memory(self));
            }
        }
        for attempt in 0..2 {
            let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
            let buffer = self.device.create_buffer(desc);
            match pollster::block_on(scope.pop()) {
                None => return Ok(buffer),
                // what the pool holds unused may be what the driver lacks: once more without
                Some(_) if attempt == 0 => self.trim_pool(),
                Some(_) => {}
            }
        }
        Err(out_of_memory(self))
    }

    /// Bytes of device memory this context may still allocate under its budget
    /// ([`crate::ContextOptions::memory_budget`]), if it has one.
    fn budget_left(&self) -> Option<u64> {
        let held = self.memory_stats().allocated;
        self.memory_budget.map(|b| b.saturating_sub(held))
    }
}
