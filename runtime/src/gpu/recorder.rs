//! Recording dispatches (many per submission), copies and read-backs into one submission.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Instant;

use crate::error::{DeviceError, DispatchError, Result};
use crate::gpu::context::Context;
use crate::gpu::pipeline::{Held, Kind, Pipeline, Slot};
use crate::gpu::pool::DeviceBuffer;
use crate::gpu::stats::SubmissionStats;
use crate::gpu::submitter::Submitted;
use crate::gpu::tickets;
use crate::gpu::timing::{ChunkQueries, PendingTimes};

/// Records dispatches; [`Recorder::submit_and_wait`] runs them all and waits.
///
/// A long recording is handed to the context's submission thread in chunks as it grows (8
/// dispatches, then 16 per chunk) without waiting, so the device starts on the first layers
/// while the host still records the rest: recording a zoo model costs the host about as long
/// as the device takes to run it, and one submission at the end put the two back to back.
pub struct Recorder<'c> {
    ctx: &'c Context,
    /// Which recorder this is, for the pool ([`crate::gpu::tickets`]), and the ticket of the
    /// chunk being recorded, once it holds a command.
    id: u64,
    ticket: Option<u64>,
    encoder: wgpu::CommandEncoder,
    /// One compute pass for a chunk's dispatches (one per dispatch only while timing): wgpu
    /// orders dispatches inside a pass by their resource usage, and a pass per dispatch cost
    /// about 1% of a memory-bound dispatch's time on an H200 (see the README's overhead figures).
    pass: Option<wgpu::ComputePass<'static>>,
    dispatches: usize,
    /// Dispatches and copies recorded since the last chunk went to the queue, and the size of the next.
    unsubmitted: usize,
    chunk: usize,
    /// Chunks handed to the context's submission thread, and where their outcomes come back.
    submitted: u64,
    outcomes: (Sender<Submitted>, Receiver<Submitted>),
    /// With timing on ([`Context::set_timing`]): the label of what is recorded now, this
    /// chunk's queries, and the submitted chunks' times to read after the wait.
    label: String,
    queries: Option<ChunkQueries>,
    times: Vec<PendingTimes>,
    /// When recording began (for [`Context::submission_stats`]).
    started: Instant,
}

/// The first chunk's dispatches, and the most in one chunk: a small first chunk starts the
/// device early, and small chunks after it keep the device fed while the host records the
/// rest. With chunks of up to 64 the device sat idle while the host recorded each large one
/// and ran it after: on an H200 shufflenet_v2 took 1.37 ms with 64, 0.95 with 16 (zoo models
/// of many small layers 20–40% faster, the others within noise).
const FIRST_CHUNK: usize = 8;
const LARGEST_CHUNK: usize = 16;

impl Context {
    /// A recorder for a batch of dispatches.
    pub fn recorder(&self) -> Recorder<'_> {
        Recorder {
            ctx: self,
            id: tickets::enter_recorder(),
            ticket: None,
            encoder: self.encoder(),
            pass: None,
            dispatches: 0,
            unsubmitted: 0,
            chunk: FIRST_CHUNK,
            submitted: 0,
            outcomes: channel(),
            label: String::new(),
            queries: None,
            times: Vec::new(),
            started: Instant::now(),
        }
    }

    /// Submissions so far and the time spent recording them and waiting for them: where a
    /// run's time goes on the host and on the device (`fpshader bench --profile`).
    pub fn submission_stats(&self) -> SubmissionStats {
        self.stats.snapshot()
    }

    fn encoder(&self) -> wgpu::CommandEncoder {
        self.device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("fpshader"),
            })
    }
}

/// What a declared binding is given: a buffer, or a texture view for image bindings.
#[derive(Clone, Copy, Debug)]
pub enum Resource<'a> {
    /// A storage or uniform buffer.
    Buffer(&'a wgpu::Buffer),
    /// A sampled texture or storage image (a full view of the texture).
    Texture(&'a wgpu::TextureView),
    /// A texture read through a `sampler*D` with this sampler instead of the context's (a
    /// filtering one only where the pipeline made that binding filtering:
    /// [`Context::pipeline_from_spirv_filtering`]).
    Sampled(&'a wgpu::TextureView, &'a wgpu::Sampler),
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

impl Resource<'_> {
    fn held(self) -> Held {
        match self {
            Resource::Buffer(b) => Held::Buffer(b.clone()),
            Resource::Texture(v) => Held::Texture(v.clone()),
            Resource::Sampled(v, s) => Held::Sampled(v.clone(), s.clone()),
        }
    }
}

/// What wgpu would reject when creating the bind group, as an error instead of a panic.
fn check(binding: u32, kind: Kind, resource: Resource<'_>, limits: &wgpu::Limits) -> Result<()> {
    let problem = |problem: String| Err(DispatchError::Binding { binding, problem }.into());
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
                return Err(DispatchError::BindingTooLarge {
                    binding,
                    bytes: buffer.size(),
                    limit,
                }
                .into());
            }
        }
        (
            Kind::Texture(dim) | Kind::StorageTexture(dim, _),
            Resource::Texture(view) | Resource::Sampled(view, _),
        ) => {
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
        (Kind::Storage | Kind::Uniform, Resource::Texture(_) | Resource::Sampled(..)) => {
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
        if self.ctx.is_lost() {
            return self.ctx.check_device();
        }
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
            return Err(DispatchError::Binding {
                binding: missing,
                problem: format!(
                    "`{}` declares {declared} bindings, {} resources were given",
                    pipeline.shader,
                    resources.len()
                ),
            }
            .into());
        }
        let expected = pipeline
            .reflection
            .push_constants
            .as_ref()
            .map_or(0, |p| p.size);
        if push.len() as u32 * 4 != expected.div_ceil(4) * 4 {
            return Err(DispatchError::PushConstants {
                shader: pipeline.shader.clone(),
                expected,
                words: push.len(),
            }
            .into());
        }
        let limit = self.ctx.limits().max_compute_workgroups_per_dimension;
        let groups = [0, 1, 2].map(|i| global[i].div_ceil(pipeline.local_size[i]));
        if groups.iter().any(|g| *g > limit) {
            return Err(DispatchError::TooLarge { groups, limit }.into());
        }
        if groups.contains(&0) {
            return Ok(());
        }
        for ((binding, kind), resource) in kinds().zip(&resources) {
            check(binding, kind, *resource, self.ctx.limits())?;
        }
        let bind_group = self.bind_group(pipeline, &resources);
        if self.ctx.timing() {
            // a pass of its own, timed from its start to its end
            drop(self.pass.take());
            let queries = self
                .queries
                .get_or_insert_with(|| ChunkQueries::new(&self.ctx.device, LARGEST_CHUNK as u32));
            let writes = queries.next(&self.label, &pipeline.shader);
            self.pass = Some(
                self.encoder
                    .begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("fpshader"),
                        timestamp_writes: writes,
                    })
                    .forget_lifetime(),
            );
        }
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
        self.recorded();
        if self.unsubmitted >= self.chunk {
            self.submit_chunk()?;
            self.chunk = (self.chunk * 2).min(LARGEST_CHUNK);
        }
        Ok(())
    }

    /// Counts one recorded command; the first since the last chunk opens the chunk's ticket,
    /// so buffers freed from now on wait for it ([`crate::gpu::tickets`]).
    fn recorded(&mut self) {
        if self.ticket.is_none() {
            self.ticket = self.ctx.pool.tickets(|t| t.open(self.id));
        }
        self.unsubmitted += 1;
    }

    /// Labels what is recorded from now on, for [`Context::take_timings`] (the net labels each
    /// layer's dispatches with the layer's name).
    pub fn set_label(&mut self, label: &str) {
        if self.ctx.timing() {
            label.clone_into(&mut self.label);
        }
    }

    /// Hands what was recorded so far to the context's submission thread, which submits it
    /// while this recorder goes on, and starts a new encoder. Later chunks run after it: the
    /// thread submits in order, one queue runs submissions in order, and wgpu orders each
    /// buffer's uses across them as it does inside one.
    fn submit_chunk(&mut self) -> Result<()> {
        if let Some(queries) = self.queries.take() {
            drop(self.pass.take());
            self.times
                .push(queries.resolve(&self.ctx.device, &mut self.encoder));
        }
        let encoder = std::mem::replace(&mut self.encoder, self.ctx.encoder());
        self.unsubmitted = 0;
        // the ticket leaves the open set once the chunk is in the thread's channel (another
        // recorder's chunk using its freed buffers must come after it there), and the
        // unsubmitted set once the thread submitted it
        let ticket = self.ticket.take();
        self.ctx.submitter.submit(
            &self.ctx.device,
            &self.ctx.queue,
            self.pass.take(),
            encoder,
            &self.outcomes.0,
            ticket.map(|t| (t, self.ctx.pool.clone())),
        );
        if let Some(t) = ticket {
            self.ctx.pool.tickets(|tickets| tickets.hand_over(t));
        }
        self.submitted += 1;
        Ok(())
    }

    /// The bind group of `resources` for `pipeline`, cached on the pipeline. The resources were
    /// checked against the layout by the caller, so creating it cannot fail validation.
    fn bind_group(&self, pipeline: &Pipeline, resources: &[Resource<'_>]) -> wgpu::BindGroup {
        // enough for a pipeline shared by many layers (Concat's in googlenet: 36 dispatches)
        const KEEP: usize = 64;
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
        // the resource given for each declared binding, by binding number
        let mut given = resources.iter();
        let at: Vec<Option<&Resource<'_>>> = (pipeline.slots.iter())
            .map(|slot| match slot {
                Slot::Declared(_) => given.next(),
                _ => None,
            })
            .collect();
        let entries: Vec<wgpu::BindGroupEntry> = pipeline
            .slots
            .iter()
            .enumerate()
            .map(|(n, slot)| {
                let resource = match (slot, at[n]) {
                    (Slot::Declared(_), Some(Resource::Buffer(b))) => b.as_entire_binding(),
                    (Slot::Declared(_), Some(Resource::Texture(v) | Resource::Sampled(v, _))) => {
                        wgpu::BindingResource::TextureView(v)
                    }
                    (Slot::Sampler(texture), _) => {
                        match texture.and_then(|t| at.get(t as usize).copied().flatten()) {
                            Some(Resource::Sampled(_, s)) => wgpu::BindingResource::Sampler(s),
                            _ => wgpu::BindingResource::Sampler(&self.ctx.sampler),
                        }
                    }
                    _ => self.ctx.dummy.as_entire_binding(),
                };
                // slots are dense: gaps are filled and samplers follow the highest binding
                wgpu::BindGroupEntry {
                    binding: n as u32,
                    resource,
                }
            })
            .collect();
        self.ctx.stats.bind_groups.fetch_add(1, Ordering::Relaxed);
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

    /// Records a copy of all of `buffer` into a new host-readable buffer, which
    /// [`Context::read_mapped`] reads once this recording has been waited for: a download that
    /// joins the recording instead of a submission of its own.
    pub fn record_readback(&mut self, buffer: &wgpu::Buffer) -> wgpu::Buffer {
        let reused = self.ctx.readbacks.lock().ok().and_then(|mut free| {
            let at = free.iter().position(|b| b.size() == buffer.size())?;
            Some(free.swap_remove(at))
        });
        let staging = reused.unwrap_or_else(|| {
            self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("fpshader readback"),
                size: buffer.size(),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        self.copy_buffer(buffer, &staging);
        staging
    }

    /// Records a copy of all of `from` into `to` (between dispatches, in order).
    pub fn copy_buffer(&mut self, from: &wgpu::Buffer, to: &wgpu::Buffer) {
        // copies cannot happen inside a compute pass: end it, the next dispatch opens another
        drop(self.pass.take());
        self.encoder
            .copy_buffer_to_buffer(from, 0, to, 0, from.size().min(to.size()));
        self.recorded();
    }

    /// Records a copy of `size` bytes of `from` from byte `at` into `to` at byte `into`
    /// (offsets and size multiples of 4, as wgpu wants).
    pub fn copy_buffer_range(
        &mut self,
        (from, at): (&wgpu::Buffer, u64),
        (to, into): (&wgpu::Buffer, u64),
        size: u64,
    ) {
        drop(self.pass.take());
        self.encoder.copy_buffer_to_buffer(from, at, to, into, size);
        self.recorded();
    }

    /// Records a copy of all of `from` into `to` (same size and format).
    pub fn copy_texture(&mut self, from: &wgpu::Texture, to: &wgpu::Texture) {
        drop(self.pass.take());
        self.encoder
            .copy_texture_to_texture(from.as_image_copy(), to.as_image_copy(), from.size());
        self.recorded();
    }

    /// Records a copy between `buffer` (texels packed row after row, from offset 0) and all of
    /// the 2-D `texture`, into the texture with `to_texture`, else out of it. One copy per row:
    /// a single row needs no `bytes_per_row` (which wgpu wants 256-byte aligned), so any width
    /// copies without a padded staging buffer.
    pub fn copy_rows(&mut self, buffer: &wgpu::Buffer, texture: &wgpu::Texture, to_texture: bool) {
        drop(self.pass.take());
        let size = texture.size();
        let texel = u64::from(texture.format().block_copy_size(None).unwrap_or(4));
        let row = u64::from(size.width) * texel;
        for y in 0..size.height {
            let rows = wgpu::TexelCopyBufferInfo {
                buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: u64::from(y) * row,
                    bytes_per_row: None,
                    rows_per_image: None,
                },
            };
            let image = wgpu::TexelCopyTextureInfo {
                origin: wgpu::Origin3d { x: 0, y, z: 0 },
                ..texture.as_image_copy()
            };
            let extent = wgpu::Extent3d {
                height: 1,
                depth_or_array_layers: 1,
                ..size
            };
            if to_texture {
                self.encoder.copy_buffer_to_texture(rows, image, extent);
            } else {
                self.encoder.copy_texture_to_buffer(image, rows, extent);
            }
        }
        self.recorded();
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
    pub fn submit_and_wait(self) -> Result<()> {
        self.submit_and_wait_overlapping(|| ())
    }

    /// [`Recorder::submit_and_wait`], running `meanwhile` on this thread once the last chunk
    /// went to the submission thread: host work that needs no result of the GPU's (preparing
    /// the memory a download lands in) then overlaps the device's.
    pub fn submit_and_wait_overlapping(mut self, meanwhile: impl FnOnce()) -> Result<()> {
        // the last chunk, unless the last dispatch ended one
        if self.unsubmitted > 0 || self.submitted == 0 {
            self.submit_chunk()?;
        }
        meanwhile();
        // every chunk's outcome, in order: the first error stands (later chunks may fail
        // only because of it), else the last chunk's index is the one to wait for
        let mut last = None;
        let mut failed = None;
        for _ in 0..self.submitted {
            let outcome = self
                .outcomes
                .1
                .recv()
                .map_err(|_| DeviceError::SubmitterGone)?;
            let stats = &self.ctx.stats;
            stats.add(&stats.submit_ns, outcome.took);
            match outcome.index {
                Ok(index) => last = Some(index),
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        if let Some(e) = failed {
            return Err(self.ctx.fault("a submission", e));
        }
        let recorded = Instant::now();
        // `None` (nothing submitted here): whatever was submitted before
        self.ctx.wait_for(last, "the recorded work")?;
        let stats = &self.ctx.stats;
        stats
            .submissions
            .fetch_add(self.submitted, Ordering::Relaxed);
        stats.add(&stats.record_ns, recorded - self.started);
        stats.add(&stats.wait_ns, recorded.elapsed());
        for times in std::mem::take(&mut self.times) {
            let period_ns = f64::from(self.ctx.queue.get_timestamp_period());
            times.collect(|b| self.ctx.read_mapped(b), period_ns, &self.ctx.timings)?;
        }
        Ok(())
    }
}

impl Drop for Recorder<'_> {
    fn drop(&mut self) {
        // what was recorded and not submitted is dropped with the encoder
        if let Some(t) = self.ticket.take() {
            self.ctx.pool.tickets(|tickets| tickets.close(t));
        }
        tickets::leave_recorder(self.id);
    }
}
