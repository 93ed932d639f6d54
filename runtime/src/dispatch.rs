//! Recording dispatches (many per submission), and moving buffer data in and out.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::pipeline::Pipeline;

/// Records dispatches into one command encoder; [`Recorder::submit_and_wait`] runs them all.
pub struct Recorder<'c> {
    ctx: &'c Context,
    encoder: wgpu::CommandEncoder,
    dispatches: usize,
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
            dispatches: 0,
        }
    }

    /// A storage buffer holding `bytes` (also usable as copy source and destination).
    pub fn upload(&self, bytes: &[u8]) -> wgpu::Buffer {
        let size = (bytes.len() as u64).div_ceil(4).max(1) * 4;
        let buffer = self.storage_buffer(size);
        if !bytes.is_empty() {
            let mut padded = bytes.to_vec();
            padded.resize(size as usize, 0);
            self.queue.write_buffer(&buffer, 0, &padded);
        }
        buffer
    }

    /// An uninitialized storage buffer of `size` bytes (rounded up to 4).
    pub fn storage_buffer(&self, size: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("fpshader storage"),
            size: size.div_ceil(4).max(1) * 4,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
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

impl Recorder<'_> {
    /// Records one dispatch of `pipeline` over `global` invocations (rounded up to whole
    /// workgroups, like ncnn's dispatcher). `buffers` go to the shader's declared bindings in
    /// binding order; `push` holds the push-constant block as 4-byte words (ncnn's
    /// `vk_constant_type`), empty when the shader has none.
    pub fn dispatch(
        &mut self,
        pipeline: &Pipeline,
        buffers: &[&wgpu::Buffer],
        push: &[u32],
        global: [u32; 3],
    ) -> Result<()> {
        let declared = pipeline.declared.iter().filter(|d| **d).count();
        if buffers.len() != declared {
            let missing = pipeline
                .reflection
                .bindings
                .get(buffers.len().min(declared))
                .map_or(0, |b| b.binding);
            return Err(Error::Binding {
                binding: missing,
                problem: format!(
                    "`{}` declares {declared} bindings, {} buffers were given",
                    pipeline.shader,
                    buffers.len()
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

        // what wgpu would reject when creating the bind group, reported instead of panicking
        for (b, buffer) in pipeline.reflection.bindings.iter().zip(buffers) {
            let usage = match b.kind {
                crate::meta::DescriptorKind::UniformBuffer => wgpu::BufferUsages::UNIFORM,
                _ => wgpu::BufferUsages::STORAGE,
            };
            if !buffer.usage().contains(usage) {
                return Err(Error::Binding {
                    binding: b.binding,
                    problem: format!("the buffer lacks {usage:?} usage"),
                });
            }
        }
        let bind_group = self.bind_group(pipeline, buffers);
        let mut pass = self
            .encoder
            .begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(&pipeline.shader),
                timestamp_writes: None,
            });
        pass.set_pipeline(&pipeline.pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        if !push.is_empty() {
            let bytes: Vec<u8> = push.iter().flat_map(|w| w.to_le_bytes()).collect();
            pass.set_immediates(0, &bytes);
        }
        pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
        drop(pass);
        self.dispatches += 1;
        Ok(())
    }

    /// The bind group of `buffers` for `pipeline`, cached on the pipeline. The buffers were checked
    /// against the layout by the caller, so creating it cannot fail validation.
    fn bind_group(&self, pipeline: &Pipeline, buffers: &[&wgpu::Buffer]) -> wgpu::BindGroup {
        const KEEP: usize = 32;
        let key: Vec<wgpu::Buffer> = buffers.iter().map(|b| (*b).clone()).collect();
        let hit = pipeline.bind_groups.lock().ok().and_then(|cache| {
            cache
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, group)| group.clone())
        });
        if let Some(group) = hit {
            return group;
        }
        let mut given = buffers.iter();
        let entries: Vec<wgpu::BindGroupEntry> = pipeline
            .declared
            .iter()
            .enumerate()
            .map(|(n, declared)| {
                let buffer = match declared.then(|| given.next()).flatten() {
                    Some(b) => *b,
                    None => &self.ctx.dummy,
                };
                wgpu::BindGroupEntry {
                    binding: n as u32,
                    resource: buffer.as_entire_binding(),
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
        let device = &self.ctx.device;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let index = self.ctx.queue.submit([self.encoder.finish()]);
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(Error::Gpu(e.to_string()));
        }
        device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: None,
            })
            .map_err(|e| Error::Gpu(e.to_string()))?;
        Ok(())
    }
}
