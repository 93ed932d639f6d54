//! Choosing a shader's variant for this device and options, specializing it and turning it into
//! a cached wgpu compute pipeline (with fallback to the next variant when one is refused).

use std::borrow::Cow;
use std::sync::Arc;

use crate::error::{DispatchError, Error, PipelineError, Result};
use crate::gpu::context::{Context, ShaderPath};
use crate::gpu::pipeline::{Kind, Pipeline, PipelineKey, Slot};
use crate::gpu::specialize::{Specialization, freeze, patch};
use crate::gpu::{samplers, smod};
use crate::meta::{
    Access, Binding, DescriptorKind, ImageDim, LocalSize, ShaderModule, ShaderVariant,
};
use crate::{Opt, OptionSet};

/// How much a variant is preferred when several fit: fp16 storage over packed over fp32, then
/// fp16 arithmetic, fp16 uniform, local memory; images only when asked for (they then win).
fn preference(options: OptionSet) -> u32 {
    [
        (Opt::Image, 64),
        (Opt::Fp16Storage, 16),
        (Opt::Fp16Packed, 8),
        (Opt::Fp16Arithmetic, 4),
        (Opt::Fp16Uniform, 2),
        (Opt::LocalMemory, 1),
    ]
    .into_iter()
    .filter(|(o, _)| options.contains(*o))
    .map(|(_, w)| w)
    .sum()
}

impl Context {
    /// The variants of `module` this context could run within `options` (intersected with what
    /// the device allows), best first.
    pub fn candidates<'m>(
        &self,
        module: &'m ShaderModule,
        options: OptionSet,
    ) -> Vec<&'m ShaderVariant> {
        let allowed = OptionSet::from_bits(options.bits() & self.allowed_options().bits());
        let mut fits: Vec<&ShaderVariant> = module
            .variants
            .iter()
            .filter(|v| v.options.is_subset_of(allowed) && self.supports(v.reflection.features))
            .collect();
        fits.sort_by_key(|v| std::cmp::Reverse(preference(v.options)));
        fits
    }

    /// [`Context::candidates`], or the error [`Context::pipeline`] gives when there are none: a
    /// layer's check at `create_pipeline` for pipelines it only makes once the shapes are known.
    pub fn fitting_variants<'m>(
        &self,
        module: &'m ShaderModule,
        options: OptionSet,
    ) -> Result<Vec<&'m ShaderVariant>> {
        let candidates = self.candidates(module, options);
        if candidates.is_empty() {
            return Err(self.no_variant(module, options));
        }
        Ok(candidates)
    }

    /// The error for `module` having no variant within `options` on this device.
    fn no_variant(&self, module: &ShaderModule, options: OptionSet) -> Error {
        let compiled: Vec<String> = module.variants.iter().map(|v| v.options.name()).collect();
        PipelineError::NoVariant {
            shader: module.name.to_string(),
            compiled: compiled.join(", "),
            allowed: OptionSet::from_bits(options.bits() & self.allowed_options().bits())
                .to_string(),
            features: format!("{:?}", self.features()),
        }
        .into()
    }

    /// The pipeline for the best variant of `module` within `options` (use
    /// [`Context::allowed_options`] for "everything the device allows"), specialized with `spec`.
    /// A variant the path rejects (naga lacks some SPIR-V features) falls back to the next best.
    /// Pipelines are cached per (module, variant, values, local size).
    pub fn pipeline(
        &self,
        module: &'static ShaderModule,
        options: OptionSet,
        spec: &Specialization,
    ) -> Result<Arc<Pipeline>> {
        let key = |options| PipelineKey {
            module: module as *const ShaderModule as usize,
            options,
            values: spec
                .values
                .iter()
                .map(|(id, val)| (*id, val.bits()))
                .collect(),
            local_size: spec.local_size,
        };
        let request = key(options);
        if let Some(p) = self
            .requested
            .lock()
            .ok()
            .and_then(|c| c.get(&request).cloned())
        {
            return Ok(p);
        }
        let remember = |p: &Arc<Pipeline>| {
            if let Ok(mut cache) = self.requested.lock() {
                cache.insert(request.clone(), p.clone());
            }
        };
        let mut last = None;
        for v in self.fitting_variants(module, options)? {
            let key = key(v.options);
            if let Some(p) = self.cached(&key) {
                remember(&p);
                return Ok(p);
            }
            match self.create_pipeline(&module.name, v, spec, &[]) {
                Ok(p) => {
                    let p = Arc::new(p);
                    if let Ok(mut cache) = self.pipelines.lock() {
                        cache.insert(key, p.clone());
                    }
                    remember(&p);
                    return Ok(p);
                }
                Err(e @ Error::Pipeline(PipelineError::Create { .. })) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| self.no_variant(module, options)))
    }

    /// A pipeline for SPIR-V that arrives at run time (a VGF module, a user's binary): reflected,
    /// run with the local size it declares. Not cached: keep the `Arc`.
    ///
    /// # Safety
    ///
    /// On the passthrough path ([`ShaderPath::Passthrough`]) wgpu hands the words to the Vulkan
    /// driver as they are: the caller promises they are a valid SPIR-V module for Vulkan (as
    /// `spirv-val --target-env vulkan1.1` accepts it) whose accesses stay within what is bound
    /// to it. Invalid SPIR-V there is undefined behaviour (a driver crash, a lost device).
    /// fpshader's own reflection reads the module first, so a malformed stream (bad magic,
    /// instructions running past the end) is an error, but no more is checked: naga's validator,
    /// the one in reach without a C++ toolchain, rejects valid modules glslang writes. On the
    /// naga path naga validates the module and nothing is promised.
    pub unsafe fn pipeline_from_spirv(&self, name: &str, words: &[u32]) -> Result<Arc<Pipeline>> {
        // SAFETY: the caller's promise
        unsafe { self.pipeline_from_spirv_filtering(name, words, &[]) }
    }

    /// [`Context::pipeline_from_spirv`] whose sampled images at the bindings `filtered` are
    /// read through filtering samplers (linear filtering; their textures must be of a
    /// filterable format). Other sampled images, as everywhere else, are non-filtering.
    ///
    ///
    /// # Safety
    ///
    /// As [`Context::pipeline_from_spirv`]'s.
    pub unsafe fn pipeline_from_spirv_filtering(
        &self,
        name: &str,
        words: &[u32],
        filtered: &[u32],
    ) -> Result<Arc<Pipeline>> {
        let reflection =
            fpshader_build::reflect::reflect(words).map_err(fpshader_build::Error::from)?;
        let local_size = reflection.local_size.default_size();
        let variant = ShaderVariant {
            options: OptionSet::default(),
            spirv: Cow::Owned(words.to_vec()),
            reflection,
        };
        let spec = Specialization {
            values: Vec::new(),
            local_size,
        };
        self.create_pipeline(name, &variant, &spec, filtered)
            .map(Arc::new)
    }

    fn cached(&self, key: &PipelineKey) -> Option<Arc<Pipeline>> {
        self.pipelines.lock().ok()?.get(key).cloned()
    }

    fn create_pipeline(
        &self,
        shader: &str,
        v: &ShaderVariant,
        spec: &Specialization,
        filtered: &[u32],
    ) -> Result<Pipeline> {
        let r = &v.reflection;
        // shaders that declare no size (glslang writes 1,1,1) get ncnn's default of 64 invocations
        let local_size = match (spec.local_size, &r.local_size) {
            (Some(s), _) => s,
            (
                None,
                LocalSize::Literal {
                    size: [1, 1, 1], ..
                },
            ) => [64, 1, 1],
            (None, other) => other.default_size().unwrap_or([1, 1, 1]),
        };
        let spec = Specialization {
            values: spec.values.clone(),
            local_size: Some(local_size),
        };
        let words = match self.path() {
            ShaderPath::Passthrough => patch(&v.spirv, r, &spec)?,
            ShaderPath::Naga => freeze(&v.spirv, r, &spec)?,
        };

        let fail = |message: String| PipelineError::Create {
            shader: shader.to_string(),
            variant: v.options.name(),
            message,
        };
        // shared memory over the device's bound can hang a driver at pipeline creation (seen on
        // NVIDIA) instead of failing: refuse it here, from the specialized module's sizes
        let shared =
            fpshader_build::reflect::workgroup_memory(&words).map_err(|e| fail(e.to_string()))?;
        let limit = self.limits().max_compute_workgroup_storage_size;
        if let Some(bytes) = shared.filter(|&b| b > u64::from(limit)) {
            return Err(fail(format!(
                "it declares {bytes} bytes of workgroup memory; the device allows {limit}"
            ))
            .into());
        }
        let first_free = r.bindings.iter().map(|b| b.binding + 1).max().unwrap_or(0);
        let split = samplers::split(&words, first_free).map_err(|e| fail(e.to_string()))?;
        let words = match self.path() {
            ShaderPath::Naga => smod::exact(&split.words)
                .map_err(|e| fail(e.to_string()))?
                .unwrap_or(split.words),
            ShaderPath::Passthrough => split.words,
        };
        if let Some(dir) = &self.spirv_dump {
            let variant = v.options.name();
            super::dump::write(dir, shader, &variant, &words, &spec)
                .map_err(|e| fail(format!("writing its SPIR-V to {}: {e}", dir.display())))?;
        }
        let mut entries = Vec::new();
        let mut slots = Vec::new();
        for n in 0..first_free {
            let b = r.bindings.iter().find(|b| b.binding == n);
            if let Some(b) = b.filter(|b| b.set != 0) {
                return Err(DispatchError::Binding {
                    binding: b.binding,
                    problem: format!("descriptor set {} is not supported, only set 0", b.set),
                }
                .into());
            }
            let (slot, ty) = match b {
                None => (Slot::Gap, storage(true)),
                Some(b) => layout_entry(b, filtered.contains(&n))
                    .map_err(|m| fail(format!("binding {n}: {m}")))?,
            };
            slots.push(slot);
            entries.push(wgpu::BindGroupLayoutEntry {
                binding: n,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty,
                count: None,
            });
        }
        for &(texture, ref sampler) in &split.samplers {
            slots.push(Slot::Sampler(Some(texture)));
            let filtering = if filtered.contains(&texture) {
                wgpu::SamplerBindingType::Filtering
            } else {
                wgpu::SamplerBindingType::NonFiltering
            };
            entries.push(wgpu::BindGroupLayoutEntry {
                binding: *sampler,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Sampler(filtering),
                count: None,
            });
        }
        let immediate_size = r
            .push_constants
            .as_ref()
            .map_or(0, |pc| pc.size.div_ceil(4) * 4);
        if immediate_size > self.limits().max_immediate_size {
            return Err(fail(format!(
                "push constants of {immediate_size} bytes exceed the device's {}",
                self.limits().max_immediate_size
            ))
            .into());
        }

        let device = &self.device;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = match self.path() {
            // SAFETY: the SPIR-V comes from glslang (validated in our tests with spirv-val) and was
            // only patched at offsets reflection found; the layout below matches its bindings.
            ShaderPath::Passthrough => unsafe {
                device.create_shader_module_passthrough(wgpu::ShaderModuleDescriptorPassthrough {
                    label: Some(shader),
                    entry_points: Cow::Owned(vec![wgpu::PassthroughShaderEntryPoint {
                        name: Cow::Owned(r.entry_point.to_string()),
                        workgroup_size: (local_size[0], local_size[1], local_size[2]),
                    }]),
                    spirv: Some(Cow::Owned(words)),
                    ..Default::default()
                })
            },
            ShaderPath::Naga => device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(shader),
                source: wgpu::ShaderSource::SpirV(Cow::Owned(words)),
            }),
        };
        let bind_group_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(shader),
            entries: &entries,
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(shader),
            bind_group_layouts: &[Some(&bind_group_layout)],
            immediate_size,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(shader),
            layout: Some(&layout),
            module: &module,
            entry_point: Some(&r.entry_point),
            compilation_options: Default::default(),
            cache: None,
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(fail(e.to_string()).into());
        }
        Ok(Pipeline {
            pipeline,
            bind_group_layout,
            slots,
            shader: shader.to_string(),
            options: v.options,
            local_size,
            reflection: r.clone(),
            bind_groups: std::sync::Mutex::new(Vec::new()),
        })
    }
}

/// The layout of one declared binding.
fn layout_entry(
    b: &Binding,
    filterable: bool,
) -> std::result::Result<(Slot, wgpu::BindingType), String> {
    let dim = || match b.image_dim {
        Some(ImageDim::D1) => Ok(wgpu::TextureViewDimension::D1),
        Some(ImageDim::D2) => Ok(wgpu::TextureViewDimension::D2),
        Some(ImageDim::D3) => Ok(wgpu::TextureViewDimension::D3),
        Some(ImageDim::Cube) => Ok(wgpu::TextureViewDimension::Cube),
        other => Err(format!("image dimension {other:?} is not supported")),
    };
    Ok(match b.kind {
        // naga modules keep readonly; freeze made writeonly buffers read-write, which
        // reflection of the original still calls WriteOnly: both are not read-only
        DescriptorKind::StorageBuffer => (
            Slot::Declared(Kind::Storage),
            storage(b.access == Access::ReadOnly),
        ),
        DescriptorKind::UniformBuffer => (
            Slot::Declared(Kind::Uniform),
            wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
        ),
        // image loads are texel fetches: any float format, no filtering (unless asked for)
        DescriptorKind::CombinedImageSampler | DescriptorKind::SampledImage => {
            let dim = dim()?;
            (
                Slot::Declared(Kind::Texture(dim)),
                wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Float { filterable },
                    view_dimension: dim,
                    multisampled: false,
                },
            )
        }
        DescriptorKind::Sampler => (
            Slot::Sampler(None),
            wgpu::BindingType::Sampler(wgpu::SamplerBindingType::NonFiltering),
        ),
        DescriptorKind::StorageImage => {
            let dim = dim()?;
            let name = b.image_format.as_deref().unwrap_or("Unknown");
            let format = texture_format(name)
                .ok_or_else(|| format!("storage image format {name} is not supported"))?;
            let access = match b.access {
                Access::ReadOnly => wgpu::StorageTextureAccess::ReadOnly,
                Access::WriteOnly => wgpu::StorageTextureAccess::WriteOnly,
                Access::ReadWrite => wgpu::StorageTextureAccess::ReadWrite,
            };
            (
                Slot::Declared(Kind::StorageTexture(dim, format)),
                wgpu::BindingType::StorageTexture {
                    access,
                    format,
                    view_dimension: dim,
                },
            )
        }
        kind => {
            return Err(format!(
                "{kind:?} bindings are not supported by this runtime"
            ));
        }
    })
}

/// The wgpu format of a SPIR-V storage image format (as reflection names it).
fn texture_format(spirv_name: &str) -> Option<wgpu::TextureFormat> {
    use wgpu::TextureFormat as F;
    Some(match spirv_name {
        "Rgba32f" => F::Rgba32Float,
        "Rgba16f" => F::Rgba16Float,
        "Rg32f" => F::Rg32Float,
        "Rg16f" => F::Rg16Float,
        "R32f" => F::R32Float,
        "R16f" => F::R16Float,
        "Rgba8" => F::Rgba8Unorm,
        "Rgba32ui" => F::Rgba32Uint,
        "Rgba32i" => F::Rgba32Sint,
        "R32ui" => F::R32Uint,
        "R32i" => F::R32Sint,
        _ => return None,
    })
}

fn storage(read_only: bool) -> wgpu::BindingType {
    wgpu::BindingType::Buffer {
        ty: wgpu::BufferBindingType::Storage { read_only },
        has_dynamic_offset: false,
        min_binding_size: None,
    }
}
