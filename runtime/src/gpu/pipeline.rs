//! A compute pipeline and what keys it: the pipeline of one variant and specialization, its
//! binding slots, the cache key, and the bind-group key (created in `gpu/variant.rs`).

use crate::OptionSet;
use crate::meta::Reflection;

/// A ready compute pipeline for one variant, specialization and local size.
#[derive(Debug)]
pub struct Pipeline {
    pub(crate) pipeline: wgpu::ComputePipeline,
    pub(crate) bind_group_layout: wgpu::BindGroupLayout,
    /// What goes in each wgpu binding, in binding order (gap fillers and samplers included).
    pub(crate) slots: Vec<Slot>,
    /// The shader's name.
    pub shader: String,
    /// The variant's options (tells which storage layout the buffers must have).
    pub options: OptionSet,
    /// The workgroup size the pipeline runs with.
    pub local_size: [u32; 3],
    /// What the variant declares.
    pub reflection: Reflection,
    /// Recently used bind groups by their buffers: re-recording a dispatch over the same buffers,
    /// the common case in a network, must not create a bind group each time.
    pub(crate) bind_groups: std::sync::Mutex<Vec<(Vec<Held>, wgpu::BindGroup)>>,
}

impl Pipeline {
    /// The wgpu pipeline, for recording it by hand.
    pub fn wgpu_pipeline(&self) -> &wgpu::ComputePipeline {
        &self.pipeline
    }

    /// Its bind group layout (binding gaps included).
    pub fn bind_group_layout(&self) -> &wgpu::BindGroupLayout {
        &self.bind_group_layout
    }
}

/// What one wgpu binding of a pipeline holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// A binding the shader declares: the caller gives its resource.
    Declared(Kind),
    /// A binding number the shader skips: a dummy buffer keeps the layout dense.
    Gap,
    /// A sampler: the half of the split combined image-sampler whose texture binding it holds
    /// takes the sampler given with that texture ([`Resource::Sampled`]); else, and for a
    /// sampler the shader declares alone, the context's.
    ///
    /// [`Resource::Sampled`]: crate::gpu::recorder::Resource::Sampled
    Sampler(Option<u32>),
}

/// The resource a declared binding takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A storage buffer.
    Storage,
    /// A uniform buffer.
    Uniform,
    /// A texture read through a sampler (texel fetches).
    Texture(wgpu::TextureViewDimension),
    /// A storage image.
    StorageTexture(wgpu::TextureViewDimension, wgpu::TextureFormat),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PipelineKey {
    pub(crate) module: usize,
    pub(crate) options: OptionSet,
    pub(crate) values: Vec<(u32, u32)>,
    pub(crate) local_size: Option<[u32; 3]>,
}

/// A bind group cache key: the resources by identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Held {
    Buffer(wgpu::Buffer),
    Texture(wgpu::TextureView),
    Sampled(wgpu::TextureView, wgpu::Sampler),
}
