//! A TOSA graph into a [`Vgf`]: partitions become segments, values crossing them become
//! resources, shaders are compiled ahead of time.
//!
//! With `compute_only` every ML partition is lowered to fpshader's compute shaders (one segment
//! per operation), so the file runs on any Vulkan GPU. Without it the ML partitions would be
//! `SPV_ARM_graph` segments, which fpshader does not emit yet: [`ConvertError::GraphSegments`].

use std::collections::BTreeMap;

use crate::Compiler;

use super::custom_op;
use super::format::{
    BindingSlot, Constant, DESCRIPTOR_TYPE_STORAGE_BUFFER, DESCRIPTOR_TYPE_TENSOR_ARM,
    DescriptorSetInfo, FormatVersion, ModelSequence, Module, ModuleCode, ModuleType, Resource,
    ResourceCategory, Segment, Vgf,
};
use super::lower::{self, LOWERED_LOCAL_SIZE};
use super::materialize::{self, MaterializeError, Reading};
use super::partition::{self, Kind};
use super::tosa::{Attr, Graph, ValueId, spirv_write};

/// How to convert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvertOptions {
    /// Lower ML partitions to compute shaders instead of graph segments.
    pub compute_only: bool,
    /// The header version to write.
    pub version: FormatVersion,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            compute_only: true,
            version: FormatVersion::V0_4_3,
        }
    }
}

/// Why a graph cannot be converted (beyond attribute and shader errors).
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// An ML partition that cannot be written as a graph segment.
    #[error("{0} (--compute-only lowers ML partitions to compute shaders instead)")]
    Graph(spirv_write::SpirvWriteError),
    /// A shader or a lowering failed.
    #[error(transparent)]
    Materialize(#[from] MaterializeError),
    /// A constant whose values do not fill its type.
    #[error("constant `{value}`: {problem}")]
    Constant {
        /// The value's name.
        value: String,
        /// What is wrong.
        problem: String,
    },
    /// Too many invocations for one dispatch.
    #[error("`{op}` needs {groups} workgroups in one dimension (at most 65535)")]
    Dispatch {
        /// The op.
        op: String,
        /// Workgroups asked for.
        groups: u64,
    },
}

/// How a segment sees a value: a storage buffer (compute) or a tensor (graph).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum View {
    Buffer,
    Tensor,
}

struct Builder<'g> {
    graph: &'g Graph,
    compiler: &'g Compiler,
    compute_only: bool,
    vgf: Vgf,
    /// The resource of each value in each view it is seen in.
    resource_of: BTreeMap<(ValueId, View), u32>,
    /// The VGF constant of each value a graph reads as a graph constant.
    constant_of: BTreeMap<ValueId, u32>,
    /// Segments (with their modules) that write constants, run before everything else.
    constant_segments: Vec<(Module, Segment)>,
    /// Readings worth telling the user (see [`Converted::notes`]).
    notes: Vec<String>,
    /// The OUTPUT resource of each model input the model also returns.
    passed_out: BTreeMap<ValueId, u32>,
}

/// A converted model and what the conversion wants the user told.
#[derive(Debug)]
pub struct Converted {
    /// The model.
    pub vgf: Vgf,
    /// One line per custom op whose `workgroup_sizes` was not read as its declared local size
    /// ([`materialize::Reading`]), for stderr.
    pub notes: Vec<String>,
}

impl Builder<'_> {
    fn resource(&mut self, v: ValueId) -> Result<u32, ConvertError> {
        self.view(v, View::Buffer)
    }

    /// The next free alias group.
    fn next_alias_group(&self) -> u32 {
        (self.vgf.resources.iter())
            .filter_map(|r| r.alias_group)
            .max()
            .map_or(0, |g| g + 1)
    }

    /// The model input `v`'s resource `input` joins an alias group of its own now, for the
    /// OUTPUT resource that returns it (Arm's converter numbers these groups first).
    fn group_passed_out(&mut self, input: u32) {
        if self.vgf.resources[input as usize].alias_group.is_none() {
            let next = self.next_alias_group();
            self.vgf.resources[input as usize].alias_group = Some(next);
        }
    }

    /// The OUTPUT resource of model input `v` returned as a model output, as Arm's converter
    /// writes it: a tensor in the input's alias group (one memory, nothing copied).
    fn passed_out(&mut self, v: ValueId, input: u32) -> u32 {
        if let Some(&r) = self.passed_out.get(&v) {
            return r;
        }
        self.group_passed_out(input);
        let of = &self.vgf.resources[input as usize];
        let resource = Resource {
            vk_descriptor_type: Some(DESCRIPTOR_TYPE_TENSOR_ARM),
            category: ResourceCategory::Output,
            ..of.clone()
        };
        let index = self.vgf.resources.len() as u32;
        self.vgf.resources.push(resource);
        self.passed_out.insert(v, index);
        index
    }

    /// The resource of `v` seen as `view`; a value seen both ways gets an entry per view,
    /// the two sharing an alias group (one memory, as Arm's converter writes it).
    fn view(&mut self, v: ValueId, view: View) -> Result<u32, ConvertError> {
        if let Some(&r) = self.resource_of.get(&(v, view)) {
            return Ok(r);
        }
        let graph = self.graph;
        let ty = &graph.values[v].ty;
        let category = if graph.inputs.contains(&v) {
            ResourceCategory::Input
        } else if graph.outputs.contains(&v) {
            ResourceCategory::Output
        } else {
            ResourceCategory::Intermediate
        };
        let index = self.vgf.resources.len() as u32;
        let constant = graph
            .producer(v)
            .map(|p| &graph.ops[p])
            .filter(|op| op.kind() == "const");
        if let Some(op) = constant.filter(|_| self.compute_only) {
            // VGF constants feed graph segments only (Arm's runtime resolves a compute
            // segment's bindings among inputs, outputs and intermediates): a compute-only file
            // writes each constant into an intermediate with a shader that holds its bits
            // (with graph segments, an ML partition before the shader passes it on)
            let name = &graph.values[v].name;
            let data = constant_bytes(name, op.attrs.get("values"), ty)?;
            self.constant_segment(name, &data, index)?;
        }
        let other = match view {
            View::Buffer => View::Tensor,
            View::Tensor => View::Buffer,
        };
        let alias_group = match self.resource_of.get(&(v, other)) {
            Some(&r) => {
                let next = self.next_alias_group();
                let group = *self.vgf.resources[r as usize]
                    .alias_group
                    .get_or_insert(next);
                Some(group)
            }
            None => None,
        };
        self.vgf.resources.push(Resource {
            vk_descriptor_type: Some(match view {
                View::Buffer => DESCRIPTOR_TYPE_STORAGE_BUFFER,
                View::Tensor => DESCRIPTOR_TYPE_TENSOR_ARM,
            }),
            vk_format: ty.elem.vk_format(),
            category,
            shape: ty.shape.clone(),
            strides: Vec::new(),
            sampler: None,
            alias_group,
        });
        self.resource_of.insert((v, view), index);
        Ok(index)
    }

    /// The VGF constant (and its CONSTANT resource) holding the data of value `v`.
    fn graph_constant(&mut self, v: ValueId) -> Result<u32, ConvertError> {
        if let Some(&c) = self.constant_of.get(&v) {
            return Ok(c);
        }
        let graph = self.graph;
        let ty = &graph.values[v].ty;
        let values = graph
            .producer(v)
            .and_then(|p| graph.ops[p].attrs.get("values"));
        let data = constant_bytes(&graph.values[v].name, values, ty)?;
        let mrt_index = self.vgf.resources.len() as u32;
        self.vgf.resources.push(Resource {
            vk_descriptor_type: None,
            vk_format: ty.elem.vk_format(),
            category: ResourceCategory::Constant,
            shape: ty.shape.clone(),
            strides: Vec::new(),
            sampler: None,
            alias_group: None,
        });
        let c = self.vgf.constants.len() as u32;
        self.vgf.constants.push(Constant {
            mrt_index,
            sparsity_dimension: -1,
            data,
        });
        self.constant_of.insert(v, c);
        Ok(c)
    }

    /// An ML partition as one graph segment, its module `written` (named `name`).
    fn graph_segment(
        &mut self,
        name: String,
        written: spirv_write::GraphSpirv,
        part: &partition::Partition,
    ) -> Result<(), ConvertError> {
        let mut bindings = Vec::new();
        for (binding, &v) in part.inputs.iter().chain(&part.outputs).enumerate() {
            bindings.push(BindingSlot {
                binding: binding as u32,
                mrt_index: self.view(v, View::Tensor)?,
            });
        }
        let constants = written
            .constants
            .iter()
            .map(|&v| self.graph_constant(v))
            .collect::<Result<_, _>>()?;
        let inputs = self.slots(&part.inputs, View::Tensor)?;
        let outputs = self.slots(&part.outputs, View::Tensor)?;
        self.vgf.sequence.segments.push(Segment {
            ty: ModuleType::Graph,
            name: String::new(),
            module_index: self.vgf.modules.len() as u32,
            set_infos: sets_list(BTreeMap::from([(0, bindings)])),
            inputs,
            outputs,
            constants,
            dispatch_shape: vec![0, 0, 0],
            push_constant_ranges: Vec::new(),
        });
        self.vgf.modules.push(Module {
            ty: ModuleType::Graph,
            name: name.clone(),
            entry_point: name,
            code: ModuleCode::Spirv(written.words),
        });
        Ok(())
    }

    /// Segment input or output slots of `values` seen as `view`, each resource once (a value
    /// an op takes twice is one input of its segment, as in Arm's files).
    fn slots(&mut self, values: &[ValueId], view: View) -> Result<Vec<BindingSlot>, ConvertError> {
        let viewed: Vec<(ValueId, View)> = values.iter().map(|&v| (v, view)).collect();
        self.slots_viewed(&viewed)
    }

    /// [`Builder::slots`] with a view per value.
    fn slots_viewed(
        &mut self,
        values: &[(ValueId, View)],
    ) -> Result<Vec<BindingSlot>, ConvertError> {
        let mut slots: Vec<BindingSlot> = Vec::with_capacity(values.len());
        for &(v, view) in values {
            let mrt_index = self.view(v, view)?;
            if slots.iter().all(|s| s.mrt_index != mrt_index) {
                slots.push(BindingSlot {
                    binding: mrt_index,
                    mrt_index,
                });
            }
        }
        Ok(slots)
    }

    /// SPIR-V of a generated shader ([`lower`]).
    fn compile_lowered(&self, name: &str, glsl: &str) -> Result<Vec<u32>, ConvertError> {
        self.compiler
            .compile_str(name, glsl, crate::OptionSet::default())
            .map_err(|e| {
                ConvertError::from(MaterializeError::Compile {
                    op: name.to_string(),
                    source: Box::new(e),
                })
            })
    }

    /// A segment writing `data` into resource `mrt_index`.
    fn constant_segment(
        &mut self,
        name: &str,
        data: &[u8],
        mrt_index: u32,
    ) -> Result<(), ConvertError> {
        let words = crate::meta::le_words(data).ok_or_else(|| ConvertError::Constant {
            value: name.to_string(),
            problem: format!(
                "{} bytes: a constant a compute shader reads must be whole 32-bit words",
                data.len()
            ),
        })?;
        let lowered = lower::constant(&words);
        let module_name = format!("constant_{}", self.constant_segments.len());
        let code = self.compile_lowered(&module_name, &lowered.glsl)?;
        let slot = BindingSlot {
            binding: 0,
            mrt_index,
        };
        let segment = Segment {
            ty: ModuleType::Compute,
            name: String::new(),
            module_index: 0,
            set_infos: sets_list(BTreeMap::from([(0, vec![slot])])),
            inputs: Vec::new(),
            outputs: vec![BindingSlot {
                binding: mrt_index,
                mrt_index,
            }],
            constants: Vec::new(),
            dispatch_shape: vec![
                groups(name, u64::from(lowered.invocations), LOWERED_LOCAL_SIZE)?,
                1,
                1,
            ],
            push_constant_ranges: Vec::new(),
        };
        let module = Module {
            ty: ModuleType::Compute,
            name: module_name,
            entry_point: "main".into(),
            code: ModuleCode::Spirv(code),
        };
        self.constant_segments.push((module, segment));
        Ok(())
    }
}

fn constant_bytes(
    name: &str,
    values: Option<&Attr>,
    ty: &super::tosa::TensorType,
) -> Result<Vec<u8>, ConvertError> {
    let err = |problem: String| ConvertError::Constant {
        value: name.to_string(),
        problem,
    };
    let Some(Attr::Dense(values, _)) = values else {
        return Err(err("expected `values = dense<…>`".into()));
    };
    ty.bytes(values).ok_or_else(|| {
        err(format!(
            "{} values for {} elements",
            values.len(),
            ty.elements()
        ))
    })
}

fn groups(op: &str, invocations: u64, local: u32) -> Result<u32, ConvertError> {
    let g = invocations.div_ceil(u64::from(local)).max(1);
    u32::try_from(g)
        .ok()
        .filter(|&g| g <= 65535)
        .ok_or(ConvertError::Dispatch {
            op: op.to_string(),
            groups: g,
        })
}

/// The workgroup count of a shader op: the explicit one, else one invocation per element of
/// its first result (innermost dimension in x, the next in y, the rest in z).
fn shader_dispatch(
    op: &str,
    attrs: &custom_op::ShaderAttrs,
    out: &[i64],
) -> Result<Vec<u32>, ConvertError> {
    if let Some(count) = attrs.workgroup_count {
        return Ok(count.to_vec());
    }
    let dims: Vec<u64> = out.iter().rev().map(|&d| d.max(1) as u64).collect();
    let global = [
        dims.first().copied().unwrap_or(1),
        dims.get(1).copied().unwrap_or(1),
        dims.iter().skip(2).product::<u64>().max(1),
    ];
    (0..3)
        .map(|i| groups(op, global[i], attrs.workgroup_size[i]))
        .collect()
}

/// How a custom shader op sees its operands and results: a tensor where the attributes bind a
/// `VK_DESCRIPTOR_TYPE_TENSOR_ARM` (one resource with the graph's view, as Arm's converter
/// writes it), else a buffer.
fn shader_views(attrs: &custom_op::ShaderAttrs) -> (Vec<View>, Vec<View>) {
    let view = |r: &custom_op::ResourceAttr| {
        if r.descriptor_type == DESCRIPTOR_TYPE_TENSOR_ARM {
            View::Tensor
        } else {
            View::Buffer
        }
    };
    (
        attrs.inputs.iter().map(view).collect(),
        attrs.outputs.iter().map(view).collect(),
    )
}

/// The parsed attributes of shader op `op` (`None` where they do not parse: the op's own
/// conversion reports that).
fn shader_attrs(op: &super::tosa::Op) -> Option<custom_op::ShaderAttrs> {
    let name = op.str_attr("operator_name").unwrap_or("custom");
    let json = op.str_attr("implementation_attrs").unwrap_or("");
    custom_op::parse(name, json, op.operands.len(), op.results.len()).ok()
}

/// Converts `graph`; `compiler` compiles GLSL and HLSL.
pub fn convert(
    graph: &Graph,
    compiler: &Compiler,
    options: ConvertOptions,
) -> Result<Converted, super::VgfError> {
    let partitions = partition::partition(graph);
    let mut b = Builder {
        graph,
        compiler,
        compute_only: options.compute_only,
        constant_of: BTreeMap::new(),
        constant_segments: Vec::new(),
        vgf: Vgf {
            version: options.version,
            vk_header_version: 0,
            modules: Vec::new(),
            sequence: ModelSequence::default(),
            resources: Vec::new(),
            constants: Vec::new(),
        },
        resource_of: BTreeMap::new(),
        notes: Vec::new(),
        passed_out: BTreeMap::new(),
    };
    // the view a model input or output has in the partition that first reads or writes it
    let first_view = |v: ValueId| {
        partitions
            .iter()
            .find(|p| p.inputs.contains(&v) || p.outputs.contains(&v))
            .map_or(View::Buffer, |p| {
                if p.kind == Kind::Ml {
                    return if options.compute_only {
                        View::Buffer
                    } else {
                        View::Tensor
                    };
                }
                // a shader partition: as the shader binds it
                let shader = p
                    .ops
                    .iter()
                    .map(|&o| &graph.ops[o])
                    .find(|op| op.is_shader());
                shader
                    .and_then(|op| {
                        let (ins, outs) = shader_views(&shader_attrs(op)?);
                        let at = |values: &[ValueId], views: &[View]| {
                            values
                                .iter()
                                .position(|&x| x == v)
                                .and_then(|i| views.get(i).copied())
                        };
                        at(&op.operands, &ins).or_else(|| at(&op.results, &outs))
                    })
                    .unwrap_or(View::Buffer)
            })
    };
    // the graph modules first: their constants lead the resource table, as in Arm's files
    let mut graphs = BTreeMap::new();
    for (p, part) in partitions.iter().enumerate() {
        if part.kind == Kind::Ml && !options.compute_only {
            let name = format!("graph_partition_{p}");
            let written = spirv_write::write(graph, &part.ops, &part.inputs, &part.outputs, &name)
                .map_err(ConvertError::Graph)?;
            for &v in &written.constants {
                b.graph_constant(v)?;
            }
            graphs.insert(p, (name, written));
        }
    }
    // then the model inputs, so that they are resources 0, 1, … after the constants
    for &v in &graph.inputs {
        let r = b.view(v, first_view(v))?;
        if graph.outputs.contains(&v) {
            b.group_passed_out(r);
        }
    }
    for (p, part) in partitions.iter().enumerate() {
        if let Some((name, written)) = graphs.remove(&p) {
            b.graph_segment(name, written, part)?;
            continue;
        }
        for &o in &part.ops {
            let op = &graph.ops[o];
            if matches!(op.kind(), "const" | "const_shape") {
                continue;
            }
            let segment = b.vgf.sequence.segments.len();
            let (module, set_infos, (ins, outs), dispatch) = if op.is_shader() {
                let name = op.str_attr("operator_name").unwrap_or("custom").to_string();
                let json = op.str_attr("implementation_attrs").unwrap_or("");
                let attrs = custom_op::parse(&name, json, op.operands.len(), op.results.len())?;
                let made =
                    materialize::shader(compiler, &name, &attrs).map_err(ConvertError::from)?;
                b.notes
                    .extend(made.reading.note(&name, attrs.workgroup_size));
                let mut sets: BTreeMap<u32, Vec<BindingSlot>> = BTreeMap::new();
                let (in_views, out_views) = shader_views(&attrs);
                let viewed_in: Vec<(ValueId, View)> =
                    op.operands.iter().copied().zip(in_views).collect();
                let viewed_out: Vec<(ValueId, View)> =
                    op.results.iter().copied().zip(out_views).collect();
                for (res, &(v, view)) in attrs
                    .inputs
                    .iter()
                    .zip(&viewed_in)
                    .chain(attrs.outputs.iter().zip(&viewed_out))
                {
                    // resource i is operand i (Arm's converter binds the i-th deduplicated input)
                    let mrt_index = b.view(v, view)?;
                    sets.entry(res.set).or_default().push(BindingSlot {
                        binding: res.binding,
                        mrt_index,
                    });
                }
                let out_shape = &graph.values[op.results[0]].ty.shape;
                let dispatch = match made.reading {
                    Reading::DispatchCount { .. } => attrs.workgroup_size.to_vec(),
                    Reading::LocalSize { .. } => shader_dispatch(&name, &attrs, out_shape)?,
                };
                let module = Module {
                    ty: ModuleType::Compute,
                    name,
                    entry_point: attrs.entry_point.clone(),
                    code: made.words.map_or(ModuleCode::None, ModuleCode::Spirv),
                };
                (module, sets, (viewed_in, viewed_out), dispatch)
            } else {
                let lowered = lower::lower(graph, op)
                    .map_err(|e| ConvertError::from(MaterializeError::from(e)))?;
                let name = format!("partition_{p}_{}_{}", op.kind(), segment);
                let words = b.compile_lowered(&name, &lowered.glsl)?;
                let operands: Vec<ValueId> =
                    lowered.operands.iter().map(|&i| op.operands[i]).collect();
                let mut bindings = Vec::new();
                for (binding, &v) in operands.iter().chain(&op.results).enumerate() {
                    bindings.push(BindingSlot {
                        binding: binding as u32,
                        mrt_index: b.resource(v)?,
                    });
                }
                let dispatch = vec![
                    groups(&name, u64::from(lowered.invocations), LOWERED_LOCAL_SIZE)?,
                    1,
                    1,
                ];
                let module = Module {
                    ty: ModuleType::Compute,
                    name,
                    entry_point: "main".into(),
                    code: ModuleCode::Spirv(words),
                };
                let buffers = |values: &[ValueId]| -> Vec<(ValueId, View)> {
                    values.iter().map(|&v| (v, View::Buffer)).collect()
                };
                let viewed = (buffers(&operands), buffers(&op.results));
                (module, BTreeMap::from([(0, bindings)]), viewed, dispatch)
            };
            let inputs = b.slots_viewed(&ins)?;
            let outputs = b.slots_viewed(&outs)?;
            b.vgf.sequence.segments.push(Segment {
                ty: ModuleType::Compute,
                name: format!("compute_segment_{segment}"),
                module_index: b.vgf.modules.len() as u32,
                set_infos: sets_list(set_infos),
                inputs,
                outputs,
                constants: Vec::new(),
                dispatch_shape: dispatch,
                push_constant_ranges: Vec::new(),
            });
            b.vgf.modules.push(module);
        }
    }
    // bindings numbered across inputs and outputs: the scenario runner binds by this number
    let mut interface = Vec::with_capacity(graph.inputs.len() + graph.outputs.len());
    for (i, &v) in graph.inputs.iter().chain(&graph.outputs).enumerate() {
        let mut mrt_index = b.view(v, first_view(v))?;
        if i >= graph.inputs.len() && graph.inputs.contains(&v) {
            mrt_index = b.passed_out(v, mrt_index);
        }
        interface.push(BindingSlot {
            binding: i as u32,
            mrt_index,
        });
    }
    b.vgf.sequence.outputs = interface.split_off(graph.inputs.len());
    b.vgf.sequence.inputs = interface;
    // the constants' segments run first; names follow the final order
    let constants = std::mem::take(&mut b.constant_segments);
    for s in &mut b.vgf.sequence.segments {
        s.module_index += constants.len() as u32;
    }
    let (modules, segments): (Vec<_>, Vec<_>) = constants
        .into_iter()
        .enumerate()
        .map(|(i, (m, mut s))| {
            s.module_index = i as u32;
            (m, s)
        })
        .unzip();
    b.vgf.modules.splice(0..0, modules);
    b.vgf.sequence.segments.splice(0..0, segments);
    // named as Arm's converter names them: a count per kind
    let mut counts = [0usize; 2];
    for s in &mut b.vgf.sequence.segments {
        let (kind, n) = match s.ty {
            ModuleType::Compute => ("compute", &mut counts[0]),
            ModuleType::Graph => ("graph", &mut counts[1]),
        };
        s.name = format!("{kind}_segment_{n}");
        *n += 1;
    }
    b.vgf.sequence.input_names = graph.input_names.clone();
    b.vgf.sequence.output_names = graph.output_names.clone();
    let outputs: Vec<u32> = b.vgf.sequence.outputs.iter().map(|s| s.mrt_index).collect();
    outputs_last(&mut b.vgf, &outputs);
    Ok(Converted {
        vgf: b.vgf,
        notes: b.notes,
    })
}

/// Renumbers the resources so that the model outputs' come after all others, in output order,
/// as Arm's converter numbers them. Descriptor bindings stay (they name the modules'
/// declarations); a segment's input and output slots, numbered by resource, follow.
fn outputs_last(vgf: &mut Vgf, outputs: &[u32]) {
    let n = vgf.resources.len() as u32;
    let mut order: Vec<u32> = (0..n).filter(|r| !outputs.contains(r)).collect();
    for &r in outputs {
        if !order.contains(&r) {
            order.push(r);
        }
    }
    let mut new_of = vec![0u32; n as usize];
    for (new, &old) in order.iter().enumerate() {
        new_of[old as usize] = new as u32;
    }
    vgf.resources = order
        .iter()
        .map(|&old| vgf.resources[old as usize].clone())
        .collect();
    let seq = &mut vgf.sequence;
    for s in &mut seq.segments {
        for slot in s.inputs.iter_mut().chain(s.outputs.iter_mut()) {
            slot.mrt_index = new_of[slot.mrt_index as usize];
            slot.binding = slot.mrt_index;
        }
    }
    let sets = (seq.segments.iter_mut())
        .flat_map(|s| s.set_infos.iter_mut().flat_map(|d| d.bindings.iter_mut()));
    for slot in seq
        .inputs
        .iter_mut()
        .chain(seq.outputs.iter_mut())
        .chain(sets)
    {
        slot.mrt_index = new_of[slot.mrt_index as usize];
    }
    for c in &mut vgf.constants {
        c.mrt_index = new_of[c.mrt_index as usize];
    }
}

fn sets_list(sets: BTreeMap<u32, Vec<BindingSlot>>) -> Vec<DescriptorSetInfo> {
    sets.into_iter()
        .map(|(set, bindings)| DescriptorSetInfo {
            set_index: Some(set),
            bindings,
        })
        .collect()
}
