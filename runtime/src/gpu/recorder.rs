//! Recording dispatches (many per submission), and moving buffer data in and out.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::gpu::context::Context;
use crate::gpu::pipeline::{Kind, Pipeline, Slot};
use crate::gpu::pool::DeviceBuffer;

/// Records dispatches into one command encoder; [`Recorder::submit_and_wait`] runs them all.
pub struct Recorder<'c> {
    ctx: &'c Context,
    encoder: wgpu::CommandEncoder,
    /// One compute pass for every dispatch: wgpu orders dispatches inside a pass by their
    /// resource usage, and a pass per dispatch cost about 1% of a memory-bound dispatch's time on an
    /// H200 (see the README's overhead figures).
    pass: Option<wgpu::ComputePass<'static>>,
    dispatches: usize,
    /// When recording began (for [`Context::submission_stats`]).
    started: Instant,
}

/// Storage buffer sizes round up to 16 bytes, so flat shaders (16 bytes per invocation) cover
/// any mat's buffer whole.
fn padded_size(bytes: u64) -> u64 {
    bytes.div_ceil(16).max(1) * 16
}

impl Context {
    /// A recorder for a batch of dispatches.
    pub fn recorder(&self) -> Recorder<'_> {
        Recorder {
            ctx: self,
            encoder: self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("fpshader"),
                }),
            pass: None,
            dispatches: 0,
            started: Instant::now(),
        }
    }

    /// Submissions so far and the time spent recording them and waiting for them: where a
    /// run's time goes on the host and on the device (`fpshader bench --profile`).
    pub fn submission_stats(&self) -> SubmissionStats {
        self.stats.snapshot()
    }

    /// A storage buffer holding `bytes` (also usable as copy source and destination). Always a
    /// new one: the queue writes it before any recorded work runs, so a pooled buffer that
    /// recorded work still reads must not be handed to it. It joins the pool when dropped.
    pub fn upload(&self, bytes: &[u8]) -> DeviceBuffer {
        let size = padded_size(bytes.len() as u64);
        let buffer = self.new_storage_buffer(size);
        if !bytes.is_empty() {
            let mut padded = bytes.to_vec();
            padded.resize(size as usize, 0);
            self.queue.write_buffer(&buffer, 0, &padded);
        }
        DeviceBuffer::pooled(buffer, &self.pool)
    }

    /// An uninitialized storage buffer of `size` bytes (rounded up to 16) for recorded work to
    /// write: a pooled one of that size when one is free, else a new one; it goes back to the
    /// pool when its last handle drops. Data written through the queue needs
    /// [`Context::upload`] instead.
    pub fn storage_buffer(&self, size: u64) -> DeviceBuffer {
        let size = padded_size(size);
        self.pool.count_request();
        let buffer = self
            .pool
            .take(size)
            .unwrap_or_else(|| self.new_storage_buffer(size));
        DeviceBuffer::pooled(buffer, &self.pool)
    }

    fn new_storage_buffer(&self, size: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("fpshader storage"),
            size: padded_size(size),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Frees every pooled buffer (those no mat holds).
    pub fn trim_pool(&self) {
        self.pool.clear();
    }

    /// Bytes held by pooled buffers that no mat holds.
    pub fn pooled_bytes(&self) -> u64 {
        self.pool.bytes()
    }

    /// How many storage buffers recorded work has asked for so far (pooled or new): what a
    /// run allocates, copies included.
    pub fn storage_requests(&self) -> u64 {
        self.pool.requests()
    }

    /// Reads a buffer back (waits for the GPU).
    pub fn download(&self, buffer: &wgpu::Buffer) -> Result<Vec<u8>> {
        let size = buffer.size();
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("fpshader readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("fpshader readback"),
            });
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
        self.queue.submit([encoder.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Gpu(e.to_string()))?;
        rx.recv()
            .map_err(|e| Error::Gpu(e.to_string()))?
            .map_err(|e| Error::Gpu(e.to_string()))?;
        let data = staging
            .slice(..)
            .get_mapped_range()
            .map_err(|e| Error::Gpu(e.to_string()))?
            .to_vec();
        staging.unmap();
        Ok(data)
    }
}

/// What a declared binding is given: a buffer, or a texture view for image bindings.
#[derive(Clone, Copy, Debug)]
pub enum Resource<'a> {
    /// A storage or uniform buffer.
    Buffer(&'a wgpu::Buffer),
    /// A sampled texture or storage image (a full view of the texture).
    Texture(&'a wgpu::TextureView),
}

impl<'a> From<&'a wgpu::Buffer> for Resource<'a> {
    fn from(b: &'a wgpu::Buffer) -> Self {
        Resource::Buffer(b)
    }
}

impl<'a> From<&'a DeviceBuffer> for Resource<'a> {
    fn from(b: &'a DeviceBuffer) -> Self {
        Resource::Buffer(b.raw())
    }
}

impl<'a> From<&'a wgpu::TextureView> for Resource<'a> {
    fn from(v: &'a wgpu::TextureView) -> Self {
        Resource::Texture(v)
    }
}

/// A bind group cache key: the resources by identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Held {
    Buffer(wgpu::Buffer),
    Texture(wgpu::TextureView),
}

impl Resource<'_> {
    fn held(self) -> Held {
        match self {
            Resource::Buffer(b) => Held::Buffer(b.clone()),
            Resource::Texture(v) => Held::Texture(v.clone()),
        }
    }
}

/// What wgpu would reject when creating the bind group, as an error instead of a panic.
fn check(binding: u32, kind: Kind, resource: Resource<'_>, limits: &wgpu::Limits) -> Result<()> {
    let problem = |problem: String| Err(Error::Binding { binding, problem });
    let view_dim = |t: &wgpu::Texture| match t.dimension() {
        wgpu::TextureDimension::D1 => wgpu::TextureViewDimension::D1,
        wgpu::TextureDimension::D2 => wgpu::TextureViewDimension::D2,
        wgpu::TextureDimension::D3 => wgpu::TextureViewDimension::D3,
    };
    match (kind, resource) {
        (Kind::Storage | Kind::Uniform, Resource::Buffer(buffer)) => {
            let usage = if kind == Kind::Uniform {
                wgpu::BufferUsages::UNIFORM
            } else {
                wgpu::BufferUsages::STORAGE
            };
            if !buffer.usage().contains(usage) {
                return problem(format!("the buffer lacks {usage:?} usage"));
            }
            let limit = if kind == Kind::Uniform {
                limits.max_uniform_buffer_binding_size
            } else {
                limits.max_storage_buffer_binding_size
            };
            if buffer.size() > limit {
                return problem(format!(
                    "the buffer has {} bytes; the device binds at most {limit}",
                    buffer.size()
                ));
            }
        }
        (Kind::Texture(dim) | Kind::StorageTexture(dim, _), Resource::Texture(view)) => {
            let t = view.texture();
            let (usage, format) = match kind {
                Kind::StorageTexture(_, f) => (wgpu::TextureUsages::STORAGE_BINDING, Some(f)),
                _ => (wgpu::TextureUsages::TEXTURE_BINDING, None),
            };
            if !t.usage().contains(usage) {
                return problem(format!("the texture lacks {usage:?} usage"));
            }
            if view_dim(t) != dim {
                return problem(format!(
                    "the shader reads a {dim:?} image, the texture is {:?}",
                    t.dimension()
                ));
            }
            if format.is_some_and(|f| f != t.format()) {
                return problem(format!(
                    "the shader's image format is {format:?}, the texture's {:?}",
                    t.format()
                ));
            }
            if format.is_none() && t.format().sample_type(None, None).is_none() {
                return problem(format!("{:?} cannot be sampled", t.format()));
            }
        }
        (Kind::Storage | Kind::Uniform, Resource::Texture(_)) => {
            return problem("a buffer binding was given a texture".into());
        }
        (_, Resource::Buffer(_)) => {
            return problem("an image binding was given a buffer".into());
        }
    }
    Ok(())
}

impl<'c> Recorder<'c> {
    /// Records one dispatch of `pipeline` over `global` invocations (rounded up to whole
    /// workgroups, like ncnn's dispatcher). `resources` (buffers, texture views, or anything
    /// that converts into a [`Resource`], such as a `GpuMat`)
    /// go to the shader's declared bindings in binding order; samplers of `sampler*D` bindings
    /// are supplied by the context. `push` holds the push-constant block as 4-byte words (ncnn's
    /// `vk_constant_type`), empty when the shader has none.
    pub fn dispatch<'a, R: Into<Resource<'a>> + Copy>(
        &mut self,
        pipeline: &Pipeline,
        resources: &[R],
        push: &[u32],
        global: [u32; 3],
    ) -> Result<()> {
        let resources: Vec<Resource<'a>> = resources.iter().map(|r| (*r).into()).collect();
        // the declared bindings, by number, in order: what `resources` must match
        let kinds = || {
            pipeline
                .slots
                .iter()
                .enumerate()
                .filter_map(|(n, s)| match s {
                    Slot::Declared(k) => Some((n as u32, *k)),
                    _ => None,
                })
        };
        let declared = kinds().count();
        if resources.len() != declared {
            let missing = kinds()
                .nth(resources.len().min(declared))
                .map_or(0, |(n, _)| n);
            return Err(Error::Binding {
                binding: missing,
                problem: format!(
                    "`{}` declares {declared} bindings, {} resources were given",
                    pipeline.shader,
                    resources.len()
                ),
            });
        }
        let expected = pipeline
            .reflection
            .push_constants
            .as_ref()
            .map_or(0, |p| p.size);
        if push.len() as u32 * 4 != expected.div_ceil(4) * 4 {
            return Err(Error::PushConstants(format!(
                "`{}` has a {expected}-byte block, {} words were given",
                pipeline.shader,
                push.len()
            )));
        }
        let limit = self.ctx.limits().max_compute_workgroups_per_dimension;
        let groups = [0, 1, 2].map(|i| global[i].div_ceil(pipeline.local_size[i]));
        if groups.iter().any(|g| *g > limit) {
            return Err(Error::DispatchTooLarge { groups, limit });
        }
        if groups.contains(&0) {
            return Ok(());
        }
        for ((binding, kind), resource) in kinds().zip(&resources) {
            check(binding, kind, *resource, self.ctx.limits())?;
        }
        let bind_group = self.bind_group(pipeline, &resources);
        let encoder = &mut self.encoder;
        let pass = self.pass.get_or_insert_with(|| {
            encoder
                .begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("fpshader"),
                    timestamp_writes: None,
                })
                .forget_lifetime()
        });
        pass.set_pipeline(&pipeline.pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        if !push.is_empty() {
            let bytes: Vec<u8> = push.iter().flat_map(|w| w.to_le_bytes()).collect();
            pass.set_immediates(0, &bytes);
        }
        pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
        self.dispatches += 1;
        Ok(())
    }

    /// The bind group of `resources` for `pipeline`, cached on the pipeline. The resources were
    /// checked against the layout by the caller, so creating it cannot fail validation.
    fn bind_group(&self, pipeline: &Pipeline, resources: &[Resource<'_>]) -> wgpu::BindGroup {
        const KEEP: usize = 32;
        let key: Vec<Held> = resources.iter().map(|r| r.held()).collect();
        let hit = pipeline.bind_groups.lock().ok().and_then(|cache| {
            cache
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, group)| group.clone())
        });
        if let Some(group) = hit {
            return group;
        }
        let mut given = resources.iter().peekable();
        let entries: Vec<wgpu::BindGroupEntry> = pipeline
            .slots
            .iter()
            .enumerate()
            .map(|(n, slot)| {
                let resource = match (slot, given.next_if(|_| matches!(slot, Slot::Declared(_)))) {
                    (Slot::Declared(_), Some(Resource::Buffer(b))) => b.as_entire_binding(),
                    (Slot::Declared(_), Some(Resource::Texture(v))) => {
                        wgpu::BindingResource::TextureView(v)
                    }
                    (Slot::Sampler, _) => wgpu::BindingResource::Sampler(&self.ctx.sampler),
                    _ => self.ctx.dummy.as_entire_binding(),
                };
                // slots are dense: gaps are filled and samplers follow the highest binding
                wgpu::BindGroupEntry {
                    binding: n as u32,
                    resource,
                }
            })
            .collect();
        let group = self
            .ctx
            .device
            .create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(&pipeline.shader),
                layout: &pipeline.bind_group_layout,
                entries: &entries,
            });
        if let Ok(mut cache) = pipeline.bind_groups.lock() {
            if cache.len() >= KEEP {
                cache.remove(0);
            }
            cache.push((key, group.clone()));
        }
        group
    }

    /// Records a copy of all of `from` into `to` (between dispatches, in order).
    pub fn copy_buffer(&mut self, from: &wgpu::Buffer, to: &wgpu::Buffer) {
        // copies cannot happen inside a compute pass: end it, the next dispatch opens another
        drop(self.pass.take());
        self.encoder
            .copy_buffer_to_buffer(from, 0, to, 0, from.size().min(to.size()));
    }

    /// Records a copy of all of `from` into `to` (same size and format).
    pub fn copy_texture(&mut self, from: &wgpu::Texture, to: &wgpu::Texture) {
        drop(self.pass.take());
        self.encoder
            .copy_texture_to_texture(from.as_image_copy(), to.as_image_copy(), from.size());
    }

    /// The context it records for.
    pub fn context(&self) -> &'c Context {
        self.ctx
    }

    /// How many dispatches were recorded.
    pub fn len(&self) -> usize {
        self.dispatches
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.dispatches == 0
    }

    /// Submits everything recorded and waits for the GPU to finish.
    pub fn submit_and_wait(mut self) -> Result<()> {
        // the pass must end before the encoder finishes
        drop(self.pass.take());
        let device = &self.ctx.device;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        // recording errors surface when the encoder finishes
        let commands = self.encoder.finish();
        let recorded = Instant::now();
        let index = self.ctx.queue.submit([commands]);
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(Error::Gpu(e.to_string()));
        }
        device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: None,
            })
            .map_err(|e| Error::Gpu(e.to_string()))?;
        let stats = &self.ctx.stats;
        stats.submissions.fetch_add(1, Ordering::Relaxed);
        stats.add(&stats.record_ns, recorded - self.started);
        stats.add(&stats.wait_ns, recorded.elapsed());
        Ok(())
    }
}

/// Counters behind [`Context::submission_stats`].
#[derive(Debug, Default)]
pub(crate) struct StatCounters {
    submissions: AtomicU64,
    record_ns: AtomicU64,
    wait_ns: AtomicU64,
}

impl StatCounters {
    fn add(&self, counter: &AtomicU64, d: Duration) {
        counter.fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }

    fn snapshot(&self) -> SubmissionStats {
        let d = |c: &AtomicU64| Duration::from_nanos(c.load(Ordering::Relaxed));
        SubmissionStats {
            submissions: self.submissions.load(Ordering::Relaxed),
            recording: d(&self.record_ns),
            waiting: d(&self.wait_ns),
        }
    }
}

/// What [`Context::submission_stats`] reports; subtract two to measure what lies between.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubmissionStats {
    /// Recorders submitted (each waited for).
    pub submissions: u64,
    /// Host time from a recorder's creation to its submission: the layers' recording.
    pub recording: Duration,
    /// Time from submission to completion: the device's work plus the wait's latency.
    pub waiting: Duration,
}

impl std::ops::Sub for SubmissionStats {
    type Output = SubmissionStats;

    fn sub(self, before: SubmissionStats) -> SubmissionStats {
        SubmissionStats {
            submissions: self.submissions - before.submissions,
            recording: self.recording.saturating_sub(before.recording),
            waiting: self.waiting.saturating_sub(before.waiting),
        }
    }
}
