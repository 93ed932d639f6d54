//! What the device's callbacks report (a lost device, errors wgpu raised outside any scope),
//! and the wait timeout and memory budget a context starts with. wgpu's defaults panic on an
//! uncaptured error and wait forever; `gpu/faults` makes each a typed error of the call that
//! meets it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::{DeviceError, Result};

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

/// How long a wait polls the device before blocking, unless
/// [`crate::ContextOptions::spin_wait`] or `FPSHADER_SPIN_WAIT` say otherwise: covers the
/// wait at the end of most nets' runs (vgg16's 0.5 ms, r3d_18's 1.4 ms on an H200), where
/// polling took 3-5% off their host-to-host time against blocking at once.
pub const DEFAULT_SPIN_WAIT: Duration = Duration::from_millis(2);

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

    /// Why the device was lost, if it was.
    pub(crate) fn lost_reason(&self) -> Option<String> {
        self.lost.lock().ok().and_then(|l| l.clone())
    }

    /// Whether the device was lost (an atomic read: asked on every dispatch).
    pub(crate) fn is_lost(&self) -> bool {
        self.lost_flag.load(Ordering::Acquire)
    }

    /// The errors wgpu raised outside any scope since the last call.
    pub(crate) fn take_uncaptured(&self) -> Vec<String> {
        (self.uncaptured.lock())
            .map(|mut e| std::mem::take(&mut *e))
            .unwrap_or_default()
    }
}

/// The budget a context on `info`'s adapter gets unless told otherwise: an emulated GPU
/// allocates host memory, so at most what the host has available (a buffer past it would
/// have the process killed, not an error returned); a real GPU's driver refuses what it
/// cannot hold, which `Context::create_buffer_checked` reports.
pub(crate) fn default_budget(info: &wgpu::AdapterInfo) -> Option<u64> {
    (info.device_type == wgpu::DeviceType::Cpu).then(crate::host::available)
}

/// Environment setting `name` read by `parse`: `None` where it is unset or empty, a
/// [`DeviceError::Config`] naming it and what it takes (`expected`) where `parse` refuses it.
pub(crate) fn env_setting<T>(
    name: &'static str,
    expected: &'static str,
    parse: impl FnOnce(&str) -> Option<T>,
) -> Result<Option<T>> {
    match std::env::var(name) {
        Ok(value) if !value.is_empty() => match parse(&value) {
            Some(v) => Ok(Some(v)),
            None => Err(DeviceError::Config {
                setting: name,
                value,
                expected,
            }
            .into()),
        },
        _ => Ok(None),
    }
}

/// The wait timeout from `FPSHADER_WAIT_TIMEOUT` (seconds), else the default.
pub(crate) fn wait_timeout_from_env() -> Result<Duration> {
    let secs = |s: &str| {
        let t = s.parse::<f64>().ok().filter(|t| *t > 0.0)?;
        Duration::try_from_secs_f64(t).ok()
    };
    let set = env_setting(
        "FPSHADER_WAIT_TIMEOUT",
        "a positive number of seconds",
        secs,
    )?;
    Ok(set.unwrap_or(DEFAULT_WAIT_TIMEOUT))
}

/// The spin before a blocking wait from `FPSHADER_SPIN_WAIT` (microseconds), else
/// [`DEFAULT_SPIN_WAIT`] on a real GPU and none on an emulated one.
pub(crate) fn spin_wait_from_env(info: &wgpu::AdapterInfo) -> Result<Duration> {
    let micros = |s: &str| s.parse::<u64>().ok().map(Duration::from_micros);
    let set = env_setting(
        "FPSHADER_SPIN_WAIT",
        "a whole number of microseconds",
        micros,
    )?;
    Ok(set.unwrap_or(match info.device_type {
        wgpu::DeviceType::Cpu => Duration::ZERO,
        _ => DEFAULT_SPIN_WAIT,
    }))
}
