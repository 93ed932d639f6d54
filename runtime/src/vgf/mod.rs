//! Running VGF files on any wgpu GPU: every compute segment becomes a pipeline at load, every
//! data-graph segment a chain of lowered compute shaders (its `graph` module), constants buffers of the
//! model's own (uploaded once), every other resource a storage buffer per run (resources of
//! one alias group share one), and a run records the steps in sequence
//! order in one recording; wgpu's barriers between dispatches give the ordering the seed asks
//! for between partitions (a segment reads only what earlier ones wrote).

mod glsl;
mod graph;
mod image;

use std::collections::BTreeMap;
use std::sync::Arc;

use fpshader_build::vgf::{self, BindingSlot, ModuleCode, ModuleType, Resource, Vgf};

use crate::error::{Error, Result};
use crate::gpu::{Context, DeviceBuffer, Pipeline, Resource as Bound};
use image::ImageBinding;

/// A loaded VGF model, ready to run on one context.
pub struct VgfModel {
    vgf: Vgf,
    steps: Vec<Step>,
    /// Buffers of the model's own: constants and graph segments' intermediate values.
    locals: Vec<DeviceBuffer>,
    /// The resource whose buffer each resource uses: the first of its alias group, else itself.
    owners: Vec<u32>,
    /// The image resources custom shaders bind.
    images: Vec<ImageBinding>,
}

/// Where a dispatch's binding lives.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// A model resource (by model-resource-table index), made per run.
    Resource(u32),
    /// One of the model's own buffers.
    Local(usize),
    /// An image resource (by index in [`VgfModel::images`]), a texture per run.
    Image(usize),
}

/// One dispatch of a run.
struct Step {
    label: String,
    pipeline: Arc<Pipeline>,
    /// Bindings 0, 1, … of the pipeline.
    bindings: Vec<Slot>,
    /// Invocations in x, y, z.
    global: [u32; 3],
    /// Images the segment reads: their buffers copied in before the dispatch.
    images_in: Vec<usize>,
    /// Images the segment writes: copied out to their buffers after it.
    images_out: Vec<usize>,
}

fn problem(what: impl Into<String>, problem: impl Into<String>) -> Error {
    Error::Vgf {
        what: what.into(),
        problem: problem.into(),
    }
}

impl VgfModel {
    /// Reads a VGF file and builds its pipelines. Placeholder modules (no code) take their
    /// SPIR-V from `substitutions`, by module name.
    ///
    /// # Safety
    ///
    /// The file's compute modules and the substitutions are SPIR-V that reaches the driver as
    /// it is on the passthrough path: the caller promises it is valid for Vulkan, as
    /// [`Context::pipeline_from_spirv`] asks (what Arm's model converter and glslang write).
    /// Everything else in the file (its sections, sequence, resources and constants) is
    /// checked: a malformed file is an error.
    pub unsafe fn load(
        ctx: &Context,
        bytes: &[u8],
        substitutions: &BTreeMap<String, Vec<u32>>,
    ) -> Result<Self> {
        let vgf = vgf::read(bytes)?;
        let mut steps = Vec::with_capacity(vgf.sequence.segments.len());
        let mut locals = Vec::new();
        let mut cache = graph::PipelineCache::new();
        // constants a compute segment binds: uploaded once, by resource
        let mut constant_locals: BTreeMap<u32, usize> = BTreeMap::new();
        let mut images: Vec<ImageBinding> = Vec::new();
        for s in &vgf.sequence.segments {
            let what = format!("segment `{}`", s.name);
            let module = vgf
                .modules
                .get(s.module_index as usize)
                .ok_or_else(|| problem(&what, "its module index is out of range"))?;
            if s.ty != module.ty {
                return Err(problem(
                    &what,
                    format!(
                        "is a {} segment running the {} module `{}`",
                        s.ty.name(),
                        module.ty.name(),
                        module.name
                    ),
                ));
            }
            if s.ty == ModuleType::Graph {
                let ModuleCode::Spirv(words) = &module.code else {
                    return Err(problem(&what, "its graph module carries no SPIR-V"));
                };
                steps.extend(graph::steps(
                    ctx,
                    &vgf,
                    s,
                    words,
                    &module.entry_point,
                    &mut locals,
                    &mut cache,
                )?);
                continue;
            }
            let words = match &module.code {
                ModuleCode::Spirv(words) => words.clone(),
                ModuleCode::None => substitutions.get(&module.name).cloned().ok_or_else(|| {
                    problem(
                        &what,
                        format!(
                            "module `{}` is a placeholder and no shader was supplied for it",
                            module.name
                        ),
                    )
                })?,
                // Arm's converter stores GLSL as source: naga compiles it here
                ModuleCode::Glsl(source) => glsl::compile(source).map_err(|e| {
                    problem(
                        &what,
                        format!("the GLSL of module `{}` does not compile: {e}", module.name),
                    )
                })?,
                ModuleCode::Hlsl(_) => {
                    return Err(problem(
                        &what,
                        format!(
                            "module `{}` carries HLSL source, which fpshader compiles only ahead of \
                             time (convert the model with fpshaderc vgf)",
                            module.name
                        ),
                    ));
                }
            };
            if s.dispatch_shape.len() != 3 {
                return Err(problem(
                    &what,
                    format!("dispatch shape {:?} is not 3 numbers", s.dispatch_shape),
                ));
            }
            // every binding with its set, in (set, binding) order: the order of the one bind
            // group a shader with several sets runs with (its bindings renumbered into set 0)
            let mut bindings: Vec<(u32, &vgf::BindingSlot)> = (s.set_infos.iter().enumerate())
                .flat_map(|(i, d)| {
                    let set = d.set_index.unwrap_or(i as u32);
                    d.bindings.iter().map(move |b| (set, b))
                })
                .collect();
            bindings.sort_by_key(|(set, b)| (*set, b.binding));
            let several_sets = bindings.iter().any(|(set, _)| *set != 0);
            // tensors the shader binds (SPV_ARM_tensors) become storage buffers of their
            // resources' shapes
            let shape_of = |set: u32, binding: u32| {
                (s.set_infos.iter().enumerate())
                    .filter(|(i, d)| d.set_index.unwrap_or(*i as u32) == set)
                    .flat_map(|(_, d)| d.bindings.iter())
                    .find(|b| b.binding == binding)
                    .and_then(|b| vgf.resources.get(b.mrt_index as usize))
                    .map(|r| r.shape.clone())
            };
            let words = match fpshader_build::vgf::tensors::rewrite(&words, &shape_of) {
                Ok(Some(rewritten)) => rewritten,
                Ok(None) => words,
                Err(e) => {
                    return Err(problem(
                        &what,
                        format!("the tensors of module `{}`: {e}", module.name),
                    ));
                }
            };
            let words = if several_sets {
                let order: Vec<(u32, u32)> =
                    bindings.iter().map(|(set, b)| (*set, b.binding)).collect();
                fpshader_build::vgf::sets::flatten_sets(&words, &order).map_err(|e| {
                    problem(&what, format!("the sets of module `{}`: {e}", module.name))
                })?
            } else {
                words
            };
            // the images the shader binds, each resource's made once per model
            let mut image_at = Vec::with_capacity(bindings.len());
            for (_, b) in &bindings {
                let r = vgf.resources.get(b.mrt_index as usize);
                image_at.push(match r.filter(|r| r.is_image()) {
                    None => None,
                    Some(_) if vgf.constants.iter().any(|c| c.mrt_index == b.mrt_index) => None,
                    Some(r) => Some(match images.iter().position(|im| im.mrt == b.mrt_index) {
                        Some(i) => i,
                        None => {
                            images.push(ImageBinding::new(ctx, b.mrt_index, r)?);
                            images.len() - 1
                        }
                    }),
                });
            }
            // sampled images whose samplers filter take filtering bindings (the pipeline's
            // binding numbers: set 0's, or the folded order)
            let filtered: Vec<u32> = (bindings.iter().zip(&image_at).enumerate())
                .filter(|(_, (_, im))| im.is_some_and(|i| images[i].filters))
                .map(|(k, ((_, b), _))| if several_sets { k as u32 } else { b.binding })
                .collect();
            // SAFETY: `load`'s caller promises its modules' SPIR-V is valid for Vulkan
            let pipeline =
                unsafe { ctx.pipeline_from_spirv_filtering(&module.name, &words, &filtered)? };
            let mut slots = Vec::with_capacity(bindings.len());
            let (mut images_in, mut images_out) = (Vec::new(), Vec::new());
            for ((_, b), image) in bindings.into_iter().zip(image_at) {
                let constant = vgf.constants.iter().find(|c| c.mrt_index == b.mrt_index);
                slots.push(match (constant, image) {
                    (Some(c), _) => Slot::Local(match constant_locals.get(&b.mrt_index) {
                        Some(&at) => at,
                        None => {
                            locals.push(ctx.upload(&c.data)?);
                            constant_locals.insert(b.mrt_index, locals.len() - 1);
                            locals.len() - 1
                        }
                    }),
                    (None, Some(i)) => {
                        let slot = |slots: &[BindingSlot]| {
                            slots.iter().any(|io| io.mrt_index == b.mrt_index)
                        };
                        if slot(&s.inputs) {
                            images_in.push(i);
                        }
                        if slot(&s.outputs) {
                            images_out.push(i);
                        }
                        Slot::Image(i)
                    }
                    (None, None) => Slot::Resource(b.mrt_index),
                });
            }
            let l = pipeline.local_size;
            steps.push(Step {
                label: s.name.clone(),
                global: [0, 1, 2].map(|i| s.dispatch_shape[i].saturating_mul(l[i])),
                bindings: slots,
                pipeline,
                images_in,
                images_out,
            });
        }
        let limit = ctx.limits().max_storage_buffer_binding_size;
        for (i, r) in vgf.resources.iter().enumerate() {
            if let Some(size) = r.byte_size().filter(|&s| s > limit) {
                return Err(problem(
                    format!("resource {i}"),
                    format!("{size} bytes; the device binds at most {limit}"),
                ));
            }
            if r.byte_size().is_none() {
                return Err(problem(
                    format!("resource {i}"),
                    format!(
                        "shape {:?} with format {} has no known size",
                        r.shape, r.vk_format
                    ),
                ));
            }
        }
        let owners = (0..vgf.resources.len())
            .map(|i| {
                let group = vgf.resources[i].alias_group;
                group
                    .and_then(|g| vgf.resources.iter().position(|r| r.alias_group == Some(g)))
                    .unwrap_or(i) as u32
            })
            .collect();
        Ok(VgfModel {
            vgf,
            steps,
            locals,
            owners,
            images,
        })
    }

    /// The model as read.
    pub fn vgf(&self) -> &Vgf {
        &self.vgf
    }

    /// Runs the model on `inputs` (the bytes of each model input, in order) and returns the bytes
    /// of each output.
    pub fn run(&self, ctx: &Context, inputs: &[&[u8]]) -> Result<Vec<Vec<u8>>> {
        let seq = &self.vgf.sequence;
        if inputs.len() != seq.inputs.len() {
            return Err(problem(
                "inputs",
                format!(
                    "the model takes {} inputs, {} were given",
                    seq.inputs.len(),
                    inputs.len()
                ),
            ));
        }
        let size = |mrt: u32| self.vgf.resources[mrt as usize].byte_size().unwrap_or(0);
        // one buffer per resource; an alias group shares the first member's
        let mut buffers: BTreeMap<u32, crate::gpu::DeviceBuffer> = BTreeMap::new();
        let owner = |mrt: u32| self.owners[mrt as usize];
        for (i, (slot, bytes)) in seq.inputs.iter().zip(inputs).enumerate() {
            let want = size(slot.mrt_index);
            if bytes.len() as u64 != want {
                return Err(problem(
                    format!(
                        "input {i} `{}`",
                        seq.input_names.get(i).map_or("", String::as_str)
                    ),
                    format!(
                        "{} bytes given, the tensor {:?} has {want}",
                        bytes.len(),
                        self.vgf.resources[slot.mrt_index as usize].shape
                    ),
                ));
            }
            buffers.insert(owner(slot.mrt_index), ctx.upload(bytes)?);
        }
        let mut rec = ctx.recorder();
        // a buffer per resource a step binds (an image's is its value's memory)
        let bound =
            (self.steps.iter().flat_map(|step| &step.bindings)).filter_map(|slot| match *slot {
                Slot::Resource(mrt) => Some(mrt),
                Slot::Image(i) => Some(self.images[i].mrt),
                Slot::Local(_) => None,
            });
        for mrt in bound {
            if let std::collections::btree_map::Entry::Vacant(e) = buffers.entry(owner(mrt)) {
                e.insert(ctx.storage_buffer(size(mrt).max(4))?);
            }
        }
        // a texture per image resource for this run
        let textures = (self.images.iter())
            .map(|im| {
                let t = im.texture(ctx)?;
                let view = t.create_view(&Default::default());
                Ok((t, view))
            })
            .collect::<Result<Vec<_>>>()?;
        for step in &self.steps {
            for &i in &step.images_in {
                rec.copy_rows(
                    buffers[&owner(self.images[i].mrt)].raw(),
                    &textures[i].0,
                    true,
                );
            }
            let views: Vec<Bound<'_>> = step
                .bindings
                .iter()
                .map(|slot| match *slot {
                    Slot::Resource(mrt) => Bound::Buffer(buffers[&owner(mrt)].raw()),
                    Slot::Local(i) => Bound::Buffer(self.locals[i].raw()),
                    Slot::Image(i) => match &self.images[i].sampler {
                        Some(s) => Bound::Sampled(&textures[i].1, s),
                        None => Bound::Texture(&textures[i].1),
                    },
                })
                .collect();
            rec.set_label(&step.label);
            rec.dispatch(&step.pipeline, &views, &[], step.global)?;
            for &i in &step.images_out {
                rec.copy_rows(
                    buffers[&owner(self.images[i].mrt)].raw(),
                    &textures[i].0,
                    false,
                );
            }
        }
        let mut staging = Vec::new();
        for slot in &seq.outputs {
            let key = owner(slot.mrt_index);
            if !buffers.contains_key(&key) {
                return Err(problem(
                    format!("output resource {}", slot.mrt_index),
                    "no segment writes it",
                ));
            }
            staging.push((
                rec.record_readback(buffers[&key].raw()),
                size(slot.mrt_index),
            ));
        }
        rec.submit_and_wait()?;
        staging
            .into_iter()
            .map(|(buffer, n)| {
                ctx.read_back_with(buffer, |b| b[..b.len().min(n as usize)].to_vec())
            })
            .collect()
    }

    /// Names of the model's inputs.
    pub fn input_names(&self) -> &[String] {
        &self.vgf.sequence.input_names
    }

    /// Names of the model's outputs.
    pub fn output_names(&self) -> &[String] {
        &self.vgf.sequence.output_names
    }

    /// The resources of `slots`.
    fn resources_of<'a>(&'a self, slots: &'a [BindingSlot]) -> impl Iterator<Item = &'a Resource> {
        slots
            .iter()
            .map(|s| &self.vgf.resources[s.mrt_index as usize])
    }

    /// Shapes of the inputs' resources.
    pub fn input_shapes(&self) -> Vec<Vec<i64>> {
        let seq = &self.vgf.sequence;
        self.resources_of(&seq.inputs)
            .map(|r| r.shape.clone())
            .collect()
    }

    /// `VkFormat`s of the inputs' elements.
    pub fn input_formats(&self) -> Vec<u32> {
        let seq = &self.vgf.sequence;
        self.resources_of(&seq.inputs)
            .map(|r| r.vk_format)
            .collect()
    }

    /// `VkFormat`s of the outputs' elements.
    pub fn output_formats(&self) -> Vec<u32> {
        let seq = &self.vgf.sequence;
        self.resources_of(&seq.outputs)
            .map(|r| r.vk_format)
            .collect()
    }

    /// Shapes of the outputs' resources.
    pub fn output_shapes(&self) -> Vec<Vec<i64>> {
        let seq = &self.vgf.sequence;
        self.resources_of(&seq.outputs)
            .map(|r| r.shape.clone())
            .collect()
    }
}
