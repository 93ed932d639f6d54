//! Device time per dispatch from timestamp queries, where the device has them: what
//! `fpshader bench --profile` reports per layer. Off unless `Context::set_timing` turns it on,
//! because each timed dispatch gets a compute pass of its own.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::Result;

/// One dispatch's time on the device.
#[derive(Clone, Debug, PartialEq)]
pub struct DispatchTime {
    /// The recorder's label when it was recorded ([`crate::Recorder::set_label`]); the net
    /// labels dispatches with their layer's name.
    pub label: String,
    /// The shader it ran.
    pub shader: String,
    /// From the start of its pass to the end, in microseconds.
    pub micros: f64,
}

/// The context's switch and what timed recordings have measured so far.
#[derive(Debug, Default)]
pub(crate) struct Timings {
    on: AtomicBool,
    done: Mutex<Vec<DispatchTime>>,
}

/// The queries of one chunk of a recording: two per dispatch.
#[derive(Debug)]
pub(crate) struct ChunkQueries {
    set: wgpu::QuerySet,
    capacity: u32,
    /// Per timed dispatch: the label and the shader.
    dispatches: Vec<(String, String)>,
}

/// A chunk's resolved queries, readable once its submission completes.
#[derive(Debug)]
pub(crate) struct PendingTimes {
    readback: wgpu::Buffer,
    dispatches: Vec<(String, String)>,
}

impl Timings {
    /// Turns timing on or off.
    pub(crate) fn set(&self, on: bool) {
        self.on.store(on, Ordering::SeqCst);
    }

    /// Whether timing is on.
    pub(crate) fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// The times measured since the last call, in recording order.
    pub(crate) fn take(&self) -> Vec<DispatchTime> {
        self.done
            .lock()
            .map(|mut done| std::mem::take(&mut *done))
            .unwrap_or_default()
    }
}

impl ChunkQueries {
    pub(crate) fn new(device: &wgpu::Device, dispatches: u32) -> Self {
        let capacity = dispatches * 2;
        ChunkQueries {
            set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("fpshader timing"),
                ty: wgpu::QueryType::Timestamp,
                count: capacity,
            }),
            capacity,
            dispatches: Vec::new(),
        }
    }

    /// The timestamp writes of the next dispatch's pass, labelled; none when the set is full.
    pub(crate) fn next(
        &mut self,
        label: &str,
        shader: &str,
    ) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let at = self.dispatches.len() as u32 * 2;
        if at + 2 > self.capacity {
            return None;
        }
        self.dispatches
            .push((label.to_string(), shader.to_string()));
        Some(wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(at),
            end_of_pass_write_index: Some(at + 1),
        })
    }

    /// Records the resolution of the queries into a host-readable buffer (no pass open).
    pub(crate) fn resolve(
        self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
    ) -> PendingTimes {
        let count = self.dispatches.len() as u32 * 2;
        let bytes = u64::from(count.max(1)) * 8;
        let buffer = |usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("fpshader timing"),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        let resolved = buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC);
        let readback = buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
        if count > 0 {
            encoder.resolve_query_set(&self.set, 0..count, &resolved, 0);
            encoder.copy_buffer_to_buffer(&resolved, 0, &readback, 0, bytes);
        }
        PendingTimes {
            readback,
            dispatches: self.dispatches,
        }
    }
}

impl PendingTimes {
    /// Reads the times after the submission completed (`read` maps a buffer; ticks of
    /// `period_ns`) and adds them to `timings`.
    pub(crate) fn collect(
        self,
        read: impl FnOnce(&wgpu::Buffer) -> Result<Vec<u8>>,
        period_ns: f64,
        timings: &Timings,
    ) -> Result<()> {
        if self.dispatches.is_empty() {
            return Ok(());
        }
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&read(&self.readback)?);
        let times =
            self.dispatches
                .into_iter()
                .zip(ticks.chunks_exact(2))
                .map(|((label, shader), t)| DispatchTime {
                    label,
                    shader,
                    micros: t[1].saturating_sub(t[0]) as f64 * period_ns / 1e3,
                });
        if let Ok(mut done) = timings.done.lock() {
            done.extend(times);
        }
        Ok(())
    }
}
