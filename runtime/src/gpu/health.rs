//! A context's device faults: a lost device, errors wgpu raised outside any scope, waits that
//! do not end, and device memory that cannot be had. wgpu's defaults panic on an uncaptured
//! error and wait forever; here each becomes a typed error of the call that meets it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::{DeviceError, Error, Memory, Result};
use crate::gpu::context::Context;

/// What the device's callbacks reported, read by the context's calls.
#[derive(Debug, Default)]
pub(crate) struct Health {
    lost: Mutex<Option<String>>,
    /// Whether `lost` is set: read on every dispatch, a lock was not.
    lost_flag: AtomicBool,
    uncaptured: Mutex<Vec<String>>,
}

/// How long a wait for the device may take unless [`crate::ContextOptions::wait_timeout`] or
/// `FPSHADER_WAIT_TIMEOUT` (seconds) says otherwise: far longer than any run of ncnn's models
/// at any size takes on an emulated device, short enough that a hung device is reported.
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_secs(600);

impl Health {
    /// Installs the device's lost callback and a non-panicking uncaptured-error handler.
    pub(crate) fn watch(device: &wgpu::Device) -> Arc<Health> {
        let health = Arc::new(Health::default());
        let h = health.clone();
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut lost) = h.lost.lock() {
                lost.get_or_insert_with(|| format!("{reason:?}: {message}"));
            }
            h.lost_flag.store(true, Ordering::Release);
        });
        let h = health.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut errors) = h.uncaptured.lock() {
                // a few are enough to say what went wrong; an error storm must not grow it
                if errors.len() < 16 {
                    errors.push(e.to_string());
                }
            }
        }));
        health
    }
}

impl Context {
    /// An error if the device was lost, or if wgpu raised an error outside any scope since
    /// the last call (which it clears).
    pub fn check_device(&self) -> Result<()> {
        if let Some(reason) = self.health.lost.lock().ok().and_then(|l| l.clone()) {
            return Err(DeviceError::Lost { reason }.into());
        }
        let errors = (self.health.uncaptured.lock())
            .map(|mut e| std::mem::take(&mut *e))
            .unwrap_or_default();
        if !errors.is_empty() {
            return Err(DeviceError::Uncaptured(errors.join("; ")).into());
        }
        Ok(())
    }

    /// Whether the device was lost.
    pub fn is_lost(&self) -> bool {
        self.health.lost_flag.load(Ordering::Acquire)
    }

    /// Waits for `index` (everything submitted when `None`) within the context's timeout.
    pub(crate) fn wait_for(
        &self,
        index: Option<wgpu::SubmissionIndex>,
        what: &'static str,
    ) -> Result<()> {
        self.check_device()?;
        let polled = self.device.poll(wgpu::PollType::Wait {
            submission_index: index,
            timeout: Some(self.wait_timeout),
        });
        match polled {
            Ok(_) => self.check_device(),
            Err(wgpu::PollError::Timeout) => Err(DeviceError::Timeout {
                what,
                waited: self.wait_timeout,
            }
            .into()),
            Err(e) => Err(self.fault(e.to_string())),
        }
    }

    /// The error a failed submission or wait stands for: [`DeviceError::Lost`] where the
    /// device is lost, else `message`. A destroyed device is lost only once wgpu's maintenance
    /// sees its queue empty and calls the lost callback (other threads' submissions may still
    /// be in it): the queue is drained first, within the wait timeout.
    pub(crate) fn fault(&self, message: String) -> Error {
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
        Error::Gpu(message)
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

/// The budget a context on `info`'s adapter gets unless told otherwise: an emulated GPU
/// allocates host memory, so at most what the host has available (a buffer past it would
/// have the process killed, not an error returned); a real GPU's driver refuses what it
/// cannot hold, which [`Context::create_buffer_checked`] reports.
pub(crate) fn default_budget(info: &wgpu::AdapterInfo) -> Option<u64> {
    (info.device_type == wgpu::DeviceType::Cpu).then(crate::host::available)
}

/// The wait timeout from `FPSHADER_WAIT_TIMEOUT` (seconds), else the default.
pub(crate) fn wait_timeout_from_env() -> Result<Duration> {
    match std::env::var("FPSHADER_WAIT_TIMEOUT") {
        Ok(s) if !s.is_empty() => s
            .parse::<f64>()
            .ok()
            .filter(|t| *t > 0.0)
            .and_then(|t| Duration::try_from_secs_f64(t).ok())
            .ok_or_else(|| {
                DeviceError::Config(format!(
                    "FPSHADER_WAIT_TIMEOUT={s}: expected a positive number of seconds"
                ))
                .into()
            }),
        _ => Ok(DEFAULT_WAIT_TIMEOUT),
    }
}
